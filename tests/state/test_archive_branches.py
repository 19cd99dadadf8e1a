"""Archiving a plan removes the branches its landed jobs left in the lead, merged into it, in the archive's one
transaction, each recorded with its commit; a branch with commits the lead lacks, one checked out, one named as a
lead's branch, one a live job uses, stays, and gc says why."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from git_balanced import jobs
from git_balanced.git import Repo
from git_balanced.state import archive, refs
from git_balanced.state.archive_branches import BRANCHES_FILE
from git_balanced.state.archived import tree_entries
from git_balanced.state.events import MODE_FILE, new_id
from tests.support.builders import git, make_repo
from tests.support.cli import balanced


def _commit(repo: Repo, on: str, name: str, parents: list[str]) -> str:
    """A commit adding the file `name` to the tree of `on`, with `parents`."""
    entries = [(p.decode(), m, s.decode()) for p, (m, s) in tree_entries(repo, repo.tree_of(on)).items()]
    entries.append((name, MODE_FILE, repo.write_blob(f"{name}\n".encode())))
    return repo.write_commit(repo.write_tree(sorted(entries)), parents, f"add {name}\n")


def _land(repo: Repo, branch: str, *, merge: bool = True, lead: str = "main") -> str:
    """The branch `branch` made with one commit on `lead`, then merged into it (unless not `merge`); its tip."""
    base = repo.rev_parse(f"refs/heads/{lead}") or ""
    tip = _commit(repo, base, branch.replace("/", "-") + ".txt", [base])
    assert repo.cas_ref(f"refs/heads/{branch}", tip, None)
    if merge:
        merged = repo.write_commit(repo.tree_of(tip), [base, tip], f"Merge {branch}\n")
        assert repo.cas_ref(f"refs/heads/{lead}", merged, base)
    return tip


def _plan(repo: Repo, branches: list[str], lead: str = "main", **fields: str) -> tuple[str, dict[str, str]]:
    """A plan done, each of its pieces a job landed in `lead` from its branch; the jobs' ids by branch."""
    pid = new_id()
    ref = refs.ref_for("plans", pid)
    refs.append(repo, ref, "created", "Plan", {"id": pid, "task": "t", "lead": lead, "pieces": []}, state="created")
    made = {}
    for i, branch in enumerate(branches):
        jid = jobs.place(repo, {"plan": pid, "piece": f"p{i}", "task": "t", "agent": "shell", "run": "true",
                                "machine": "local", "branch": branch, "lead": lead, **fields})
        refs.append(repo, refs.ref_for("jobs", jid), "landed", f"p{i}: landed",
                    {"landed": repo.rev_parse(f"refs/heads/{lead}"), "landed_in": lead}, state="landed")
        made[branch] = jid
    refs.append(repo, ref, "done", "Plan done", {"summary": "landed"}, state="done")
    return pid, made


def _recorded(repo: Repo, pid: str) -> dict[str, str]:
    """The branches the plan's archive lists as removed, with their commits."""
    data = git(repo.root, "show", f"refs/balanced/archive/{pid}:{BRANCHES_FILE}")
    return {row["ref"]: row["sha"] for row in map(json.loads, data.splitlines())}


@pytest.fixture()
def lead(tmp_path: Path) -> Repo:
    return Repo.discover(make_repo(tmp_path / "lead"))


def test_merged_branches_go_with_their_archive_and_the_others_stay_with_why(lead: Repo, tmp_path: Path) -> None:
    repo = lead
    merged = _land(repo, "balanced/merged")
    _land(repo, "balanced/unmerged")
    landed = repo.rev_parse("refs/heads/balanced/unmerged") or ""
    extra = _commit(repo, landed, "more.txt", [landed])
    assert repo.cas_ref("refs/heads/balanced/unmerged", extra, landed)  # a commit after landing, the lead lacks it
    _land(repo, "balanced/moved")
    main_tip = repo.rev_parse("refs/heads/main") or ""
    assert repo.cas_ref("refs/heads/balanced/moved", main_tip, repo.rev_parse("refs/heads/balanced/moved"))
    # moved since landing, to the lead's tip: still merged
    _land(repo, "balanced/worktree")
    git(repo.root, "worktree", "add", "-q", str(tmp_path / "wt"), "balanced/worktree")
    _land(repo, "balanced/release")  # named as the lead branch of another, live, plan
    git(repo.root, "branch", "-q", "balanced/release-lead", "main")
    _land(repo, "balanced/shared")  # a live job works on it too
    pid, made = _plan(repo, ["balanced/merged", "balanced/unmerged", "balanced/moved", "balanced/worktree",
                             "balanced/release", "balanced/shared", "main"])
    jobs.place(repo, {"plan": new_id(), "piece": "q", "task": "t", "agent": "shell", "run": "true",
                      "machine": "local", "branch": "balanced/shared", "lead": "balanced/release"})
    heads_before = set(repo.list_refs("refs/heads/"))

    done = archive.fold_away(repo, 0, now=time.time() + 1)

    gone = {"refs/heads/balanced/merged": merged, "refs/heads/balanced/moved": main_tip}
    assert done.branches == gone, "the merged ones, at the commits they were at"
    assert heads_before - set(repo.list_refs("refs/heads/")) == set(gone), "only those removed"
    assert _recorded(repo, pid) == gone, "each recorded in the archive with its commit"
    why = {row["branch"]: row["why"] for row in done.branches_kept}
    assert why == {"refs/heads/balanced/unmerged": "not merged, it has commits main lacks (`git log "
                                                   "main..refs/heads/balanced/unmerged` lists them)",
                   "refs/heads/balanced/worktree": "it is checked out in a worktree",
                   "refs/heads/balanced/release": "it is named as a lead's branch",
                   "refs/heads/balanced/shared": "a job not archived works on it",
                   "refs/heads/main": "it is named as a lead's branch"}
    assert done.removed == len(made) + 1, "the jobs' and the plan's refs as before"
    git(repo.root, "branch", "balanced/merged", merged)  # as the docs say: back from its line
    assert repo.rev_parse("refs/heads/balanced/merged") == merged


def test_a_branch_fetched_back_from_a_machine_goes_too(lead: Repo) -> None:
    repo = lead
    tip = _land(repo, "balanced/far")
    repo.cas_ref("refs/remotes/m1/balanced/far", tip, None)
    git(repo.root, "branch", "-q", "-D", "balanced/far")  # a piece run on m1 has only its fetched ref here
    pid, _ = _plan(repo, ["balanced/far"], fetched_ref="refs/remotes/m1/balanced/far")
    done = archive.fold_away(repo, 0, now=time.time() + 1)
    assert done.branches == {"refs/remotes/m1/balanced/far": tip} and not done.branches_kept
    assert repo.read_ref("refs/remotes/m1/balanced/far") is None and _recorded(repo, pid) == done.branches


def test_a_gc_killed_before_the_refs_go_leaves_both_and_the_next_finishes(lead: Repo, monkeypatch) -> None:
    repo = lead
    tip = _land(repo, "balanced/one")
    pid, _ = _plan(repo, ["balanced/one"])

    def killed(*_: object) -> bool:
        raise KeyboardInterrupt  # as a kill between the archive and the refs' removal

    monkeypatch.setattr(Repo, "delete_refs", killed)
    with pytest.raises(KeyboardInterrupt):
        archive.fold_away(repo, 0, now=time.time() + 1)
    monkeypatch.undo()
    assert repo.read_ref("refs/heads/balanced/one") == tip, "the branch is still there"
    assert _recorded(repo, pid) == {"refs/heads/balanced/one": tip}, "and the archive lists it"
    done = archive.fold_away(repo, 0, now=time.time() + 1)
    assert done.branches == {"refs/heads/balanced/one": tip} and repo.read_ref("refs/heads/balanced/one") is None
    assert len(git(repo.root, "log", "--format=%H", f"refs/balanced/archive/{pid}").splitlines()) == 1, \
        "the second run found its archive written and added no commit"


def test_gc_says_what_it_removed_and_what_it_kept(lead: Repo) -> None:
    repo = lead
    _land(repo, "balanced/a")
    _land(repo, "balanced/b", merge=False)
    _plan(repo, ["balanced/a", "balanced/b"])
    ran = balanced(repo.root, "gc", "--older-than", "0", "--json")
    assert ran.code == 0, ran.err
    out = json.loads(ran.out)
    assert out["branches_removed"] == 1 and out["refs_removed"] == 3
    assert out["branches_kept"][0]["branch"] == "refs/heads/balanced/b"
    assert "not merged" in out["branches_kept"][0]["why"]
    _land(repo, "balanced/c")
    _plan(repo, ["balanced/c"])
    words = balanced(repo.root, "gc", "--older-than", "0")
    assert words.code == 0, words.err
    assert "removed 2 refs and 1 branch of landed jobs, merged into the lead." in words.out, words.out
    assert "`git branch NAME COMMIT` brings one back" in words.out
