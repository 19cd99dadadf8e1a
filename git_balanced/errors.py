"""The one error family. A BalancedError is shown to the user as one message and a hint (exit 1)."""

from __future__ import annotations

import errno
import os


class BalancedError(Exception):
    """A user-facing error: what happened, and what to run about it."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class LandingBusy(BalancedError):
    """Another git command holds the lead's branch: the landing waits for it, not for you."""


class DiskFull(BalancedError):
    """A write failed for want of room (ENOSPC) or of quota (EDQUOT): names the disk's folder and what to do."""

    def __init__(self, where: str, *, quota: bool = False, what: str = "", need: int | None = None,
                 free: int | None = None) -> None:
        self.where, self.quota = where, quota
        mount = mount_point(where)
        disk = f"The disk holding {where}" + (f" (mounted at {mount})" if mount not in ("", where) else "")
        why = "is over your quota" if quota else "is full"
        room = f": {_size(need)} needed, {_size(free)} free" if need is not None and free is not None else ""
        done = f", so {what} did not happen and nothing was left half-written" if what else ""
        super().__init__(f"{disk} {why}{room}{done}.",
                         hint=f"make room there (`df -h {mount or where}` shows it), then run it again; a running "
                              "engine tries again by itself once there is room.")


# What git prints when a write fails for want of room; its own words, as it never says the errno.
_GIT_FULL = ("No space left on device", "Out of diskspace", "Disk quota exceeded")


def disk_full(exc: BaseException, where: str = "", what: str = "") -> DiskFull | None:
    """The DiskFull an OSError or a failed git command stands for (None when it is another failure)."""
    if isinstance(exc, DiskFull):
        return exc
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        path = os.fsdecode(exc.filename) if exc.filename else where or os.getcwd()
        return DiskFull(os.path.dirname(os.path.abspath(path)) if exc.filename else path,
                        quota=exc.errno == errno.EDQUOT, what=what)
    if isinstance(exc, GitError) and any(w in exc.err or w in exc.out for w in _GIT_FULL):
        return DiskFull(where or os.getcwd(), quota="quota" in exc.err, what=what)
    return None


def mount_point(path: str) -> str:
    """The folder where the file system holding `path` is mounted ('' when `path` is not there at all)."""
    path = os.path.abspath(path)
    while not os.path.exists(path) and path != os.path.dirname(path):
        path = os.path.dirname(path)
    while not os.path.ismount(path):
        path = os.path.dirname(path)
    return path


def _size(n: int | None) -> str:
    value = float(n or 0)
    if value < 1024:
        return f"{int(value)} bytes"
    for unit in ("KiB", "MiB"):
        value /= 1024
        if value < 1024:
            return f"{value:.1f} {unit}"
    return f"{value / 1024:.1f} GiB"


class UsageError(BalancedError):
    """Wrong usage of a command (exit 2)."""

    exit_code = 2


class GitError(BalancedError):
    """Git failed: the message carries the command, its exit code and both streams."""

    def __init__(self, cmd: list[str], code: int, out: str, err: str) -> None:
        self.cmd, self.code, self.out, self.err = cmd, code, out, err
        shown = " ".join(cmd)
        body = f"git failed: `{shown}` exited {code}"
        for name, text in (("stdout", out), ("stderr", err)):
            if text.strip():
                body += f"\n{name}:\n    " + "\n    ".join(text.strip().splitlines()[-20:])
        super().__init__(body)


class NotARepository(BalancedError):
    def __init__(self, path: str) -> None:
        super().__init__(
            f"{path} is not inside a git repository.",
            hint="cd into a repository, or run `git init` first.",
        )


class SettingsError(BalancedError):
    """Bad `.magnum/settings.toml` or plan file: names the file, the key and what is allowed."""


class TrustError(BalancedError):
    """Setup or check commands that the user has not approved."""


class StaleRef(Exception):
    """A compare-and-swap kept losing the race, try after try (a bug unless a caller says otherwise)."""
