"""Old and broken state never stops the repository: stale ref locks are removed with a line, a fresh one is left
to its writer, and a malformed ref under refs/balanced/ is named once while everything else goes on."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from git_balanced.git import STALE_LOCK_SECONDS, Repo
from tests.support.builders import git, make_repo
from tests.support.cli import balanced
from tests.support.plans import background_engine, board, engine, inbox_text, lead_repo, piece, plan
from tests.support.wait import wait_until

TEN_MINUTES = 600


def _stale_lock(path: Path, age: float = TEN_MINUTES) -> Path:
    """A lock file as a killed git process leaves it: empty or half-written, and old."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    os.utime(path, (time.time() - age, time.time() - age))
    return path


def _landed(repo: Path) -> dict[str, str]:
    return {str(j["piece"]): str(j["state"]) for j in board(repo)["jobs"]}  # type: ignore[index]


def test_a_stale_notes_lock_is_removed_with_a_line_and_the_plan_lands(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    assert plan(repo, [piece("alpha", "echo a > src/alpha.txt")], "--start").code == 0
    lock = _stale_lock(repo / ".git" / "refs" / "notes" / "balanced.lock")
    r = engine(repo, "--until-idle")
    assert r.code == 0, r
    assert "Traceback" not in r.err, r.err
    assert f"Removed a stale lock, {lock}" in r.err, r.err
    assert not lock.exists(), "the stale lock is gone"
    assert _landed(repo) == {"alpha": "landed"}
    assert (repo / "src" / "alpha.txt").read_text() == "a\n"
    assert git(repo, "notes", "--ref=balanced", "show", "main").count('"piece": "alpha"') == 1, "the landing note"
    assert inbox_text(repo).count(f"Removed a stale lock, {lock}") == 1, "the lead hears of it once"


def test_a_stale_lock_on_the_checked_out_lead_branch_is_removed(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    assert plan(repo, [piece("beta", "echo b > src/beta.txt")], "--start").code == 0
    lock = _stale_lock(repo / ".git" / "refs" / "heads" / "main.lock")
    r = engine(repo, "--until-idle")
    assert r.code == 0 and "Traceback" not in r.err, r
    assert f"Removed a stale lock, {lock}" in r.err, r.err
    assert _landed(repo) == {"beta": "landed"}
    assert (repo / "src" / "beta.txt").read_text() == "b\n", "the checkout moved with the branch"


def test_a_stale_lock_of_a_state_ref_is_removed_on_the_next_write(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "r"))
    ref = "refs/balanced/jobs/j1"
    head = git(repo.root, "rev-parse", "HEAD")
    lock = _stale_lock(repo.ref_lock(ref), age=STALE_LOCK_SECONDS + 5)
    assert repo.cas_ref(ref, head, None), "the write goes through once the stale lock is gone"
    assert repo.read_ref(ref) == head and not lock.exists()


def test_a_fresh_lock_is_a_lost_race_and_stays(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "r"))
    head = git(repo.root, "rev-parse", "HEAD")
    lock = _stale_lock(repo.ref_lock("refs/notes/balanced"), age=STALE_LOCK_SECONDS - 20)
    assert not repo.cas_ref("refs/notes/balanced", head, None), "a young lock is someone's: the swap loses"
    assert lock.exists(), "and the lock is left alone"
    assert repo.read_ref("refs/notes/balanced") is None


def _hold_ref_lock(repo: Path, ref: str, new: str) -> subprocess.Popen[str]:
    """A live `git update-ref` with a prepared transaction: it holds the ref's lock until told to end."""
    holder = subprocess.Popen(["git", "update-ref", "--stdin"], cwd=repo, stdin=subprocess.PIPE, text=True)
    assert holder.stdin is not None
    holder.stdin.write(f"start\nupdate {ref} {new}\nprepare\n")
    holder.stdin.flush()
    wait_until(lambda: (repo / ".git" / f"{ref}.lock").exists(), 10, f"git to lock {ref}")
    return holder


def _end(holder: subprocess.Popen[str], word: str) -> int:
    assert holder.stdin is not None
    holder.stdin.write(f"{word}\n")
    holder.stdin.close()
    return holder.wait(timeout=10)


def test_a_live_git_holding_a_ref_lock_keeps_it_and_commits(tmp_path: Path) -> None:
    path = make_repo(tmp_path / "r")
    repo = Repo.discover(path)
    head = git(path, "rev-parse", "HEAD")
    holder = _hold_ref_lock(path, "refs/notes/balanced", head)
    try:
        assert not repo.cas_ref("refs/notes/balanced", head, None), "the live writer has it"
        assert repo.ref_lock("refs/notes/balanced").exists(), "its lock is not removed"
    finally:
        code = _end(holder, "commit")
    assert code == 0, "the live writer's transaction commits: its lock was never taken from it"
    assert repo.read_ref("refs/notes/balanced") == head


def test_the_engine_waits_for_a_live_lock_on_the_lead_branch_and_lands_after(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    before = git(repo, "rev-parse", "main")
    assert plan(repo, [piece("gamma", "echo g > src/gamma.txt")], "--start").code == 0
    holder = _hold_ref_lock(repo, "refs/heads/main", before)
    log = tmp_path / "engine.log"
    with background_engine(repo, log, "--until-idle") as eng:
        try:
            wait_until(lambda: "Landing waits" in log.read_text(), 120, "the landing to wait for the lock")
            assert holder.poll() is None and (repo / ".git" / "refs" / "heads" / "main.lock").exists(), \
                "the user's git still holds its lock"
            assert git(repo, "rev-parse", "main") == before
        finally:
            assert _end(holder, "abort") == 0
        wait_until(lambda: eng.poll() is not None, 120, "the engine to land and stop")
    assert eng.returncode == 0, log.read_text()
    assert _landed(repo) == {"gamma": "landed"}
    assert "Traceback" not in log.read_text()


def _junk_blob(repo: Path) -> str:
    return git(repo, "hash-object", "-w", "--stdin", input="junk\n")


def test_malformed_refs_are_named_once_set_aside_and_everything_else_lands(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    blob = _junk_blob(repo)
    git(repo, "update-ref", "refs/balanced/jobs/blob", blob)
    bare = git(repo, "commit-tree", "-m", "no event here", git(repo, "rev-parse", "HEAD^{tree}"))
    git(repo, "update-ref", "refs/balanced/jobs/noevent", bare)
    tree = git(repo, "mktree", input=f"100644 blob {blob}\tevent.json\n")
    git(repo, "update-ref", "refs/balanced/plans/notjson", git(repo, "commit-tree", "-m", "x", tree))
    started = plan(repo, [piece("one", "echo 1 > src/one.txt"), piece("two", "echo 2 > src/two.txt", after=["one"])],
                   "--start")
    assert started.code == 0, started
    placed = git(repo, "for-each-ref", "--format=%(objectname)", "--count=1", "refs/balanced/plans/")
    git(repo, "update-ref", "refs/balanced/jobs/Not.An.Id/nested", placed)
    bad = ["refs/balanced/jobs/blob", "refs/balanced/jobs/noevent", "refs/balanced/plans/notjson",
           "refs/balanced/jobs/Not.An.Id/nested"]

    r = engine(repo, "--until-idle")
    assert r.code == 0 and "Traceback" not in r.err, r
    said = started.err + r.err
    for ref in bad:
        assert said.count(f"{ref} is malformed") == 1, f"{ref} is named once on stderr, not every pass:\n{said}"
        assert git(repo, "for-each-ref", "--format=%(refname)", ref) == "", f"{ref} was set aside"
        assert git(repo, "for-each-ref", "--format=%(refname)", "refs/balanced/broken/" + ref[len("refs/balanced/"):])
    assert "refs/balanced/jobs/blob is malformed (it points at a blob, not a commit)" in said
    assert "refs/balanced/jobs/noevent is malformed (its commits hold no event.json)" in said
    assert "'Not.An.Id/nested' is not an id" in said
    assert _landed(repo) == {"one": "landed", "two": "landed"}, "every other piece lands"

    shown = balanced(repo, "board")
    assert shown.code == 0 and "Traceback" not in shown.err, shown
    assert "one" in shown.out and "two" in shown.out, "the board shows everything else"
    assert "is malformed" not in shown.err, "set aside, it is not named again"

    assert engine(repo, "--until-idle").code == 0
    text = inbox_text(repo)
    for ref in bad:
        assert text.count(f"{ref} is malformed") == 1, f"{ref} is told to the lead once, over two engine runs"


def test_a_write_waits_for_a_young_lock_to_go_stale_and_goes_through(tmp_path: Path) -> None:
    from git_balanced.state import refs

    repo = Repo.discover(make_repo(tmp_path / "r"))
    ref = refs.ref_for("jobs", "j1")
    # Left by a writer killed a moment ago: too young to remove, and nobody will ever let go of it.
    lock = _stale_lock(repo.ref_lock(ref), age=STALE_LOCK_SECONDS - 3)
    started = time.monotonic()
    ev = refs.append(repo, ref, "placed", "j1: placed", {"piece": "p"}, state="queued")
    took = time.monotonic() - started
    assert repo.read_ref(ref) == ev.sha and not lock.exists(), "written once the lock went stale"
    assert 2 < took < 30, f"it waited for the lock to age, not for ever ({took:.1f}s)"
