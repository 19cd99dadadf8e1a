"""What the engine's look at pull requests reads: the chains of the open ones only (a merged one costs nothing),
an unchanged chain not again, and a chain that grew only its new commits, with the same events a whole read
gives."""

from __future__ import annotations

from git_balanced import process
from git_balanced.forge import prs, watch
from git_balanced.forge.events import Looked, record, ref_of
from git_balanced.forge.where import open_forge
from git_balanced.lead import open_lead, settings_at
from git_balanced.state import refs
from git_balanced.state.events import Event
from git_balanced.vocab import ChecksState
from tests.forge.conftest import Project
from tests.support.builders import commit
from tests.support.cli import balanced


def _read(repo: object, n: int) -> object:
    return process.part(prs._Chains).get(f"{repo.common_dir}:{ref_of(n)}")  # type: ignore[attr-defined]


def test_only_open_pull_requests_are_read_and_an_unchanged_chain_not_again(project: Project) -> None:
    repo, forge = project.repo, project.forge
    assert balanced(repo, "ship", "--pr", "--yes").code == 0
    lead = open_lead(str(repo))
    forge.merge(1)
    watch.look(lead, settings_at(lead.repo, lead.branch), open_forge(lead, "origin"), prs.of_lead(lead)[0])
    commit(repo, {"more.py": "x = 2\n"}, "More")
    assert balanced(repo, "ship", "--pr", "--yes").code == 0
    process.forget()

    opened = prs.of_lead(lead, open_only=True)
    assert [p.number for p in opened] == [2]
    assert _read(lead.repo, 1) is None, "the merged one's chain was not read"
    first = opened[0].events
    assert prs.of_lead(lead, open_only=True)[0].events is first, "an unchanged chain is not read again"

    looked = Looked(head_sha="0" * 40, checks=ChecksState.PASSING, decision="no review yet", conflicts=False)
    record(lead.repo, 2, looked, "Pull request #2: checks passing")
    grown = prs.of_lead(lead, open_only=True)[0].events
    whole = tuple(sorted(refs.events_of(lead.repo, ref_of(2)), key=Event.sort_key))
    assert grown == whole and len(grown) == len(first) + 1 and grown[:-1] == first
    assert [p.number for p in prs.of_lead(lead)] == [1, 2], "review's list still has the merged one"
