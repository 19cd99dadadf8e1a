"""The worker's worktree: made (in the branch's own copy on an SSH machine), reused, or freed from a job whose runner
is gone; and the guard installed as its pre-commit hook. Stdlib only, Python 3.9+: part of the runner's source."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import stat

if "_git" not in globals():  # sent to another machine, runfiles.py's source comes first and defines these
    from git_balanced.shipped.runfiles import RunError, _git, _note, _path, _read, _read_pid, _write_atomic, alive
if "own_copy_ensure" not in globals():  # likewise branchcopy.py
    from git_balanced.shipped.branchcopy import own_copy_ensure


def _lock_worktrees(repo: str) -> int:
    """Take the repository's lock on making and removing worktrees (the landing queue takes the same one) and
    return its descriptor, to close: a prune or an add reads every registration, and one half made or half
    removed by another process makes it fail (a cleanup of an earlier attempt racing the next one's add)."""
    common_dir = os.path.join(repo, ".git")  # a plain clone's; a worktree or a bare repository asks git
    if not os.path.isdir(os.path.join(common_dir, "objects")):
        common_dir = os.path.join(repo, _git(["rev-parse", "--git-common-dir"], repo)[1])
    os.makedirs(os.path.join(common_dir, "balanced"), exist_ok=True)
    fd = os.open(os.path.join(common_dir, "balanced", "worktrees.lock"), os.O_CREAT | os.O_RDWR, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _own_copy(shared: str, wt: str, branch: str, base: str, runs: str, start_at: str | None) -> str:
    """Make (or find) the branch's own copy of the machine's copy `shared` (branchcopy.py) and the job's
    worktree in it, under the shared copy's lock, which a cleanup removing that copy takes too; the copy."""
    if not os.path.isdir(shared):
        raise RunError(f"the repository {shared} does not exist on this machine")
    fd = _lock_worktrees(shared)
    try:
        try:
            repo = own_copy_ensure(shared, branch, _git)
        except OSError as exc:
            raise RunError(str(exc)) from exc
        _worktree(repo, wt, branch, base, runs, start_at)
    finally:
        os.close(fd)
    return repo


def _worktree(repo: str, wt: str, branch: str, base: str, runs: str | None = None,
              start_at: str | None = None) -> None:
    """Reuse a valid worktree of this repository on `branch`, else add one (of the branch, or new at base); a
    worktree an earlier job left on `branch` when its runner died (in `runs`) is removed first. With
    `start_at` (what the lead recorded for the branch), a new worktree's branch is set there first, whatever
    the copy held: another worker may have planted it."""
    if not os.path.isdir(repo):
        raise RunError(f"the repository {repo} does not exist on this machine")
    if os.path.isdir(wt) and os.listdir(wt):
        code, top = _git(["rev-parse", "--show-toplevel"], wt)
        common = {os.path.realpath(os.path.join(d, _git(["rev-parse", "--git-common-dir"], d)[1]))
                  for d in (wt, repo)}  # one shared git folder: a worktree of this very repository
        if code != 0 or os.path.realpath(top) != os.path.realpath(wt) or len(common) != 1:
            raise RunError(f"{wt} exists and is not a worktree of {repo}; remove it or use another job id")
        head = _git(["symbolic-ref", "-q", "--short", "HEAD"], wt)[1]
        if head != branch:
            raise RunError(f"the worktree {wt} is on {head or 'a detached HEAD'}, not on {branch}")
        return
    os.makedirs(os.path.dirname(wt), exist_ok=True)

    set_here = False  # the branch set here to `start_at`: it exists, no need to ask

    def add_args() -> list[str]:
        exists = set_here or _git(["rev-parse", "--verify", "-q", f"refs/heads/{branch}"], repo)[0] == 0
        return ["worktree", "add", wt, branch] if exists else ["worktree", "add", "-b", branch, wt, base]

    fd = _lock_worktrees(repo)
    try:
        listed = _worktree_list(repo)  # one listing for both looks, read again only if the first removed one
        if runs and _free_branch(repo, wt, branch, runs, listed):
            listed = _worktree_list(repo)
        if isinstance(start_at, str) and start_at and not _held(repo, branch, listed):
            if _branch_at(repo, branch) != start_at:  # the lead set it already in a copy of this machine's
                code, out = _git(["update-ref", f"refs/heads/{branch}", start_at], repo)
                if code != 0:
                    raise RunError(f"could not set {branch} to {start_at} in {repo}: {out}")
            set_here = True
        args = add_args()
        code, out = _git(args, repo)
        if code != 0:  # a registration whose folder was deleted blocks adding it again: prune, then again
            _git(["worktree", "prune"], repo)
            set_here = False
            args = add_args()  # the failed add may have made the branch already
            code, out = _git(args, repo)
    finally:
        os.close(fd)
    if code != 0:
        raise RunError(f"`git {' '.join(args)}` failed in {repo}: {out}")


def _branch_at(repo: str, branch: str) -> str | None:
    """The id in the branch's loose ref file of a plain repository (`repo/.git`), or None where git should say
    (no such plain file: packed, a link, another ref store). Read only to skip an `update-ref` to what it is."""
    path = os.path.join(repo, ".git", "refs", "heads", *branch.split("/"))
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode) or os.path.exists(os.path.join(repo, ".git", "reftable")):
            return None
        with open(path, encoding="ascii") as f:
            text = f.read(100).strip()
    except (OSError, ValueError):
        return None
    return text if len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text) else None


def _worktree_list(repo: str) -> str:
    """`git worktree list --porcelain` of the repository ('' when it fails); not asked of a plain repository with
    no worktree registered (`.git/worktrees` empty or missing), which lists only itself: its folder, and the
    branch its HEAD names, read from the file."""
    registered = os.path.join(repo, ".git", "worktrees")
    if os.path.isdir(os.path.join(repo, ".git")) and not (os.path.isdir(registered) and os.listdir(registered)):
        head = (_read(os.path.join(repo, ".git", "HEAD")) or "").strip()
        return f"worktree {os.path.abspath(repo)}\n" + (f"branch {head[5:]}\n" if head.startswith("ref: ") else "")
    code, out = _git(["worktree", "list", "--porcelain"], repo)
    return out if code == 0 else ""


def _held(repo: str, branch: str, listed: str) -> bool:
    """Whether a worktree of the repository whose folder exists has `branch` checked out (`listed`: its
    `_worktree_list`)."""
    for block in listed.split("\n\n"):
        lines = block.splitlines()
        path = lines[0][len("worktree "):] if lines and lines[0].startswith("worktree ") else ""
        if f"branch refs/heads/{branch}" in lines and path and os.path.isdir(path):
            return True
    return False


def _free_branch(repo: str, wt: str, branch: str, runs: str, listed: str) -> bool:
    """Remove the worktree that holds `branch` elsewhere when the job that made it (its run folder in `runs`)
    has neither runner nor agent alive: a machine killed and back, its worker tried again. Its commits are on
    the branch already. A worktree no job of `runs` made, or whose job still runs, is left as it is. `listed`:
    the repository's `_worktree_list`. True when it removed one."""
    holder = None
    for block in listed.split("\n\n"):
        lines = block.splitlines()
        path = lines[0][len("worktree "):] if lines and lines[0].startswith("worktree ") else ""
        if f"branch refs/heads/{branch}" in lines and path and os.path.realpath(path) != os.path.realpath(wt):
            holder = path
    if holder is None:
        return False
    try:
        names = os.listdir(runs)
    except OSError:
        names = []
    for job in names:
        req = _read(os.path.join(runs, job, "request.json"))
        try:
            made = json.loads(req).get("worktree") if req else None
        except ValueError:
            made = None
        if not isinstance(made, str) or os.path.realpath(_path(made)) != os.path.realpath(holder):
            continue
        for name in ("pid", "agent_pid"):
            pid, tick = _read_pid(os.path.join(runs, job, name))
            if alive(pid, tick):
                raise RunError(f"{branch} is checked out at {holder} by job {job}, which still runs (pid {pid})")
        code, out = _git(["worktree", "remove", "--force", "--force", holder], repo)
        _note(f"removed {holder}, left on {branch} by job {job} whose runner is gone"
              + ("" if code == 0 else f" (git said: {out})"))
        if code != 0:
            shutil.rmtree(holder, ignore_errors=True)
            _git(["worktree", "prune"], repo)
        return True
    return False


def _install_guard(guard: dict, run_dir: str, repo: str, wt: str) -> None:
    """Make the guard this worktree's pre-commit hook (shipped/guard.py, sent in the request), through
    a hooks folder of its own set in the worktree's own config: the lead's checkout and the other workers
    keep their hooks. The repository's own hooks still run, behind the guard or through a wrapper."""
    script, spec = guard.get("script"), guard.get("spec")
    if not isinstance(script, str) or not isinstance(spec, dict):
        raise RunError("the request's 'guard' needs a 'script' and a 'spec'")
    # The extension first: without it `--worktree` means the shared config, the user's own hooksPath.
    code, out = _git(["config", "extensions.worktreeConfig", "true"], repo)
    if code != 0:
        raise RunError(f"could not install the guard: `git config extensions.worktreeConfig true` failed: {out}")
    _git(["config", "--worktree", "--unset", "core.hooksPath"], wt)  # an earlier attempt's folder
    # Where the worker's own commits find their hooks (asked as the worker would ask: only a path is read).
    code, theirs = _git(["rev-parse", "--path-format=absolute", "--git-path", "hooks"], wt, {})
    hooks = os.path.join(run_dir, "hooks")
    os.makedirs(hooks, exist_ok=True)
    names = sorted(os.listdir(theirs)) if code == 0 and os.path.isdir(theirs) else []
    for name in names:
        path = os.path.join(theirs, name)
        if name.endswith(".sample") or name == "pre-commit" or not os.access(path, os.X_OK):
            continue
        quoted = "'" + path.replace("'", "'\\''") + "'"
        _write_atomic(os.path.join(hooks, name), f'#!/bin/sh\nexec {quoted} "$@"\n')
        os.chmod(os.path.join(hooks, name), 0o755)
    chain = os.path.join(theirs, "pre-commit") if "pre-commit" in names else None
    _write_atomic(os.path.join(hooks, "guard.json"), json.dumps({**spec, "chain": chain}, indent=1))
    _write_atomic(os.path.join(hooks, "pre-commit"), script)
    os.chmod(os.path.join(hooks, "pre-commit"), 0o755)
    code, out = _git(["config", "--worktree", "core.hooksPath", hooks], wt)
    if code != 0:
        raise RunError(f"could not install the guard: `git config --worktree core.hooksPath` failed: {out}")
