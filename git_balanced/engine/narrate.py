"""What a foreground engine says while it works: one line per event on a job's chain as it is written (placed,
started, finished, landed, failed and why: the line `git log` shows of it), a line when a check starts and
when it ends with its time, and on a terminal a status line of counts under them.

It watches the job refs from a thread of its own, with a Repo of its own, listing their tips a few times a
second and reading in-process only the commits a tip moved by, each once for its subject and trailers (no git
process per job that moved); so it says what any writer recorded (this engine, `stop` from another terminal,
another clone's engine through sync), and the engine's loop is not touched."""

from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
import time
from typing import NamedTuple, TextIO

from git_balanced import proc, ui
from git_balanced.git import Repo
from git_balanced.job_events import Claimed, TakenOver
from git_balanced.landing.checks import marks_of, running_here
from git_balanced.state import cache, readback
from git_balanced.state.events import parse_event
from git_balanced.vocab import JobState

PREFIX = "refs/balanced/jobs/"
EVERY = 0.25  # seconds between two listings of the tips
STAMP_SETTLED = 1_000_000_000  # ns: a stamp younger than this may hide a write in the same clock tick
CHECKS_EVERY = 1.0  # seconds between two looks for running checks (a walk of /proc) while one is said to run
IDLE_CHECKS_EVERY = 5.0  # and while none is: a check of this engine's is known without one, only others' need it
QUIET = {Claimed.name, TakenOver.name}  # which engine took a job: not news to the person watching it
COUNTED = (JobState.QUEUED, JobState.RUNNING, JobState.FINISHED, JobState.LANDED, JobState.FAILED)


class Narrator:
    """Says each new event of the repository's jobs on `out`, and a status line on `status` when it is a
    terminal. `start()` runs it in a thread; `stop()` says what came last and ends it."""

    def __init__(self, repo: Repo, out: TextIO | None = None, status: TextIO | None = None) -> None:
        self.root = repo.root
        self.out = out or sys.stdout
        self.status = status or sys.stderr
        self.live = self.status.isatty() and os.environ.get("TERM") != "dumb"
        self._stamp = repo.refs_stamp(PREFIX)  # what the job refs' files were as they were listed
        self.tips = repo.list_refs(PREFIX)
        self.states = {jid: str(st["state"]) for jid, st in cache.read_all(repo, "jobs").items()}
        self.check_since: float | None = None
        self._checks_looked = 0.0
        self._here = False  # whether a check of this process ran at the last look
        self._marks = marks_of(repo)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._drawn = False

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="narrator", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with contextlib.suppress(Exception):  # a last look: what the last pass wrote; its checks have ended
            self.look(Repo.discover(self.root), last=True)
        self._clear()

    def _run(self) -> None:
        repo = Repo.discover(self.root)  # its own: the engine's Repo is the engine thread's
        while not self._stop.wait(EVERY):
            with contextlib.suppress(Exception):  # a look that fails (a ref moving under it) is looked at again
                self.look(repo)

    def look(self, repo: Repo, *, last: bool = False) -> None:
        """Say what changed since the last look (`last`: the engine has ended, and with it its checks)."""
        moves = self._moves(repo)
        self._say(sorted(self._checks(last) + moves, key=lambda x: x[0]))  # a check's end first in its second

    def _moves(self, repo: Repo) -> list[tuple[float, str]]:
        """The lines of every job that moved since the last look; none, without listing the jobs, while their
        folder and packed-refs are as they were more than a second ago (a listing of 10,000 refs is 0.1 s)."""
        stamp = repo.refs_stamp(PREFIX)
        if stamp is not None and stamp == self._stamp and time.time_ns() - stamp[0] > STAMP_SETTLED:
            return []
        self._stamp = stamp
        tips = repo.list_refs(PREFIX)
        lines = []
        for ref, tip in sorted(tips.items(), key=lambda kv: kv[1]):
            old = self.tips.get(ref)
            if old != tip:
                lines += self._moved(repo, ref[len(PREFIX):], tip, old)
        self.tips = tips
        return lines

    def _moved(self, repo: Repo, jid: str, tip: str, old: str | None) -> list[tuple[float, str]]:
        """The lines of the events a job's tip moved by since `old` (every event of a new job), in their order:
        each commit read once, in-process, for its subject and trailers (what `git log` showed of it)."""
        found = []
        seen, todo = {old} if old else set(), [tip]
        while todo:
            sha = todo.pop()
            if sha in seen:
                continue
            seen.add(sha)
            ev = _event_of(repo, sha)
            if ev is None:  # missing, or not a commit: the board names a malformed ref
                continue
            todo.extend(ev.parents)
            if ev.event and ev.event != "merged":
                found.append(ev)
        lines = []
        for ev in sorted(found, key=lambda e: (e.lamport, e.node)):
            if ev.state:
                self.states[jid] = ev.state
            if ev.event not in QUIET:
                lines.append((ev.when, ev.subject))
        return lines

    def _checks(self, ended: bool = False) -> list[tuple[float, str]]:
        """A line when a check starts running, and one when none runs any more, with how long it took; with
        `ended` (the engine has ended its checks), none runs, and /proc is not read to know it. A check this
        process runs is known without reading /proc (checks.running_here); /proc is walked for the checks of
        other processes (`land`, another engine), each CHECKS_EVERY while a check is said to run, each
        IDLE_CHECKS_EVERY while none is."""
        now = time.time()
        here = not ended and running_here()
        every = CHECKS_EVERY if self.check_since is not None else IDLE_CHECKS_EVERY
        was_here, self._here = self._here, here
        if not here and not was_here and now - self._checks_looked < every:
            return []  # (one of ours that just ended is looked past at once: its end is said before its landing)
        if here and self.check_since is not None:
            return []  # said already, and still running
        if not here:
            self._checks_looked = now
        running = here or (not ended and bool(proc.marked(self._marks)))
        if running and self.check_since is None:
            self.check_since = now
            waiting = sum(1 for s in self.states.values() if s == JobState.FINISHED)
            return [(now, f"checking ({waiting} finished, waiting for their check)")]
        if not running and self.check_since is not None:
            took, self.check_since = now - self.check_since, None
            # Said at the start of its second, the time an event's commit holds: before the landing it let through.
            return [(float(int(now)), f"check ended after {took:.1f} s")]
        return []

    def _say(self, lines: list[tuple[float, str]]) -> None:
        if lines:
            self._clear()
            self.out.write("".join(f"{time.strftime('%H:%M:%S', time.localtime(t))}  {ui.plain(s)}\n"
                                   for t, s in lines))
            self.out.flush()
        if self.live:
            self._draw()

    def counts(self) -> str:
        """The status line: how many jobs are in each state, and how long the running check has taken."""
        n = {s: 0 for s in COUNTED}
        for s in self.states.values():
            if s in n:
                n[JobState(s)] += 1
        words = " · ".join(f"{n[s]} {s}" for s in COUNTED)
        if self.check_since is not None:
            took = int(time.time() - self.check_since)
            words += f" · checking {took // 60}:{took % 60:02d}"
        return f"[engine] {words}"

    def _draw(self) -> None:
        self.status.write("\r\x1b[K" + self.counts())
        self.status.flush()
        self._drawn = True

    def _clear(self) -> None:
        if self._drawn:
            self.status.write("\r\x1b[K")
            self.status.flush()
            self._drawn = False


class Said(NamedTuple):
    """What the narrator reads of one event commit: its subject, time, trailers and parents."""

    subject: str
    when: float
    event: str
    state: str
    lamport: int
    node: str
    parents: list[str]


def _event_of(repo: Repo, sha: str) -> Said | None:
    """The commit `sha` as the narrator says it; None when it cannot be read as a commit. An event this process
    wrote is said from what it kept of it (state/readback.py: the same subject, time and trailers)."""
    known = readback.kept().get(str(repo.common_dir), sha)
    if known is not None and known.subject is not None:
        with contextlib.suppress(ValueError):
            ev = parse_event(known.raw)
            return Said(known.subject, float(int(ev.time)), ev.event, ev.state or "", ev.lamport, ev.node,
                        list(known.parents))
    try:
        commit = repo.store[sha.encode()]
        parents, when, message = commit.parents, float(commit.commit_time), commit.message
    except Exception:  # noqa: BLE001  (a missing object, a blob or tree where a commit was)
        return None
    subject, _, body = message.decode("utf-8", "replace").partition("\n")
    said = dict(line[len("Balanced-"):].split(": ", 1) for line in body.splitlines()
                if line.startswith("Balanced-") and ": " in line)
    lamport = said.get("Lamport", "")
    return Said(subject, when, said.get("Event", ""), said.get("State", ""), int(lamport) if lamport.isdigit() else 0,
                said.get("Node", ""), [p.decode() for p in parents])


class Above(io.TextIOBase):
    """A stream the engine's own words go through while a status line is drawn: the line is taken away before
    they are written, so they never run into it (the next look draws it again under them)."""

    def __init__(self, narrator: Narrator, stream: TextIO) -> None:
        super().__init__()
        self.narrator, self.stream = narrator, stream

    def write(self, text: str) -> int:
        self.narrator._clear()
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:  # the engine asks of its stderr what it would ask of the terminal's
        return self.stream.isatty()

    def fileno(self) -> int:  # a process started with this stderr gets the real one
        return self.stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self.stream, "encoding", "utf-8"))
