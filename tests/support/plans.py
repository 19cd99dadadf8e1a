"""A lead repository for plans of shell pieces, and ways to run the engine on it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.builders import git, make_repo
from tests.support.cli import Ran, balanced

CHECK = "! grep -rq BAD src"


def lead_repo(tmp: Path, check: str | None = CHECK, extra: str = "") -> Path:
    settings = "[worktree]\n" + (f"check = {json.dumps(check)}\n" if check else "") + \
        '[balanced]\nagent = "shell"\n' + extra
    repo = make_repo(tmp / "lead", {"src/base.txt": "ok\n", ".magnum/settings.toml": settings})
    if check:
        assert balanced(repo, "allow", "--yes").code == 0
    return repo


def piece(pid: str, run: str, after: list[str] | None = None, **more: object) -> dict[str, object]:
    p: dict[str, object] = {"id": pid, "task": f"Do {pid}.", "agent": "shell", "run": run}
    if after:
        p["after"] = after
    p.update(more)
    return p


def plan(repo: Path, pieces: list[dict[str, object]], *args: str, task: str = "A test plan",
         budget: float | None = None) -> Ran:
    doc: dict[str, object] = {"task": task, "pieces": pieces}
    if budget is not None:
        doc["budget"] = budget
    return balanced(repo, "plan", "-", *args, input=json.dumps(doc))


def engine(repo: Path, *args: str, crash_at: str | None = None, timeout: float = 120) -> Ran:
    """`git balanced engine ARGS` in the foreground: in this process, or, with `crash_at`, in a real process that
    dies at that point (within `timeout` seconds)."""
    if not crash_at:
        return balanced(repo, "engine", *args)
    env = dict(os.environ)
    env["GIT_BALANCED_CRASH_AT"] = crash_at
    cp = subprocess.run([sys.executable, "-m", "git_balanced.cli", "engine", *args], cwd=repo, env=env,
                        capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return Ran(cp.returncode, cp.stdout, cp.stderr)


def board(repo: Path) -> dict[str, object]:
    r = balanced(repo, "board", "--json")
    assert r.code == 0, r
    return json.loads(r.out)


def jobs_of(repo: Path, piece_id: str) -> list[dict[str, object]]:
    rows = [j for j in board(repo)["jobs"] if j["piece"] == piece_id]  # type: ignore[index]
    return sorted(rows, key=lambda j: j["attempt"])


def inbox_text(repo: Path) -> str:
    """The lead's inbox, oldest first; says so when there is none yet (a test's failure message reads it)."""
    if subprocess.run(["git", "rev-parse", "-q", "--verify", "refs/balanced/inbox/main"], cwd=repo,
                      capture_output=True).returncode != 0:
        return "(no inbox yet: nothing was said to the lead)"
    return git(repo, "log", "--reverse", "--format=%s", "refs/balanced/inbox/main")


@contextmanager
def background_engine(repo: Path, log: Path, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    """`git balanced engine ARGS` running in the background, its output in `log`; stopped on the way out."""
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "git_balanced.cli", "engine", *args], cwd=repo,
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=30)
