"""A landing killed between any two steps, then run again; and the hooks on hand-made merges and pushes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.builders import commit, git, make_remote
from tests.support.cli import balanced
from tests.support.landing import branches, check_runs, landed_subjects, project, tip_passed


def hooked_project(tmp_path: Path) -> Path:
    """A project with the balanced hooks installed by `init`, committed, and its commands approved."""
    repo = project(tmp_path)
    assert balanced(repo, "init").code == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "balanced hooks")
    assert balanced(repo, "allow", "--yes").code == 0
    return repo


def _land_killed_at(repo: Path, point: str, *names: str) -> int:
    env = dict(os.environ, GIT_BALANCED_CRASH_AT=point)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env["PATH"]
    return subprocess.run(["git", "balanced", "land", *names], cwd=repo, env=env,
                          capture_output=True, text=True).returncode


@pytest.mark.parametrize("point", ["after-chain", "after-check", "after-notes", "after-move"])
def test_killed_landing_recovers(tmp_path: Path, sealed: Path, point: str) -> None:
    repo = project(tmp_path)
    names = branches(repo, 4, bad={3})
    before = {n: git(repo, "rev-parse", n) for n in names}
    assert _land_killed_at(repo, point, *names) == 137, "the process died at the crash point"
    assert tip_passed(repo), "the lead's branch never points at an unchecked tree"
    r = balanced(repo, "land", *names)
    assert "check failed f3" in r.out
    subjects = landed_subjects(repo)
    for n in ("f1", "f2", "f4"):
        assert subjects.count(f"Land {n}") == 1, f"{n} landed exactly once after a kill {point}"
    assert "Land f3" not in subjects
    for line in git(repo, "log", "--first-parent", "--format=%H %s", "main").splitlines():
        sha, subject = line.split(" ", 1)
        if subject.startswith("Land "):
            note = git(repo, "notes", "--ref", "refs/notes/balanced", "show", sha).splitlines()
            records = [r for r in map(json.loads, (x for x in note if x.startswith("{"))) if "branch" in r]
            assert len(records) == 1, f"{subject} has one landing note after a kill {point}, not {records}"
    assert {n: git(repo, "rev-parse", n) for n in names} == before, "no branch lost or moved"
    assert tip_passed(repo)
    assert git(repo, "status", "--porcelain") == "", "the lead's checkout matches its branch"
    r = balanced(repo, "land", "f1")
    assert "already" in r.out, "landing again lands nothing twice"


def test_pre_merge_commit_hook_checks_a_hand_made_merge(tmp_path: Path, sealed: Path) -> None:
    repo = hooked_project(tmp_path)
    branches(repo, 2, bad={2})
    git(repo, "merge", "--no-ff", "-q", "-m", "merge f1 by hand", "f1")
    assert landed_subjects(repo)[0] == "merge f1 by hand", "a passing merge goes through"
    before = git(repo, "rev-parse", "main")
    cp = subprocess.run(["git", "merge", "--no-ff", "-m", "merge f2 by hand", "f2"], cwd=repo,
                        capture_output=True, text=True)
    assert cp.returncode != 0, "a failing merge is refused"
    said = cp.stdout + cp.stderr
    assert "fails" in said and "merge --abort" in said, said
    assert git(repo, "rev-parse", "main") == before
    git(repo, "merge", "--abort")


def test_pre_push_refuses_unchecked_lead_commits(tmp_path: Path, sealed: Path) -> None:
    repo = hooked_project(tmp_path)
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    cp = subprocess.run(["git", "push", "-q", "origin", "main"], cwd=repo, capture_output=True, text=True)
    said = cp.stdout + cp.stderr  # pre-commit shows a hook's words on stdout
    tip = git(repo, "rev-parse", "--short=7", "main")
    assert cp.returncode != 0 and f"git balanced check {tip}" in said, said
    assert git(bare, "for-each-ref") == "", "nothing was pushed"
    assert balanced(repo, "check", "main").code == 0
    git(repo, "push", "-q", "origin", "main")
    assert git(bare, "rev-parse", "main") == git(repo, "rev-parse", "main")
    commit(repo, {"src/new.txt": "new\n"}, "unchecked")
    git(repo, "push", "-q", "origin", "main:refs/heads/balanced/x")  # worker branches are not gated
    cp = subprocess.run(["git", "push", "-q", "origin", "main"], cwd=repo, capture_output=True, text=True)
    assert cp.returncode != 0


def test_landed_work_pushes_without_a_new_check(tmp_path: Path, sealed: Path) -> None:
    repo = hooked_project(tmp_path)
    assert balanced(repo, "check").code == 0
    make_remote(tmp_path, repo)  # a new branch on the remote: its tip passed
    names = branches(repo, 3)
    assert balanced(repo, "land", *names).code == 0
    runs = check_runs(sealed)
    git(repo, "push", "-q", "origin", "main")  # three merges, one checked tree: the notes vouch for all
    assert check_runs(sealed) == runs, "pushing landed work runs no check"


def test_a_push_of_two_unchecked_commits_is_judged_by_its_tip(tmp_path: Path, sealed: Path) -> None:
    repo = hooked_project(tmp_path)
    assert balanced(repo, "check").code == 0
    bare = make_remote(tmp_path, repo)
    older = commit(repo, {"src/one.txt": "one\n"}, "one by hand")
    tip = commit(repo, {"src/two.txt": "two\n"}, "two by hand")
    cp = subprocess.run(["git", "push", "-q", "origin", "main"], cwd=repo, capture_output=True, text=True)
    said = cp.stdout + cp.stderr
    assert cp.returncode != 0 and f"its tip {tip[:7]} (two by hand)" in said, said
    assert older[:7] not in said, "the older commit is not what the push is judged by"
    assert f"hint: run `git balanced check {tip[:7]}`, then push again." in said, said
    runs = check_runs(sealed)
    r = balanced(repo, "check", "origin/main..main")
    assert r.code == 0 and "The tip decides" in r.err and "the 1 commit(s) below it" in r.err, r
    assert check_runs(sealed) == runs + 1, "the range's tip alone is checked"
    git(repo, "push", "-q", "origin", "main")
    assert git(bare, "rev-parse", "main") == tip


def test_a_commit_by_hand_under_a_landing_goes_out_with_it(tmp_path: Path, sealed: Path) -> None:
    repo = hooked_project(tmp_path)
    assert balanced(repo, "check").code == 0
    bare = make_remote(tmp_path, repo)
    commit(repo, {"src/by-hand.txt": "never checked alone\n"}, "by hand")
    branches(repo, 1)
    assert balanced(repo, "land", "f1").code == 0, "the landing on top checks a tree that holds it"
    git(repo, "push", "-q", "origin", "main")
    assert git(bare, "rev-parse", "main") == git(repo, "rev-parse", "main"), "the tip decides, and it passed"


def test_check_of_a_range_names_what_is_wrong(tmp_path: Path, sealed: Path) -> None:
    repo = hooked_project(tmp_path)
    r = balanced(repo, "check", "nowhere..main")
    assert r.code == 1 and "'nowhere' in 'nowhere..main' names no commit here." in r.err, r
    data = balanced(repo, "check", "main~1..main", "--json")
    assert data.code == 0 and '"range_commits": 0' in data.out and '"rev": "main"' in data.out, data
