"""`git balanced doctor`: malformed refs, stale locks and workers' leftovers listed, removed with `--fix`, and
a worktree that holds work kept."""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import subprocess
import time
from pathlib import Path

from git_balanced.git import Repo
from tests.support.builders import git
from tests.support.cli import balanced
from tests.support.plans import board, engine, lead_repo, piece, plan


def _home() -> Path:
    return Path(os.environ["HOME"]) / ".balanced"


def _worktree_of(repo: Path, job_id: str) -> Path:
    found = list((_home() / "worktrees").glob(f"lead-*/{job_id}"))
    assert len(found) == 1, found
    return found[0]


def _failed_job(repo: Path) -> str:
    """A plan whose one piece fails its check every attempt: its last worktree and run folder stay."""
    assert plan(repo, [piece("nope", "echo BAD > src/bad.txt")], "--start").code == 0
    assert engine(repo, "--until-idle").code == 1, "a piece failed"
    rows = [j for j in board(repo)["jobs"] if j["piece"] == "nope"]  # type: ignore[index]
    last = max(rows, key=lambda j: j["attempt"])
    assert last["state"] == "failed", rows
    return str(last["id"])


def _broken(repo: Path) -> tuple[str, Path]:
    """A malformed ref and a stale lock, as a crash and a careless hand leave them."""
    blob = git(repo, "hash-object", "-w", "--stdin", input="junk\n")
    git(repo, "update-ref", "refs/balanced/jobs/bad", blob)
    lock = repo / ".git" / "refs" / "notes" / "balanced.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")
    os.utime(lock, (time.time() - 600, time.time() - 600))
    return blob, lock


def test_nothing_to_repair_on_a_healthy_repository(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    r = balanced(repo, "doctor")
    assert r.code == 0, r
    assert "Nothing to repair" in r.out
    r = balanced(repo, "doctor", "--json")
    assert r.code == 0
    from git_balanced import fence

    assert json.loads(r.out) == {"malformed_refs": [], "stale_locks": [], "leftovers": [], "processes": [],
                                 "not_looked_at": [], "removed": [], "not_removed": [],
                                 "fence": {"fenced": fence.available(), "why": fence.why_unavailable()}}
    assert balanced(repo, "doctor", "--fix").code == 0, "nothing to remove: no need to ask"


def test_doctor_lists_each_kind_and_fix_removes_them_but_keeps_work(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    job = _failed_job(repo)
    worktree = _worktree_of(repo, job)
    runs = _home() / "runs" / job
    assert worktree.is_dir() and runs.is_dir(), "a failed job's worktree and run folder stay after it"
    blob, lock = _broken(repo)
    gone = tmp_path / "gone-worktree"
    git(repo, "worktree", "add", "-q", "--detach", str(gone))
    shutil.rmtree(gone)
    # A second leftover with uncommitted work in it: a done job's worktree that someone wrote in.
    dirty = worktree.parent / "0000000000dirty"
    git(repo, "worktree", "add", "-q", "-b", "balanced/dirty", str(dirty))
    (dirty / "src" / "unsaved.txt").write_text("work nothing else keeps\n")

    r = balanced(repo, "doctor")
    assert r.code == 1, r
    assert "refs/balanced/jobs/bad: it points at a blob, not a commit" in r.out
    assert f"remove: git update-ref -d refs/balanced/jobs/bad {blob}" in r.out
    assert f"{lock}: the lock of refs/notes/balanced, 10 minutes old" in r.out
    assert f"{worktree}: the worktree of job {job} (nope, failed), on balanced/nope (the branch stays)" in r.out
    copy = Path(os.environ["HOME"]) / ".balanced" / "copies" / f"{Path(worktree).parent.name}-workers" / "balanced+nope"
    assert f"remove: git -C {copy} worktree remove {worktree}" in r.out, "a worktree of the worker copy"
    assert f"{runs}: the run folder of job {job}" in r.out
    assert "a worktree registration whose folder is gone" in r.out and "remove: git worktree prune" in r.out
    assert f"{dirty}: the worktree of no job this repository knows" in r.out and "1 uncommitted change" in r.out
    assert f"look: git -C {dirty} status" in r.out
    assert "`git balanced doctor --fix` removes the 5 listed to remove." in r.out
    assert "Traceback" not in r.err and "malformed" not in r.err, "listed once, on stdout"

    refused = balanced(repo, "doctor", "--fix")
    assert refused.code == 1, refused
    assert "Nothing was removed: there is no terminal to ask on, and --yes was not given" in refused.err
    assert "git balanced doctor --fix --yes" in refused.err
    assert lock.exists() and worktree.is_dir() and git(repo, "rev-parse", "refs/balanced/jobs/bad") == blob

    done = balanced(repo, "doctor", "--fix", "--yes")
    assert done.code == 1, "something was kept: not all clear"
    assert "Removed 5." in done.out, done.out
    assert f"kept     {dirty}: 1 uncommitted change in it" in done.out
    assert not lock.exists() and not worktree.exists() and not runs.exists()
    assert git(repo, "for-each-ref", "refs/balanced/jobs/bad") == "", "the malformed ref is gone"
    assert git(repo, "rev-parse", "balanced/nope"), "the job's branch stays"
    assert "gone-worktree" not in git(repo, "worktree", "list"), "the registration is pruned"
    assert (dirty / "src" / "unsaved.txt").read_text() == "work nothing else keeps\n", "the work is kept"
    assert board(repo)["jobs"], "the board reads as before"

    after = balanced(repo, "doctor", "--json")
    assert after.code == 1
    data = json.loads(after.out)
    assert [x["path"] for x in data["leftovers"]] == [str(dirty)] and data["leftovers"][0]["kept"]
    git(dirty, "stash", "-u")
    again = balanced(repo, "doctor", "--fix", "--yes")
    assert again.code == 0 and "Removed 1." in again.out, again
    assert balanced(repo, "doctor").code == 0


def test_a_worktree_whose_commit_is_on_no_branch_is_kept(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    where = Repo.discover(repo).worktrees_home() / "0000000000lost"
    git(repo, "worktree", "add", "-q", "--detach", str(where))
    (where / "src" / "only-here.txt").write_text("a commit no branch holds\n")
    git(where, "add", "-A")
    git(where, "commit", "-q", "-m", "only here")
    head = git(where, "rev-parse", "HEAD")
    r = balanced(repo, "doctor", "--fix", "--yes")
    assert r.code == 1, r
    assert f"kept     {where}: its commit {head[:12]} is on no branch of this repository" in r.out
    assert where.is_dir() and git(where, "rev-parse", "HEAD") == head


def test_doctor_json_carries_every_finding(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    blob, lock = _broken(repo)
    r = balanced(repo, "doctor", "--json")
    assert r.code == 1, r
    data = json.loads(r.out)
    assert data["malformed_refs"] == [{"ref": "refs/balanced/jobs/bad", "tip": blob,
                                       "why": "it points at a blob, not a commit",
                                       "fix": f"git update-ref -d refs/balanced/jobs/bad {blob}"}]
    assert [(x["path"], x["ref"], x["fix"]) for x in data["stale_locks"]] == [
        (str(lock), "refs/notes/balanced", f"rm {lock}")]
    assert data["stale_locks"][0]["age_seconds"] >= 600
    fixed = balanced(repo, "doctor", "--fix", "--yes", "--json")
    assert fixed.code == 0, fixed
    out = json.loads(fixed.out)
    assert sorted(out["removed"]) == sorted(["refs/balanced/jobs/bad", str(lock)]) and out["not_removed"] == []


def test_a_fresh_lock_is_not_listed(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    lock = repo / ".git" / "refs" / "notes" / "balanced.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")
    assert balanced(repo, "doctor").code == 0, "a lock younger than a minute is a live writer's"
    assert balanced(repo, "doctor", "--fix", "--yes").code == 0
    assert lock.exists()


def _on_a_terminal(repo: Path, answer: str, *args: str) -> tuple[int, str]:
    """`git balanced ARGS` on a real pseudo-terminal, answering its question with `answer`."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(["git", "balanced", *args], cwd=repo, stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 60
    answered = False
    while True:
        assert time.monotonic() < deadline, f"no end within 60s: {seen.decode(errors='replace')}"
        if select.select([master], [], [], 0.1)[0]:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the other end closed: the command ended
                break
            if not chunk:
                break
            seen += chunk
        if not answered and b"[y/N]" in seen:
            os.write(master, answer.encode() + b"\n")
            answered = True
        if proc.poll() is not None and not select.select([master], [], [], 0.1)[0]:
            break
    os.close(master)
    return proc.wait(timeout=10), seen.decode(errors="replace")


def test_fix_asks_on_a_terminal(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    blob, lock = _broken(repo)
    code, text = _on_a_terminal(repo, "n", "doctor", "--fix")
    assert "Remove these 2? [y/N]" in text and "Nothing was removed." in text, text
    assert code == 1 and lock.exists() and git(repo, "rev-parse", "refs/balanced/jobs/bad") == blob
    code, text = _on_a_terminal(repo, "y", "doctor", "--fix")
    assert code == 0 and "Removed 2." in text, text
    assert not lock.exists() and git(repo, "for-each-ref", "refs/balanced/") == ""
