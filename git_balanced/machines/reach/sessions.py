"""Runner sessions: a runner process kept open per machine, answering request after request.

Starting a worker, or reading the state of every worker on a machine, is a short request to the runner. As
a process of its own, each request pays for a Python start and, on another machine, for compiling the
runner's source there (about 100 KB with what it ships along): tens of milliseconds, against a millisecond
for the request itself. A session is the runner's `serve` loop (runner.py), opened once and kept in this
process's Reach (routes.py): on this machine a child process, on an SSH machine a command on the shared
connection, holding one of the host's session slots while it is open.

Every runner action is idempotent (a second start answers with the pid of the first), so a session that
ends before it answers is simply dropped and the request goes as a one-off command instead, which also
says what went wrong. A session nobody used for IDLE seconds is closed, and the runner ends one that
hears nothing for longer (runner.SERVE_IDLE), so neither side keeps anything open for long.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

from git_balanced.files import Flock

IDLE = 30.0  # seconds a session may sit unused before this side closes it (the runner's own limit is 60)
SIZE = 2  # sessions per machine per process: a slow request (a stop that waits) does not hold up the rest
WAIT = 1.0  # seconds to wait for a busy session before sending the request as a one-off command instead
GROW_AFTER = 0.05  # seconds to wait for a busy session before opening another (up to SIZE)
READY_LINES = 100  # lines a session may print before it says it is ready (a chatty login, say)

Opener = Callable[[], "tuple[subprocess.Popen[bytes], Flock | None]"]


class SessionTimeout(Exception):
    """A session that did not answer in time; it is closed, since its answer may still come."""


class Session:
    """One open runner session: a request line in, an answer line out."""

    def __init__(self, process: subprocess.Popen[bytes], slot: Flock | None) -> None:
        self.process = process
        self.slot = slot  # the host's session slot it holds while open
        self.used = time.monotonic()
        self._pending = b""

    def _line(self, timeout: float) -> bytes | None:
        """The next line the session writes; None if it ended first. SessionTimeout after `timeout`."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise SessionTimeout(f"no answer within {timeout:.0f} s")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line

    def ready(self, timeout: float) -> bool:
        """Whether the runner came up and said so (python3 missing, or ssh failing, ends it instead). What a
        login script or the machine's Python prints first is passed over, as a one-off's answer is its last
        line."""
        deadline = time.monotonic() + timeout
        for _ in range(READY_LINES):
            line = self._line(max(0.0, deadline - time.monotonic()))
            if line is None:
                return False
            try:
                said = json.loads(line)
            except ValueError:
                continue
            if isinstance(said, dict) and said.get("ready") is True:
                return True
        return False

    def call_many(self, action: str, requests: list[dict[str, Any]], timeout: float) -> list[dict[str, Any] | None]:
        """Requests sent at once and answered in order: one round trip for all of them. None for each one
        left unanswered when the session ended. Several at once only for actions with short answers (a
        start): the answers wait in the pipe until every request is written."""
        assert self.process.stdin is not None
        self.used = time.monotonic()
        lines = b"".join(json.dumps({"action": action, "request": r}).encode() + b"\n" for r in requests)
        try:
            self.process.stdin.write(lines)
            self.process.stdin.flush()
        except OSError:
            return [None] * len(requests)
        answers: list[dict[str, Any] | None] = []
        for _ in requests:
            line = self._line(timeout)
            if line is None:
                break
            try:
                answer = json.loads(line)
            except ValueError:
                break
            answers.append(answer if isinstance(answer, dict) else None)
        self.used = time.monotonic()
        return answers + [None] * (len(requests) - len(answers))

    def close(self, kill: bool = False, *, wait: bool = True) -> None:
        """End the session (closing its stdin ends the runner's loop) and free its slot. `kill` for one
        that may still be busy with a request nobody waits for any more. Without `wait` (a process that is
        ending), the runner is left to end on its own: it reads the end of its stdin and exits."""
        with contextlib.suppress(OSError):
            if self.process.stdin:
                self.process.stdin.close()
        if kill:
            self.process.kill()
        try:
            if wait or kill:
                self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout:
            self.process.stdout.close()
        if self.slot is not None:
            self.slot.release()
            self.slot = None


class Pool:
    """The sessions of one machine in this process: up to SIZE, each used by one caller at a time."""

    def __init__(self, opener: Opener, size: int = SIZE) -> None:
        self.opener = opener
        self.size = size
        self.idle: list[Session] = []
        self.count = 0
        self.opening = 0
        self.cond = threading.Condition()
        self.timer: threading.Timer | None = None

    def call(self, action: str, request: dict[str, Any], timeout: float) -> dict[str, Any] | None:
        """The runner's answer through a session; None when no session could answer (send a one-off)."""
        answers = self.call_many(action, [request], timeout)
        return answers[0] if answers else None

    def call_many(self, action: str, requests: list[dict[str, Any]],
                  timeout: float) -> list[dict[str, Any] | None] | None:
        """The runner's answers to several requests through one session, in one round trip; None when no
        session could be had, and None in the list for each request left unanswered (send those again)."""
        session = self._take(timeout)
        if session is None:
            return None
        try:
            answers = session.call_many(action, requests, timeout)
        except BaseException:
            self._drop(session, kill=True)
            raise
        if any(a is None for a in answers):
            self._drop(session)
        else:
            self._give_back(session)
        return answers

    def _take(self, timeout: float) -> Session | None:
        start = time.monotonic()
        with self.cond:
            while True:
                self._sweep(IDLE)
                if self.idle:
                    return self.idle.pop()
                waited = time.monotonic() - start
                # Requests take milliseconds: another session is opened only when the busy ones stay busy,
                # and not while one is still opening (it will be free as soon as it is up).
                if self.count < self.size and (self.count == 0 or (waited >= GROW_AFTER and not self.opening)):
                    self.count += 1
                    self.opening += 1
                    break
                if waited >= WAIT:
                    return None
                self.cond.wait(GROW_AFTER if self.count < self.size else WAIT - waited)
        try:
            return self._open(timeout)
        finally:
            with self.cond:
                self.opening -= 1
                self.cond.notify_all()

    def warm(self, timeout: float) -> None:
        """Open a session ahead of the requests it will serve (while the base is pushed, say), unless one
        is open or opening already."""
        with self.cond:
            self._sweep(IDLE)
            if self.count:
                return
            self.count += 1
            self.opening += 1
        session = None
        try:
            session = self._open(timeout)
        finally:
            with self.cond:  # handed over and no longer opening at once: a waiter takes it, not a new one
                self.opening -= 1
                if session is not None:
                    self._give_back(session)
                self.cond.notify_all()

    def _open(self, timeout: float) -> Session | None:
        """A new session, counted already; None (uncounted again) if it did not come up."""
        try:  # opened outside the lock: the others' requests go on meanwhile
            process, slot = self.opener()
        except BaseException:
            self._forget()
            raise
        session = Session(process, slot)
        try:
            if session.ready(timeout):
                return session
        except SessionTimeout:
            pass
        self._drop(session, kill=True)
        return None

    def _give_back(self, session: Session) -> None:
        with self.cond:
            self.idle.append(session)
            self.cond.notify()
            if self.timer is None:  # idle sessions hold a slot there: close them once unused for IDLE
                self.timer = threading.Timer(IDLE, self._on_timer)
                self.timer.daemon = True
                self.timer.start()

    def _on_timer(self) -> None:
        with self.cond:
            self.timer = None
            self._sweep(IDLE)
            if self.idle:
                self.timer = threading.Timer(IDLE, self._on_timer)
                self.timer.daemon = True
                self.timer.start()

    def _drop(self, session: Session, kill: bool = False) -> None:
        session.close(kill)
        self._forget()

    def _forget(self) -> None:
        with self.cond:
            self.count -= 1
            self.cond.notify()

    def _sweep(self, older_than: float, *, wait: bool = True) -> None:
        """Close the idle sessions unused for `older_than` seconds (the caller holds the lock)."""
        now = time.monotonic()
        keep = []
        for s in self.idle:
            if now - s.used >= older_than or s.process.poll() is not None:
                s.close(wait=wait)
                self.count -= 1
            else:
                keep.append(s)
        self.idle = keep

    def close(self, *, wait: bool = True) -> None:
        """Close every idle session; without `wait`, at exit, none is waited for to end."""
        with self.cond:
            self._sweep(0.0, wait=wait)
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
