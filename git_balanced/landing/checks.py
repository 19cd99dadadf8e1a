"""Running the check on a tree in a reusable scratch worktree, and its results kept as notes on the tree."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from git_balanced import proc
from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.state import notes

TAIL_LINES = 30


def command_hash(command: str) -> str:
    return hashlib.sha256(command.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class CheckResult:
    tree: str
    command: str
    passed: bool
    code: int
    seconds: float
    tail: str
    at: float
    cached: bool = False

    def record(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("cached")
        d["command_hash"] = command_hash(self.command)
        d["result"] = "pass" if self.passed else "fail"
        return d


def cached(repo: Repo, tree: str, command: str) -> CheckResult | None:
    """The recorded result of `command` on `tree`, if it was ever checked (the latest record wins)."""
    want = command_hash(command)
    found = [r for r in notes.read_json(repo, notes.CHECKS, tree) if r.get("command_hash") == want]
    if not found:
        return None
    r = max(found, key=lambda x: x.get("at", 0))
    return CheckResult(tree=tree, command=command, passed=r.get("result") == "pass", code=int(r.get("code", 1)),
                       seconds=float(r.get("seconds", 0)), tail=r.get("tail", ""), at=float(r.get("at", 0)),
                       cached=True)


class Scratch:
    """A scratch worktree outside `.git`, reused between checks; locked while in use."""

    def __init__(self, repo: Repo, name: str = "check") -> None:
        self.repo = repo
        self.name = name
        self.path = repo.worktrees_home() / f"scratch-{name}"
        self._lock_fd: int | None = None

    def __enter__(self) -> Scratch:
        lock = self.path.with_name(self.path.name + ".lock")
        self._lock_fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o600)
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX)  # a crashed holder's lock dies with its process
        return self

    def __exit__(self, *exc: object) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _valid(self) -> bool:
        res = self.repo.run("rev-parse", "--git-dir", cwd=self.path) if self.path.is_dir() else None
        return bool(res and res.code == 0 and (self.path / ".git").is_file())

    def checkout(self, rev: str) -> Path:
        """Put the scratch worktree at `rev`, detached and clean; rebuilt if a crash left it broken."""
        if not self._valid():
            # `worktree prune` would remove another slot's half-made worktree: one maker at a time.
            fd = os.open(self.repo.state_dir / "worktrees.lock", os.O_CREAT | os.O_RDWR, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                shutil.rmtree(self.path, ignore_errors=True)
                self.repo.run("worktree", "prune")
                self.repo.git("worktree", "add", "--quiet", "--detach", "--force", str(self.path), rev)
            finally:
                os.close(fd)
        else:
            self.repo.git("checkout", "--quiet", "--detach", "--force", rev, cwd=self.path)
            self.repo.git("clean", "-ffdq", cwd=self.path)
        return self.path

    def marker(self) -> Path:
        return Path(self.repo.git("rev-parse", "--path-format=absolute", "--git-dir", cwd=self.path)) / "balanced-setup"

    def ensure_setup(self, setup: str | None) -> proc.Result | None:
        """Run setup once per scratch worktree (again only when the command changes)."""
        if not setup:
            return None
        marker = self.marker()
        if marker.exists() and marker.read_text().strip() == command_hash(setup):
            return None
        res = proc.shell(setup, cwd=self.path, env=proc.no_git_env())
        if res.code == 0:
            marker.write_text(command_hash(setup) + "\n")
        return res


def run_in(scratch: Scratch, tree: str, command: str, setup: str | None) -> CheckResult:
    """Run setup (once) and the check in a scratch worktree already at the right commit; record it."""
    repo = scratch.repo
    start = time.time()
    res = scratch.ensure_setup(setup)
    if res is not None and res.code != 0:
        out, code = "setup failed:\n" + res.out, res.code
    else:
        env = proc.no_git_env()
        env["GIT_BALANCED_CHECK"] = "1"
        r = proc.shell(command, cwd=scratch.path, env=env)
        out, code = r.out, r.code
    tail = "\n".join(out.rstrip().splitlines()[-TAIL_LINES:])
    result = CheckResult(tree=tree, command=command, passed=code == 0, code=code,
                         seconds=round(time.time() - start, 3), tail=tail, at=time.time())
    notes.add_json(repo, notes.CHECKS, tree, result.record())
    return result


def check_rev(repo: Repo, rev: str, command: str, setup: str | None, *, scratch: str = "check",
              use_cache: bool = True) -> CheckResult:
    """The check's result on `rev`'s tree: from the note when that tree was checked, else run it."""
    commit = repo.rev_parse(rev)
    if commit is None:
        raise BalancedError(f"{rev!r} names no commit here.", hint="name a branch, tag or commit id.")
    tree = repo.tree_of(commit)
    if use_cache and (hit := cached(repo, tree, command)) is not None:
        return hit
    with Scratch(repo, scratch) as s:
        s.checkout(commit)
        return run_in(s, tree, command, setup)
