"""Landed workers' housekeeping off the engine's pass: their worktrees, run folders and copies removed by a thread,
and what is left of it when the engine ends, by a process of its own that the engine does not wait for.

Each job handed over is written down first (`.git/balanced/sweep/<job>`: what its cleanup needs, as JSON) and
crossed out once its cleanup is done, under a lock (`.git/balanced/sweep.lock`) that one sweeper holds at a time:
an engine's thread, or the process an ending engine leaves the rest to (`python -m git_balanced.engine.sweep
BRANCH`, its output in engine.log), which reads the jobs from there and imports no job reader. A sweeper killed
half-way leaves its jobs written down, and the kernel lets go of its lock: the next sweeper, the next engine's (at
its start) or `git balanced gc`'s, cleans them up again, which finishes what was half-done (a job's cleanup
removes what is still there, and its branch is never touched).

    s = Sweeper(lead); s.resume()       # at the engine's start: what an earlier one left
    s.mark(jobs)                        # in a pass
    s.end()                             # at its end: handed over, or waited for (GIT_BALANCED_SWEEP_WAIT=1)
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from git_balanced.engine.cleanup import Worker, cleanup_many
from git_balanced.files import Flock, write_atomic
from git_balanced.lead import Lead

JOURNAL = "sweep"  # in .git/balanced/: one file per job whose cleanup is not done yet
LOCK = "sweep.lock"
WAIT_ENV = "GIT_BALANCED_SWEEP_WAIT"  # "1": an ending engine waits for its cleanups instead of handing them over
_ID = re.compile(r"[0-9a-z]{1,64}")  # a job id (state/events.new_id); any other name in the folder is not ours
FIELDS = ("id", "machine", "runner_key", "branch", "writes", "base")  # what a cleanup reads of a job (Worker)
MOST = 64 * 1024  # bytes of one entry read at the most


def waits() -> bool:
    """Whether an ending engine waits for the cleanup of what it landed (GIT_BALANCED_SWEEP_WAIT=1)."""
    return os.environ.get(WAIT_ENV, "").strip().lower() in ("1", "yes", "true", "on")


class Entry:
    """A job as the journal keeps it: what its cleanup reads (cleanup.Worker)."""

    __slots__ = FIELDS
    id: str
    machine: str
    runner_key: str
    branch: str
    writes: str | None
    base: str | None

    def __init__(self, got: dict[str, Any]) -> None:
        self.id, self.machine = got["id"], got["machine"]
        self.runner_key, self.branch = got["runner_key"], got["branch"]
        self.writes, self.base = got.get("writes"), got.get("base")

    @staticmethod
    def read(text: str) -> Entry | None:
        """The entry in `text`, or None when it is not one (half-written by a killed engine, say)."""
        try:
            got = json.loads(text)
        except ValueError:
            return None
        if not isinstance(got, dict) or not all(isinstance(got.get(k), str) for k in FIELDS[:4]):
            return None
        if not all(got.get(k) is None or isinstance(got[k], str) for k in FIELDS[4:]):
            return None
        # Names that become paths (the branch's copy, the shared checkout of a base, a run folder): one that
        # could reach outside its folder (`..`, "" for the whole workers' folder) is no entry of ours.
        singles = [got["machine"], got["runner_key"]] + ([got["base"]] if got.get("base") is not None else [])
        if not all(_name(n) for n in singles) or not all(_name(p) for p in got["branch"].split("/")):
            return None
        return Entry(got)


def _name(name: str) -> bool:
    """Whether `name` is one plain path name: not empty, no `/`, not starting with `.` (so neither `.` nor `..`)."""
    return bool(name) and "/" not in name and "\0" not in name and not name.startswith(".")


class Journal:
    """The jobs whose cleanup is not done yet, one file each in `.git/balanced/sweep/`."""

    def __init__(self, lead: Lead) -> None:
        self.dir = lead.repo.state_dir / JOURNAL

    def add(self, jobs: Sequence[Worker]) -> None:
        self.dir.mkdir(exist_ok=True)
        for j in jobs:  # whole or not at all (`entries` crosses out what it cannot read); its temporary name
            # starts with "." and so is no job id
            write_atomic(self.dir / j.id, json.dumps({name: getattr(j, name) for name in FIELDS}))

    def has(self, jid: str) -> bool:
        return (self.dir / jid).exists()

    def cross_out(self, ids: Sequence[str]) -> None:
        for jid in ids:
            (self.dir / jid).unlink(missing_ok=True)

    def ids(self) -> list[str]:
        """The jobs written down, oldest first (ids sort by time)."""
        try:
            return sorted(n for n in os.listdir(self.dir) if _ID.fullmatch(n))
        except FileNotFoundError:
            return []

    def entries(self) -> list[Entry]:
        """The jobs written down; one that cannot be read is crossed out (`doctor` lists what it leaves)."""
        found, bad = [], []
        for jid in self.ids():
            try:
                with open(self.dir / jid, encoding="utf-8", errors="replace") as f:
                    entry = Entry.read(f.read(MOST))
            except OSError:
                continue
            if entry is None or entry.id != jid:
                bad.append(jid)
            else:
                found.append(entry)
        self.cross_out(bad)
        return found


class Sweeper:
    """Landed workers' housekeeping off the pass: the pass hands their jobs over (`mark`), and a thread of its own
    removes their worktrees, run folders and copies (`cleanup_many`: one `git worktree prune` per machine for
    all that came meanwhile), while the passes go on; `end` leaves what is not done to a process of its own."""

    def __init__(self, lead: Lead) -> None:
        self.lead = lead
        self.journal = Journal(lead)
        self._todo: list[Worker] = []
        self._busy = False
        self._ending = False  # set by `end`: the thread takes no other batch
        self._cond = threading.Condition()

    def resume(self) -> None:
        """Hand over again what an earlier engine or sweeper left written down (nothing, mostly: one listing)."""
        self._take(self.journal.entries())

    def mark(self, jobs: Sequence[Worker]) -> None:
        """Write these jobs down and hand their cleanup over to the thread (started when none runs)."""
        if jobs:
            self.journal.add(jobs)
            self._take(jobs)

    def _take(self, jobs: Sequence[Worker]) -> None:
        if not jobs:
            return
        with self._cond:
            self._todo.extend(jobs)
            if self._busy or self._ending:
                return
            self._busy = True
        try:
            threading.Thread(target=self._run, name="balanced-sweep", daemon=True).start()
        except RuntimeError:  # no thread to be had: written down, they go with the next mark's, or at `end`
            with self._cond:
                self._busy = False
                self._cond.notify_all()

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until every job handed over was cleaned up (at most `timeout` seconds); True when it was."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._busy, timeout)

    def end(self, *, stopped: bool = False, wait: float = 5.0) -> int | None:
        """At the engine's end: the thread takes no other batch, and a process of its own cleans up what is left
        (its pid; None when nothing is). With GIT_BALANCED_SWEEP_WAIT=1 the engine waits for it all first (a
        stopped one `wait` seconds at the most: a machine out of reach must not hold the stop)."""
        if waits():
            self.drain(wait if stopped else None)
        with self._cond:
            self._ending = True
            self._todo.clear()  # written down: the process takes them
        if not self.journal.ids():
            return None
        try:
            return hand_over(self.lead)
        except OSError as exc:  # no process to be had (out of memory, a full disk for its log): they stay written down
            print(f"[balanced] The last landed workers' folders were left to the next engine or `git balanced gc`: "
                  f"no process could be started to remove them ({exc}).", file=sys.stderr, flush=True)
            return None

    def _run(self) -> None:
        try:
            self._batches()
        except Exception as exc:  # noqa: BLE001 — a full disk, say: the jobs stay written down for the next sweeper
            print(f"[balanced] The landed workers' folders were left to the next engine or `git balanced gc`: "
                  f"{exc}", file=sys.stderr, flush=True)
        finally:  # whatever happened, `drain` and `end` do not wait on this thread, and the next `mark` starts one
            with self._cond:
                self._busy = False  # what is in `_todo` goes with the next `mark`'s thread, or at `end`
                self._cond.notify_all()

    def _batches(self) -> None:
        lock = Flock(self.lead.repo.state_dir / LOCK)
        while True:
            with self._cond:
                batch, self._todo = self._todo, []
                if not batch or self._ending:
                    return
            with lock:  # another sweeper (an ending engine's process) may be at it: each job is done once
                sweep(self.lead, self.journal, batch)


def sweep(lead: Lead, journal: Journal, jobs: Sequence[Worker]) -> None:
    """Clean up after those of `jobs` still written down, then cross them out; the sweep lock is held."""
    todo = [j for j in jobs if journal.has(j.id)]
    if not todo:
        return
    try:
        cleanup_many(lead, todo)
    except Exception as exc:  # housekeeping: what is left is found by `doctor`, and removed by `doctor --fix`
        print(f"[balanced] Could not clean up after {', '.join(j.id for j in todo)}: {exc}",
              file=sys.stderr, flush=True)
    journal.cross_out([j.id for j in todo])


def finish(lead: Lead) -> int:
    """Clean up after every job written down, waiting for any other sweeper first; how many there were."""
    journal = Journal(lead)
    if not journal.ids():
        return 0
    with Flock(lead.repo.state_dir / LOCK):
        left = journal.entries()
        sweep(lead, journal, left)
    return len(left)


class Quick:
    """What `finish_here` did: cleanups handed over to a process of its own (other machines'), and whether another
    sweeper held the lock (it then did nothing: that sweeper finishes them)."""

    __slots__ = ("handed", "busy")

    def __init__(self, handed: int = 0, busy: bool = False) -> None:
        self.handed, self.busy = handed, busy


def finish_here(lead: Lead) -> Quick:
    """`gc`'s look at the jobs written down, which never waits: nothing when another sweeper holds the lock; else
    this machine's cleanups now, and other machines' (one out of reach takes ~35 s per call) left to a process
    of its own, as an ending engine leaves them (`hand_over`)."""
    journal = Journal(lead)
    if not journal.ids():
        return Quick()
    lock = Flock(lead.repo.state_dir / LOCK)
    if not lock.take(wait=False):
        return Quick(busy=True)
    try:
        left = journal.entries()
        here = [e for e in left if e.machine == "local"]
        sweep(lead, journal, here)
    finally:
        lock.release()
    away = len(left) - len(here)
    if away:
        try:
            hand_over(lead)
        except OSError:  # no process to be had: they stay written down for the next engine or gc
            away = 0
    return Quick(away)


def hand_over(lead: Lead) -> int:
    """Start the process that finishes the cleanups written down, in its own session: the engine does not wait
    for it, and it outlives the engine. Its pid."""
    from git_balanced import proc

    # `-P` and this package's folder first on PYTHONPATH (proc.ours): the checkout may hold a `git_balanced/`
    # a worker landed, and none of it runs here.
    return proc.spawn_ours("git_balanced.engine.sweep", [lead.branch], cwd=lead.repo.root,
                           log=lead.repo.state_dir / "engine.log")


def main(argv: list[str]) -> int:
    """`python -m git_balanced.engine.sweep BRANCH`, in the lead's checkout: finish the cleanups written down."""
    from git_balanced.git import Repo

    if len(argv) != 1:
        print("usage: python -m git_balanced.engine.sweep BRANCH (started by the engine)", file=sys.stderr)
        return 2
    finish(Lead(Repo.discover(str(Path.cwd())), argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
