"""Appending to and reading event chains, with compare-and-swap and jittered retry."""

from __future__ import annotations

import time

from git_balanced import process
from git_balanced.errors import GitError, StaleRef
from git_balanced.git import STALE_LOCK_SECONDS, Repo, lock_age
from git_balanced.state import readback
from git_balanced.state.events import (
    MAX_LAMPORT,
    Event,
    Malformed,
    node_id,
    parse_event,
    read_event,
    write_event_commit,
)

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

KINDS = ("plans", "jobs")  # the chains named by ref_for; the others are named where they are kept
MAX_TRIES = 200


class Written:
    """Every ref this process moved, in order, with its repository (a part of process.py): a reader that read
    every ref a moment ago reads again only these (cache.read_written), rather than listing them all."""

    def __init__(self) -> None:
        self.moved: list[tuple[str, str]] = []


def write_mark() -> int:
    """A mark in this process's writes: `written_since` it names the refs moved after it."""
    return len(process.part(Written).moved)


def note_written(repo: Repo, ref: str) -> None:
    """Count a ref moved by other means (a claim taken back) among this process's writes."""
    process.part(Written).moved.append((str(repo.common_dir), ref))


def written_since(repo: Repo, mark: int, prefix: str) -> list[str]:
    """The names under `prefix` of the refs this process moved in `repo` since `mark`, each once."""
    where = str(repo.common_dir)
    return list(dict.fromkeys(ref[len(prefix):] for at, ref in process.part(Written).moved[mark:]
                              if at == where and ref.startswith(prefix)))


def ref_for(kind: str, name: str) -> str:
    """`refs/balanced/<kind>/<name>`; the name must already be a checked id."""
    if kind not in KINDS:
        raise ValueError(f"unknown state kind {kind!r}")
    return f"refs/balanced/{kind}/{name}"


def lamport_of(repo: Repo, sha: str | None) -> int:
    """The lamport of the event at `sha`: its trailer, or (when a hand wrote the message) its event.json."""
    if not sha:
        return 0
    known = readback.kept().get(str(repo.common_dir), sha)
    if known is not None:
        return parse_event(known.raw).lamport
    try:
        msg = repo.store[sha.encode()].message.decode(errors="replace")
    except (KeyError, AttributeError):  # a tip that is not a commit: a new chain starts over it at 1
        return 0
    for line in reversed(msg.splitlines()):
        if line.startswith("Balanced-Lamport:"):
            value = line.split(":", 1)[1].strip()
            if value.isdigit() and int(value) <= MAX_LAMPORT:
                return int(value)
            break
    try:
        ev, _parents = read_event(repo, sha)
    except Malformed:
        return 0
    return ev.lamport if ev else 0


def update_with_retry(repo: Repo, ref: str, build: Callable[[str | None], str | None], message: str,
                      tries: int = MAX_TRIES) -> str | None:
    """Point `ref` at the commit `build(tip)` makes, compare-and-swap on that tip; when another writer moved the
    ref first, wait a jittered moment and build again on its new tip. None when `build` declines (returns None)."""
    attempt = 0
    while attempt < tries:
        tip = repo.read_ref(ref)
        new = build(tip)
        if new is None:
            return None
        if repo.cas_ref(ref, new, tip, message=message):
            note_written(repo, ref)
            return new
        if not _waited_for_lock(repo, ref):
            import random  # here: only a writer that lost a race waits a random while

            attempt += 1
            time.sleep(random.uniform(0, 0.002 * min(attempt, 20)))
    raise StaleRef(f"could not update {ref} after {tries} tries")


def _waited_for_lock(repo: Repo, ref: str) -> bool:
    """Wait while the ref's lock is there and young: a live writer lets go of it in a moment, and the lock of
    one that was killed goes stale (and `cas_ref` removes it) within STALE_LOCK_SECONDS. Not a lost race, so
    it does not count as a try. True when there was a lock to wait for."""
    lock = repo.ref_lock(ref)
    start = time.monotonic()
    waited = False
    while (spent := time.monotonic() - start) < STALE_LOCK_SECONDS + 5:
        age = lock_age(lock)
        if age is None or age >= STALE_LOCK_SECONDS:
            return waited
        waited = True
        time.sleep(0.002 if spent < 0.2 else 0.05)
    return False  # a lock that never ages (its clock is wrong): count the try, so the loop still ends


def append(repo: Repo, ref: str, event: str, subject: str, data: dict[str, Any] | None = None,
           state: str | None = None) -> Event:
    """Append one event to the chain at `ref`; retries with jitter when another writer got there first."""
    node = node_id(repo)
    built: list[Event] = []

    def build(tip: str | None) -> str:
        built[:] = [Event(event=event, data=dict(data or {}), state=state, lamport=lamport_of(repo, tip) + 1,
                          node=node, time=time.time())]
        return write_event_commit(repo, built[0], subject, [tip] if tip else [])

    sha = update_with_retry(repo, ref, build, f"balanced: {event}")
    return built[0].replace(sha=sha or "")


def read_chain(repo: Repo, tip: str, known: set[str] | None = None) -> list[Event]:
    """Every event reachable from `tip`, sorted by (lamport, node, sha); commits in `known` (and what lies
    behind them) are not read again, which lets a follower read only what came since its last look."""
    seen: set[str] = set(known or ())
    todo = [tip]
    events: list[Event] = []
    while todo:
        sha = todo.pop()
        if sha in seen:
            continue
        seen.add(sha)
        ev, parents = read_event(repo, sha)
        if ev is not None:
            events.append(ev)
        todo.extend(parents)
    events.sort(key=Event.sort_key)
    return events


def events_of(repo: Repo, ref: str) -> list[Event]:
    """The sorted events of one ref (empty when it does not exist)."""
    tip = repo.read_ref(ref)
    return read_chain(repo, tip) if tip else []


def read_chain_whole(repo: Repo, tip: str) -> list[Event]:
    """`read_chain(repo, tip)`, through two git processes: for a long chain read whole (an inbox of 10,000
    messages), where reading three objects per event in Python costs several times as much. Anything but the
    plain shape (a tree of one file, event.json) is left to `read_chain`, which says what is wrong."""
    try:
        shas = repo.commits(tip)
    except GitError:
        shas = []
    if tip not in shas:  # not a commit (git lists nothing for a blob), or git could not list it
        return read_chain(repo, tip)
    out = repo.cat_file_batch("".join(f"{sha}^{{tree}}\n{sha}:event.json\n" for sha in shas).encode())
    if out is None:
        return read_chain(repo, tip)
    at, events = 0, []
    plain_tree = 18 + len(tip) // 2  # "100644 event.json\0" and the blob's id
    for sha in shas:
        tree, at = _batch_item(out, at)
        blob, at = _batch_item(out, at)
        if tree is None or blob is None or tree[0] != b"tree" or blob[0] != b"blob" \
                or len(tree[1]) != plain_tree or not tree[1].startswith(b"100644 event.json\0"):
            return read_chain(repo, tip)
        ev = parse_event(blob[1], sha=sha)
        if ev.event != "merged":
            events.append(ev)
    events.sort(key=Event.sort_key)
    return events


def _batch_item(out: bytes, at: int) -> tuple[tuple[bytes, bytes] | None, int]:
    """One answer of `git cat-file --batch` at `at`: (type, content), or None when missing; and where the next is."""
    end = out.index(b"\n", at)
    head = out[at:end].split()
    if head[-1] == b"missing" or len(head) != 3:
        return None, end + 1
    size = int(head[2])
    return (head[1], out[end + 1:end + 1 + size]), end + 2 + size
