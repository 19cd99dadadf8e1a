"""How news reaches the running chief, at a cost set by what is live, not by how many projects are registered.

A project here is read in the chief's own process: each look (every few seconds) compares a stamp of its
questions' and Now's ref folders (channel/tochief.py `stamp`, a few stat calls) with the one of its last read,
and reads what waits on the chief (`held`) only when it moved, or when a question held is due to come to the
person. An idle look starts no process; it marks the chief seen there (a file's time) every half minute.

A project on a machine is read by one call at a time, in a thread of its own: `git balanced chief held --json
--since STAMP --wait SECONDS` there, which answers at once with what changed since its last answer, or waits
there (looking at the stamp) until a lead passes a question on, or says `unchanged` after SECONDS. So a quiet
machine's project costs one call a minute, and its news still comes the moment it is made.

A project that cannot be read is said to the chief once (and once again when it can be read again), and is
tried again every minute, not every look.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from git_balanced.channel import presence, tochief
from git_balanced.chief import home
from git_balanced.chief.projects import REF, Project, list_projects
from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.lead import open_lead

WAIT = 50.0  # seconds a call on a machine waits there for news (under presence.CHIEF_GONE_AFTER)
RETRY = 60.0  # seconds before a project that could not be read is tried again
BLANK = 5.0  # seconds between calls on a machine whose answers keep having no stamp (its refs in a reftable)


@dataclass
class Here:
    """What was last read of a project on this machine."""

    project: Project
    repo: Repo | None = None
    stamp: str = ""
    due: float = float("inf")
    retry_at: float = 0.0
    seen_at: float = 0.0  # when it last marked the chief seen there (monotonic)


@dataclass
class Said:
    """What the chief was told of each project that could not be read, so it is told once."""

    errors: dict[str, str] = field(default_factory=dict)


class Watch:
    """The chief's news loop: `look()` reads what changed in every project and returns (project, what waits on
    the chief there) for each read, and a line for each project newly unreadable or readable again."""

    def __init__(self, pass_after: float, *, wait: float = WAIT, retry: float = RETRY) -> None:
        self.pass_after, self.wait, self.retry = pass_after, wait, retry
        self.here: dict[str, Here] = {}
        self.away: dict[str, threading.Thread] = {}
        self.came: queue.SimpleQueue[tuple[Project, dict[str, Any] | None, str]] = queue.SimpleQueue()
        self.said = Said()
        self.stopping = threading.Event()
        self._tip: str | None = None
        self._home: Repo | None = None
        self._projects: list[Project] = []

    @property
    def home(self) -> Repo:
        """The chief's repository, opened once."""
        if self._home is None:
            self._home = home.repo()
        return self._home

    def projects(self) -> list[Project]:
        """The registered projects, read again only when their ref moved."""
        tip = self.home.read_ref(REF)
        if tip != self._tip or not self._projects:
            self._tip, self._projects = tip, list_projects()
        return self._projects

    def look(self) -> tuple[list[tuple[Project, dict[str, Any]]], list[str]]:
        """Read what changed: every project here, and what the calls on machines brought since the last look."""
        found: list[tuple[Project, dict[str, Any]]] = []
        lines: list[str] = []
        names = set()
        for p in self.projects():
            names.add(p.name)
            if p.machine:
                self._follow(p)
                continue
            got, error = self._read_here(p)
            self._note(p, got, error, found, lines)
        for name in [n for n in self.here if n not in names]:
            del self.here[name]
        while True:
            try:
                p, got, error = self.came.get_nowait()
            except queue.Empty:
                break
            if p.name in names:
                self._note(p, got, error, found, lines)
        return found, lines

    def stop(self) -> None:
        self.stopping.set()

    def _note(self, p: Project, got: dict[str, Any] | None, error: str,
              found: list[tuple[Project, dict[str, Any]]], lines: list[str]) -> None:
        before = self.said.errors.get(p.name)
        if error:
            if error != before:
                self.said.errors[p.name] = error
                lines.append(f"{p.name} ({p.where}) could not be read: {error} It is tried again every "
                             f"{int(self.retry)} s; you hear when it can be read again.")
                print(f"{time.ctime()} {p.name}: {error}", file=sys.stderr, flush=True)
            return
        if before is not None:
            del self.said.errors[p.name]
            lines.append(f"{p.name} ({p.where}) can be read again.")
        if got is not None:
            found.append((p, got))

    def _read_here(self, p: Project) -> tuple[dict[str, Any] | None, str]:
        """What waits on the chief in a project here when anything changed since its last read (None when
        nothing did), or why it could not be read."""
        last = self.here.get(p.name)
        if last is None or last.project != p:
            last = self.here[p.name] = Here(p)
        if time.monotonic() < last.retry_at:
            return None, self.said.errors.get(p.name, "")
        try:
            if last.repo is None:
                last.repo = open_lead(p.path).repo
            mark = tochief.stamp(last.repo)
            if mark and mark == last.stamp and time.time() < last.due:
                if time.monotonic() - last.seen_at >= tochief.SEEN_EVERY:
                    presence.mark_chief_seen(last.repo)
                    last.seen_at = time.monotonic()
                return None, ""
            got = tochief.held(open_lead(p.path), self.pass_after)
        except (BalancedError, OSError) as exc:
            last.repo, last.stamp, last.retry_at = None, "", time.monotonic() + self.retry
            return None, getattr(exc, "message", None) or str(exc)
        last.stamp, last.due, last.seen_at = mark, tochief.due(got, self.pass_after), time.monotonic()
        return got, ""

    def _follow(self, p: Project) -> None:
        """Make sure a thread follows the project on its machine."""
        t = self.away.get(p.name)
        if t is None or not t.is_alive():
            t = self.away[p.name] = threading.Thread(target=self._away, args=(p,), daemon=True,
                                                     name=f"chief-news-{p.name}")
            t.start()

    def _away(self, p: Project) -> None:
        """One call at a time on the project's machine, each waiting there for news; until stopped or removed. A
        git balanced there older than `--since` is asked the whole of it, every RETRY/2 seconds."""
        from git_balanced.chief import there

        since, older, blank = "", False, 0
        while not self.stopping.is_set() and p in self._projects:
            args = ["chief", "held", "--json", "--pass-after", repr(float(self.pass_after))]
            args += [] if older else ["--since", since, "--wait", repr(float(self.wait))]
            try:
                got = there.data(p, args, timeout=self.wait + 60)
            except BalancedError as exc:
                if not older and "--since" in exc.message:
                    older = True
                    continue
                self.came.put((p, None, exc.message))
                self.stopping.wait(self.retry)
                continue
            if not isinstance(got, dict):
                self.came.put((p, None, "`git balanced chief held --json` printed no object there: update it."))
                self.stopping.wait(self.retry)
                continue
            blank = 0 if got.get("stamp") else blank + 1
            since = str(got.get("stamp") or "")
            self.came.put((p, None if got.get("unchanged") else got, ""))
            if older or blank:  # no stamp: one too fresh to trust (ask again soon), or none there (a reftable)
                self.stopping.wait(self.retry / 2 if older else 1.0 if blank == 1 else BLANK)
