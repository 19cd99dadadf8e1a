"""The inbox's events as last read, kept in `.git/balanced/cache/inbox.<branch>.json` beside the state's cache: a
reader of the inbox parses that one file and reads, in-process, only the messages that came since (a few), rather
than every message's event.json through git each time.

The file holds the inbox's tip and fold mark as read, and each event (its commit, name, state, lamport, node,
time, data). It answers only while the inbox grew from the tip it holds, under the same mark: a walk from the new
tip that meets a first commit it does not hold (the inbox was set aside and started again) or more than
`MOST_NEW` new commits gives it up, and the inbox is read whole as before. Deleting it is always safe.
"""

from __future__ import annotations

import os

from git_balanced.files import loads, read_cache, write_json  # json's, without importing json (and re)
from git_balanced.git import Repo
from git_balanced.state.events import Event, read_event

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from typing import Any

MOST_NEW = 500  # new commits read in-process at most; past this the inbox is read whole, through git
FORMAT = 1


def _path(repo: Repo, ref: str) -> str:
    return str(repo.state_dir / "cache" / f"inbox.{ref.rsplit('/', 1)[1]}.json")


def _row(ev: Event) -> list[Any]:
    return [ev.sha, ev.event, ev.state, ev.lamport, ev.node, ev.time, ev.data]


def _event(row: list[Any]) -> Event:
    sha, event, state, lamport, node, when, data = row
    return Event(event=event, data=data, state=state, lamport=lamport, node=node, time=when, sha=sha)


def read(repo: Repo, ref: str, tip: str, mark: str | None) -> tuple[list[Event], bool] | None:
    """The inbox's events after `mark` up to `tip`, sorted, from the file and what came since; and whether any
    came since (then the file is worth writing again). None when the file cannot answer."""
    text = read_cache(_path(repo, ref))  # never a FIFO, a link or a folder planted in its place
    if text is None:
        return None
    try:
        held = loads(text)
        if held.get("format") != FORMAT or held.get("mark") != mark:
            return None
        events = [_event(row) for row in held["events"]]
        if held.get("tip") == tip:
            return events, False
        known = {ev.sha for ev in events} | {held["tip"]} | ({mark} if mark else set())
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    new = _since(repo, tip, known)
    if new is None:
        return None
    events += new
    events.sort(key=Event.sort_key)
    return events, True


def _since(repo: Repo, tip: str, known: set[str]) -> list[Event] | None:
    """The events of the commits from `tip` down to `known` ones; None when a path ends before reaching one (a
    chain started again) or there are more than MOST_NEW."""
    todo, seen, out = [tip], set(), []
    while todo:
        sha = todo.pop()
        if sha in known or sha in seen:
            continue
        seen.add(sha)
        if len(seen) > MOST_NEW:
            return None
        ev, parents = read_event(repo, sha)
        if not parents:
            return None
        if ev is not None:
            out.append(ev)
        todo.extend(parents)
    return out


def write(repo: Repo, ref: str, tip: str, mark: str | None, events: list[Event]) -> None:
    """Keep the events read (a failure to write costs the next reader a whole read, never a wrong answer)."""
    path = _path(repo, ref)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_json(path, {"format": FORMAT, "tip": tip, "mark": mark, "events": [_row(ev) for ev in events]},
                   separators=(",", ":"))
    except OSError:
        pass
