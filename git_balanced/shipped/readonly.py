"""The shared read-only checkout of a base commit, for the workers of pieces that write nothing (`writes: none`).
Stdlib only, Python 3.9+: part of the runner's source (runner.py).

One checkout per base commit per machine, made once by the first such worker and shared by every one after it:
the base's files as git checks them out (no `.git`, no index, no worktree registration, no branch, no copy
of the repository), each file and folder read-only on disk. Each worker using it leaves a mark beside it
(`<checkout>.users/<job>`); the cleanup of a job removes its mark, and the checkout with the last one. A mark
whose job has no run folder any more (its cleanup never came) does not hold it. Sent to another machine, these
functions become the runner script's globals: their names are prefixed so that none meets one of the runner's.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import subprocess

if "_git" not in globals():  # sent to another machine, runfiles.py's source comes first and defines these
    from git_balanced.shipped.runfiles import RunError, _base_env
    from git_balanced.untrusted import safe_argv, safe_env, safe_listing

READONLY_DIR = "readonly"  # beside the worktrees: <worktrees home>/readonly/<base commit>


def readonly_path(worktrees_home: str, base: str) -> str:
    """Where the shared checkout of `base` is, under a repository's worktrees home; the lead and the runner both
    derive it from these two alone."""
    return f"{worktrees_home.rstrip('/')}/{READONLY_DIR}/{base}"


def readonly_acquire(repo: str, checkout: str, base: str, job: str) -> bool:
    """Mark `checkout` as used by `job`, making it first from `base` in `repo` when it is not there; True when
    this call made it. Under the checkout's lock, so two workers of one base make it once."""
    fd = _ro_lock(checkout)
    try:
        made = not os.path.isdir(checkout)
        if made:
            _ro_make(repo, checkout, base)
        users = checkout + ".users"
        os.makedirs(users, exist_ok=True)
        with open(os.path.join(users, job), "w", encoding="utf-8"):
            pass
        return made
    finally:
        os.close(fd)


def readonly_release(checkout: str, job: str, runs_dir: str) -> bool:
    """Take away `job`'s mark on `checkout`, and remove the checkout when no job that still has a run folder in
    `runs_dir` marks it; True when it was removed."""
    if not os.path.isdir(os.path.dirname(checkout)):
        return False
    fd = _ro_lock(checkout)
    try:
        users = checkout + ".users"
        try:
            names = os.listdir(users)
        except OSError:
            names = []
        left = [n for n in names if n != job and os.path.isdir(os.path.join(runs_dir, n))]
        for name in names:
            if name not in left:
                try:
                    os.unlink(os.path.join(users, name))
                except OSError:
                    pass
        if left:
            return False
        _ro_remove(checkout)
        shutil.rmtree(users, ignore_errors=True)
        return not os.path.exists(checkout)
    finally:
        os.close(fd)


def _ro_lock(checkout: str) -> int:
    os.makedirs(os.path.dirname(checkout), exist_ok=True)
    fd = os.open(checkout + ".lock", os.O_CREAT | os.O_RDWR, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _ro_make(repo: str, checkout: str, base: str) -> None:
    """The base's files in a folder beside `checkout`, made read-only, then renamed to it: a checkout is whole or
    absent. git reads the tree into an index of the checkout's own (beside it, removed after) and writes its
    files there, as in any folder a worker could have written (untrusted.py): nothing of the copy's runs."""
    tmp, index = f"{checkout}.tmp{os.getpid()}", f"{checkout}.index{os.getpid()}"
    _ro_remove(tmp)
    os.makedirs(tmp)
    env = {**safe_env(_base_env()), "GIT_INDEX_FILE": index}
    try:
        code, git_dir = _ro_git(["rev-parse", "--absolute-git-dir"], repo, repo, env)
        if code == 0:
            code, out = _ro_git(["read-tree", base], repo, repo, env)
        if code == 0:  # the git folder named: a bare machine copy has no working tree to be in
            code, out = _ro_git([f"--git-dir={git_dir}", f"--work-tree={tmp}", "checkout-index", "-a"], repo, tmp,
                                env)
        if code != 0:
            _ro_remove(tmp)
            raise RunError(f"the read-only checkout of {base} could not be made from {repo}: "
                           f"{out if code else git_dir}")
    finally:
        if os.path.exists(index):
            os.unlink(index)
    _ro_set_readonly(tmp)
    os.rename(tmp, checkout)


def _ro_git(args: list[str], repo: str, cwd: str, env: dict) -> tuple[int, str]:
    """git `args` with the door's overrides for `repo` (its drivers emptied, its hooks off), run in `cwd`."""
    argv = safe_argv(args, repo, lambda a, c: safe_listing(a, c, env))
    try:
        cp = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    except OSError as exc:
        return 127, f"git: {exc}"
    return cp.returncode, cp.stdout.decode("utf-8", "replace").strip()


def _ro_set_readonly(top: str) -> None:
    """Every file and folder under `top`, and `top`, without write permission (symbolic links are left)."""
    for folder, _dirs, files in os.walk(top, topdown=False):
        for name in files:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                mode = stat.S_IMODE(os.lstat(path).st_mode)
                os.chmod(path, mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        os.chmod(folder, 0o555)


def _ro_remove(top: str) -> None:
    """Remove a read-only tree: its folders made writable again first, as rmtree cannot empty them otherwise."""
    if not os.path.lexists(top):
        return
    for folder, _dirs, _files in os.walk(top):
        try:
            os.chmod(folder, 0o755)
        except OSError:
            pass
    shutil.rmtree(top, ignore_errors=True)
    if os.path.lexists(top):
        raise RunError(f"could not remove {top}")
