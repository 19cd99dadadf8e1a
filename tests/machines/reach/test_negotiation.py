"""A worker's branch fetched back from a machine's copy names to it only the lead's branch's commits (and the
branch's own earlier ones), not every ref's: real repositories, git's protocol 0 as over SSH, its packets traced."""

from __future__ import annotations

from pathlib import Path

from git_balanced.git import Repo
from git_balanced.machines.reach.hosts import negotiation_tips
from tests.support.builders import commit, git, make_repo

CHAIN = 150  # commits of state the machine's copy never had, newer than the base


def _lead_and_copy(tmp_path: Path) -> tuple[Repo, Path, str]:
    """A lead whose state chain is newer than its branch's tip, and a machine-like copy holding the branch with
    one worker's commit on `balanced/p`: (the lead's Repo, the copy, the worker's tip)."""
    lead = make_repo(tmp_path / "lead", {"a.txt": "a\n"})
    git(lead, "config", "protocol.version", "0")  # as over SSH, where sshd does not pass GIT_PROTOCOL on
    stream = "".join(f"commit refs/balanced/jobs/j\ncommitter s <s@x> {2_000_000_000 + i} +0000\ndata 2\ne\n"
                     f"M 100644 inline event.json\ndata 2\n{i % 10}\n\n" for i in range(CHAIN))
    git(lead, "fast-import", "--quiet", input=stream)
    copy = tmp_path / "copy"
    git(tmp_path, "clone", "-q", "--no-local", str(lead), str(copy))
    git(copy, "checkout", "-q", "-b", "balanced/p")
    return Repo.discover(lead), copy, commit(copy, {"b.txt": "b\n"}, "the worker's work")


def _haves(repo: Repo, copy: Path, trace: Path, negotiate: tuple[str, ...]) -> int:
    """How many commits the lead named to the copy while fetching its branch."""
    res = repo.fetch(str(copy), ["+refs/heads/balanced/p:refs/remotes/m/balanced/p"], fetch_head=False,
                     negotiate=negotiate, env={"GIT_TRACE_PACKET": str(trace)})
    assert res.code == 0, res.err
    return sum(1 for line in trace.read_text().splitlines() if "fetch> have " in line)


def test_a_fetch_back_names_the_leads_branch_not_every_refs_history(tmp_path: Path) -> None:
    repo, copy, tip = _lead_and_copy(tmp_path)
    tips = negotiation_tips(repo, "refs/heads/main", "refs/remotes/m/balanced/p")
    assert tips == ("refs/heads/main",)  # no earlier attempt fetched back yet
    assert _haves(repo, copy, tmp_path / "narrow", tips) <= 2
    assert repo.read_ref("refs/remotes/m/balanced/p") == tip
    assert negotiation_tips(repo, "refs/heads/main", "refs/remotes/m/balanced/p") == (
        "refs/heads/main", "refs/remotes/m/balanced/p")  # a retry's fetch names what its attempt left too
    assert negotiation_tips(repo, "refs/heads/gone", "refs/remotes/m/other") == ()  # git's default then
    git(Path(repo.root), "update-ref", "-d", "refs/remotes/m/balanced/p")
    git(copy, "commit", "-q", "--amend", "-m", "the worker's work, again")  # a commit the lead lacks
    assert _haves(repo, copy, tmp_path / "wide", ()) >= CHAIN  # git's default: every ref's commits
