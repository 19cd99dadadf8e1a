"""A pull request that conflicts with its base, fixed on an SSH machine: the base moved on the forge, the engine
sends the conflict to a worker placed on a real sshd machine (`placement = "single"`), which merges the base's
commit there, resolves it and commits; the merge lands on the lead's branch, `ship` pushes it, and the forge
sees a pull request that merges."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.forge.conftest import SETTINGS, Project
from tests.forge.test_fixing import FIXER
from tests.support.builders import commit, git
from tests.support.cli import balanced
from tests.support.forge import Run
from tests.support.sshd import Machines, sshd_machines, wire_lead

pytestmark = pytest.mark.sshd


@pytest.fixture
def machines(tmp_path: Path) -> Iterator[Machines]:
    with sshd_machines(tmp_path, ["alpha"]) as ms:
        yield ms


def test_a_conflict_with_the_base_is_merged_by_a_worker_on_an_ssh_machine(project: Project,
                                                                           machines: Machines) -> None:
    repo, forge = project.repo, project.forge
    (repo / "fix.sh").write_text(FIXER.format(bare=project.bare))
    settings = SETTINGS.replace('agent = "shell"\n', 'agent = "shell"\nplacement = "single"\nmachine = "alpha"\n')
    git(repo, "add", "fix.sh")
    wire_lead(repo, machines, settings + 'fix = true\nrun = "sh fix.sh"\n', tick=["alpha"])
    forge.ci = lambda forge, sha: [Run("tests", "success")]
    assert balanced(repo, "ship", "--pr", "--yes").code == 0
    other = repo.parent / "other"
    git(repo.parent, "clone", "-q", str(project.bare), str(other))
    base = commit(other, {"widget.py": "def widget():\n    return 3\n"}, "The base's own widget")
    git(other, "push", "-q", "origin", "main")

    ran = balanced(repo, "engine", "--until-idle")
    assert ran.code == 0, ran.err
    events = git(repo, "log", "--format=%s", "refs/balanced/prs/1").splitlines()
    assert any(e.startswith("Pull request #1: conflict with the base, sent to its session (plan ") for e in events)
    shown = balanced(repo, "show", "balanced/fix-pr-1").out
    assert "landed, attempt 1 · alpha · shell" in shown, shown
    made = git(repo, "log", "--merges", f"--grep=Merge main ({base[:7]})", "--format=%P%n%B", "feature")
    assert base in made and "Conflicts left to resolve: widget.py." in made, "the merge made here, its conflicts in"
    assert events[0].startswith("Pull request #1: fixed by its session, ready to push ("), events
    git(repo, "merge-base", "--is-ancestor", base, "feature")  # the merge, made on alpha, is on the branch
    shipped = balanced(repo, "ship", "--yes")
    assert shipped.code == 0, shipped.err
    assert forge.answer("GET", "/repos/ada/widgets/pulls/1", {}, {})[1]["mergeable_state"] == "clean", \
        "the forge sees a pull request that merges"
