"""A process by its pid and start tick: the tick tells a pid the kernel gave to a later process from the one that
was written down. Stdlib only, Python 3.9+: the first of the runner's parts (runner.PARTS), and sent before
seats.py wherever seats.py travels (machines/placing/check_seats.source), so both use this one check; and the one
way the lead opens a file a worker could have put in its place (`plain_fd`)."""

from __future__ import annotations

import os

PID_BOUND = 2**31  # a pid is below this (the kernel's most is 2**22): a larger number names no process


def stat_fields(pid: int) -> list[str]:
    """Fields of /proc/<pid>/stat after the name, state first (index 1 the parent, 19 the start tick); [] without
    /proc or without the process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return []
    return text.rsplit(")", 1)[1].split() if ")" in text else []


def start_tick(pid: int) -> str:
    """The start tick of `pid` ("" without /proc)."""
    return (stat_fields(pid) + [""] * 20)[19]


def alive(pid: object, tick: str = "", *, mine: bool = False) -> bool:
    """Whether the process `pid` runs (and, given its `tick`, is the one that had it); a zombie (an init that never
    reaps leaves them) counts as gone. With `mine`, a process this user may not signal counts as gone too: the
    pid of a process this user started, now another user's."""
    if not isinstance(pid, int) or isinstance(pid, bool) or not 0 < pid < PID_BOUND:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return not mine
    fields = stat_fields(pid)
    return not fields or (fields[0] not in ("Z", "X") and (not tick or fields[19] == tick))


def plain_fd(path: str) -> int | None:
    """A descriptor open for reading on `path` when it is a plain file; None for a link, a FIFO or a device (a worker
    may put one where a seat, a note or a pid file should be: opening or reading it must not wait), or no file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if (os.fstat(fd).st_mode & 0o170000) == 0o100000:
            return fd
    except OSError:
        pass
    os.close(fd)
    return None
