"""Waiting on another process: poll for the event or the file it makes, with a deadline, never a fixed sleep."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, TypeVar

import pytest

T = TypeVar("T")


SLOWEST = 0.5  # seconds between polls at the most


def wait_until(predicate: Callable[[], T], timeout: float, what: str, *, every: float = 0.05,
               said: Callable[[], object] | None = None) -> T:
    """Poll `predicate` until it returns a true value, and return that value; after `timeout` seconds fail
    the test saying that `what` did not happen, with `said()` (what there was to see) when given.

    The polls start `every` seconds apart and grow half as long again each time, to SLOWEST: a predicate
    that reads the board costs as much as a pass of the engine, and polled 20 times a second through a
    minute's wait it took a core from the processes the test waits for."""
    deadline = time.monotonic() + timeout
    pause = every
    while True:
        got = predicate()
        if got:
            return got
        if time.monotonic() >= deadline:
            seen = f"\n{said()}" if said is not None else ""
            pytest.fail(f"waited {timeout:g} s for {what}, in vain{seen}")
        time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
        pause = min(pause * 1.5, max(every, SLOWEST))


def wait_for_file(path: Path, timeout: float, what: str) -> str:
    """Wait until the file at `path` exists and holds something; return its text."""
    def text() -> str:
        try:
            return path.read_text()
        except FileNotFoundError:
            return ""

    return wait_until(text, timeout, what)


def gone(pid: int) -> bool:
    """Whether process `pid` has ended; a zombie not reaped yet counts as ended (nothing of it runs)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    return any(line.startswith("State:") and line.split()[1] == "Z" for line in status.splitlines())


class Lines(list[str]):
    """The lines a process writes to `stream`, gathered as they come by a thread (wait on them with
    `wait_until`); `ended` is set once the stream is at its end."""

    def __init__(self, stream: IO[str]) -> None:
        super().__init__()
        self.ended = threading.Event()

        def gather() -> None:
            for line in stream:
                self.append(line.rstrip("\n"))
            self.ended.set()

        threading.Thread(target=gather, daemon=True).start()


def holders(path: Path) -> list[str]:
    """The processes that have `path` open, each as `pid command line` (to say who holds a lock)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if any(os.readlink(f"/proc/{pid}/fd/{fd}") == str(path) for fd in os.listdir(f"/proc/{pid}/fd")):
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                found.append(f"{pid} {cmd.strip()}")
        except OSError:  # gone meanwhile, or not ours to look at
            continue
    return found


def interruptible() -> None:
    """For a child's start (`preexec_fn`, or before `exec`): Ctrl-C (SIGINT) reaches it as a person's would, even
    when this run was started as a background job, whose children inherit SIGINT ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def reap(pid: int, timeout: float, what: str) -> int:
    """Wait for the child `pid` to end, up to `timeout` seconds: its wait status. One still running then is
    killed, and the test fails naming `what`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail(f"{what} did not end within {timeout:.0f} s (killed)")
