"""The inbox: what the lead hears, one entry per event, in words a person reads."""

from __future__ import annotations

from git_balanced import process, ui
from git_balanced.channel import inbox_cache
from git_balanced.channel.names import inbox_ref as inbox_ref
from git_balanced.git import Repo
from git_balanced.state import archived, health, refs
from git_balanced.state.events import Event, read_event

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from typing import Any

# Where a malformed inbox ref's old tip is kept when a message must be posted past it: nothing is lost,
# and `git balanced doctor` lists it there.
SET_ASIDE = health.BROKEN


def post(repo: Repo, lead_branch: str, text: str, *, kind: str = "info", key: str | None = None,
         again: bool = False, **data: Any) -> str:
    """Tell the lead something; returns the entry's id (its commit). A message with a `key` can be told
    `again` after a crash (a redo of what it tells): then one already posted under that key is not doubled."""
    if key is not None and again:
        told = keyed(repo, lead_branch, key)
        if told is not None:
            return told
    _set_aside_if_malformed(repo, inbox_ref(lead_branch))
    body = {"text": text, "kind": kind, **data, **({"key": key} if key is not None else {})}
    ev = refs.append(repo, inbox_ref(lead_branch), kind, text, body)
    if key is not None:  # its parent, read in-process: whether it went on top of the tip known
        parents = [p.decode() for p in repo.store[ev.sha.encode()].parents]
        _keys_of(repo, lead_branch).posted(ev.sha, parents, key)
    return ev.sha


# How far back `keyed` looks: a redo follows its crash closely (the next pass, or the next engine's first), so
# a message posted before the crash is among the newest; a long inbox is never read whole for it. A reader shows a
# key once all the same (`_once_by_key`), so one found too late to be skipped is never shown twice.
RECENT = 200


class _Keys:
    """The keys of one inbox's newest messages as this process knows them: read by one walk of its newest RECENT
    commits on the first keyed post (after a crash, a new process walks again), then added to as it posts; a tip
    another writer moved (a sync, another engine) is walked only down to the commits already read."""

    __slots__ = ("keys", "seen", "tip")

    def __init__(self) -> None:
        self.tip: str | None = None
        self.seen: set[str] = set()
        self.keys: dict[str, str] = {}

    def posted(self, sha: str, parents: list[str], key: str) -> None:
        if parents == ([self.tip] if self.tip else []):  # on top of what was read: known whole still
            self.tip = sha
        self.seen.add(sha)
        self.keys[key] = sha
        self.trim()

    def trim(self) -> None:
        """At most RECENT keys, the newest: a key further back is not looked for, as a walk would not reach it."""
        for old in list(self.keys)[:-RECENT]:
            del self.keys[old]


class Keyed:
    """This process's `_Keys` of each inbox, by repository (its common folder) and lead branch."""

    def __init__(self) -> None:
        self.inboxes: dict[tuple[str, str], _Keys] = {}


def _keys_of(repo: Repo, branch: str) -> _Keys:
    return process.part(Keyed).inboxes.setdefault((str(repo.common_dir.resolve()), branch), _Keys())


def keyed(repo: Repo, branch: str, key: str) -> str | None:
    """The id of the lead's message posted under `key`, among the newest RECENT, if there is one."""
    tip = repo.read_ref(inbox_ref(branch))
    known = _keys_of(repo, branch)
    if tip != known.tip:
        todo: list[str] = [tip] if tip else []
        walked: set[str] = set()
        found: dict[str, str] = {}
        while todo and len(walked) < RECENT:
            sha = todo.pop(0)  # breadth first: the newest of two chains that a sync merged come first
            if sha in walked or sha in known.seen:
                continue
            walked.add(sha)
            try:
                ev, parents = read_event(repo, sha)
            except health.UNREADABLE:
                process.part(Keyed).inboxes.pop((str(repo.common_dir.resolve()), branch), None)
                return None  # a broken inbox: the post sets it aside and starts a new one
            if ev is not None and isinstance(ev.data.get("key"), str):
                found.setdefault(ev.data["key"], sha)  # the newest of a key comes first
            todo.extend(parents)
        for k, sha in reversed(found.items()):  # newest last, as `posted` adds them
            known.keys.pop(k, None)
            known.keys[k] = sha
        known.trim()
        known.seen |= walked
        known.tip = tip
    return known.keys.get(key)


def entries(repo: Repo, branch: str, since: float | None = None,
            known: set[str] | None = None) -> list[dict[str, Any]]:
    """The lead's messages, oldest first; with `known`, only those whose commits are not in it (and every
    commit read is added to it), so following the inbox reads each message once."""
    ref = inbox_ref(branch)
    # The first read goes whole through git, several times faster for a long inbox; later ones read what came.
    tip = repo.read_ref(ref) if known else repo.list_refs(ref).get(ref)
    if tip is None or (known is not None and tip in known):
        return []
    out = []
    # What `gc` folded away (state/archive.py) is not read: only what came after its mark, which is few.
    folded = archived.inbox_mark(repo, ref)
    try:
        events = _read(repo, ref, tip, folded, known)
    except health.UNREADABLE as exc:
        health.found(repo, inbox_ref(branch), tip, health.why_unreadable(repo, tip, exc))
        return []
    wrong = health.wrong_shape("inbox", events)
    if wrong:
        health.found(repo, inbox_ref(branch), tip, wrong)
        return []
    if known is not None:
        known.update(ev.sha for ev in events)
        known.add(tip)
    for ev in events:
        if since is not None and ev.time <= since:
            continue
        out.append({"id": ev.sha[:12], "sha": ev.sha, "time": ev.time, "kind": ev.event, "node": ev.node, **ev.data})
    out.sort(key=lambda e: (e["time"], e["sha"]))
    return _once_by_key(out)


def _read(repo: Repo, ref: str, tip: str, folded: str | None, known: set[str] | None) -> list[Event]:
    """The inbox's events up to `tip`, after its fold mark; with `known`, only those not in it. A first read
    takes what the inbox's cache holds (channel/inbox_cache.py) and reads only what came since."""
    if known:
        return refs.read_chain(repo, tip, known | ({folded} if folded else set()))
    kept = inbox_cache.read(repo, ref, tip, folded)
    if kept is not None and not kept[1]:
        return kept[0]
    if kept is not None:
        events = kept[0]
    elif folded:
        events = refs.read_chain(repo, tip, {folded})
    else:
        events = refs.read_chain_whole(repo, tip)
    if not health.wrong_shape("inbox", events):  # a malformed inbox is not kept: its readers name it each time
        inbox_cache.write(repo, ref, tip, folded, events)
    return events


def _once_by_key(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One message per key (a landing's line is keyed by its job and commit): two clones that both told of one
    landing, before they synced, show it once, the earlier."""
    seen: set[str] = set()
    out = []
    for e in items:
        key = e.get("key")
        if isinstance(key, str):
            if key in seen:
                continue
            seen.add(key)
        out.append(e)
    return out



def _set_aside_if_malformed(repo: Repo, ref: str) -> None:
    """A message must reach the lead even when its inbox ref was broken (pointed at a blob, a missing object, a
    commit that holds no event): the old tip moves to `refs/balanced/broken/inbox/...`, named once, and the
    inbox starts a new chain. Only the tip is read, so a long inbox costs nothing more per post."""
    tip = repo.read_ref(ref)
    if tip is None:
        return
    try:
        ev, parents = read_event(repo, tip)
        why = health.wrong_shape("inbox", [ev]) if ev is not None else None
        if not why and (ev is not None or parents):
            return
        why = why or "its commit holds no event.json"
    except health.UNREADABLE as exc:
        why = health.why_unreadable(repo, tip, exc)
    kept = health.set_aside(repo, ref, tip)
    if kept:
        ui.note(f"[balanced] {ref} was malformed ({why}); its old tip is kept as {kept} and a new inbox started. "
                f"`git balanced doctor` lists it, `git balanced doctor --fix` removes it.")
