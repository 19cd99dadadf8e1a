"""Event commits: a readable subject, trailers for the fields that matter, and `event.json` in the tree."""

from __future__ import annotations

import math
import os
import re
import time

from git_balanced import process
from git_balanced.errors import BalancedError
from git_balanced.files import dumps, loads  # json's, without importing json (and re's engine for it)
from git_balanced.git import Repo
from git_balanced.state import readback

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

MODE_FILE = 0o100644
MODE_TREE = 0o040000  # the only other thing an event's tree holds: a row's `attachments/` (channel/now.py)

# What a reader takes of one event.json: far more than git balanced writes (a plan of a hundred pieces is some
# tens of kilobytes, nested five deep), and little enough that a hostile one costs a reader nothing.
MAX_EVENT_BYTES = 1 << 20
MAX_DEPTH = 32
MAX_NAME = 200  # an event's name, state or node
MAX_LAMPORT = 1 << 53  # a count of events, which also survives a round through a JSON reader's float
MAX_TIME = 1e11  # seconds since 1970: the year 5138, and still a date every reader can print
_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32: sortable, no look-alikes


def new_id() -> str:
    """A random id that sorts by time: 9 characters of milliseconds, then 6 of randomness."""
    ms = int(time.time() * 1000)
    head = ""
    for _ in range(9):
        head = _ALPHABET[ms % 32] + head
        ms //= 32
    tail = "".join(_ALPHABET[b % 32] for b in os.urandom(6))  # 256 is a multiple of 32: no bias
    return head + tail


class _Nodes:
    """Node names this process has read, by the file's path: a node name never changes once made."""

    __slots__ = ("names",)

    def __init__(self) -> None:
        self.names: dict[str, str] = {}


def node_id(repo: Repo) -> str:
    """This clone's node name, made once and kept in `.git/balanced/node`."""
    path = repo.state_dir / "node"
    nodes = process.part(_Nodes).names
    known = nodes.get(str(path))
    if known:
        return known
    try:
        node = path.read_text().strip()
    except FileNotFoundError:
        node = ""
    if node:
        nodes[str(path)] = node
        return node
    node = os.urandom(4).hex()
    tmp = path.with_suffix(f".{os.getpid()}")
    tmp.write_text(node + "\n")
    try:
        os.link(tmp, path)  # first writer wins, so every process agrees on one node name
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    return path.read_text().strip()


class Event:
    """One thing that happened to one thing (a job, a plan, a schedule, the inbox). A plain class with slots, not
    a dataclass: the board and the inbox start without `dataclasses` (it imports `inspect` and `ast`)."""

    __slots__ = ("event", "data", "state", "lamport", "node", "time", "sha")
    _FIELDS = __slots__

    def __init__(self, event: str, data: dict[str, Any] | None = None, state: str | None = None, lamport: int = 0,
                 node: str = "", time: float = 0.0, sha: str = "") -> None:
        self.event = event
        self.data: dict[str, Any] = {} if data is None else data
        self.state = state
        self.lamport = lamport
        self.node = node
        self.time = time
        self.sha = sha

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, k) for k in self._FIELDS)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._values() == other._values()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  # as a dataclass with a dict field: not hashable

    def __repr__(self) -> str:
        return "Event(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self._FIELDS) + ")"

    def replace(self, **changes: Any) -> Event:
        """A copy with `changes` made (what `dataclasses.replace` did)."""
        return Event(**{**{k: getattr(self, k) for k in self._FIELDS}, **changes})

    def to_json(self) -> bytes:
        body = {"event": self.event, "state": self.state, "lamport": self.lamport, "node": self.node,
                "time": self.time, "data": self.data}
        return dumps(body, sort_keys=True, ensure_ascii=False, allow_nan=False).encode()

    @classmethod
    def from_json(cls, raw: bytes, sha: str = "") -> Event:
        """The event `raw` holds; `Malformed` says why when it is not one git balanced reads."""
        return parse_event(raw, sha)

    def sort_key(self) -> tuple[int, str, str]:
        return (self.lamport, self.node, self.sha)


def message(ev: Event, subject: str) -> str:
    """The commit message: the subject a person reads, then the trailers."""
    subject = " ".join(subject.split()) or ev.event
    trailers = [f"Balanced-Event: {ev.event}"]
    if ev.state:
        trailers.append(f"Balanced-State: {ev.state}")
    trailers += [f"Balanced-Lamport: {ev.lamport}", f"Balanced-Node: {ev.node}"]
    return f"{subject}\n\n" + "\n".join(trailers) + "\n"


def write_event_commit(repo: Repo, ev: Event, subject: str, parents: list[str]) -> str:
    """Write the blob, tree and commit of one event as loose objects; returns the commit id. An event its own
    readers would call malformed (NaN, too large, too deep) is refused here, before any ref moves to it."""
    try:
        raw = ev.to_json()
        parse_event(raw)
    except ValueError as exc:
        raise BalancedError(f"A {ev.event!r} event was not written: {getattr(exc, 'why', exc)}.",
                            hint="this is a bug in git balanced; please report it with the command you ran.") from None
    blob = repo.write_blob(raw)
    tree = repo.write_tree([("event.json", MODE_FILE, blob)])
    text = message(ev, subject)
    sha = repo.write_commit(tree, parents, text, when=ev.time)
    readback.kept().put(str(repo.common_dir), sha, readback.Kept(raw, tuple(parents), text.partition("\n")[0]))
    return sha


class Malformed(BalancedError, ValueError):
    """Why an event commit, or the event.json in it, is not one git balanced can read. Readers of many refs set
    the ref aside with `why`; a path that reads one and did not expect it still ends in one message, exit 1."""

    def __init__(self, why: str) -> None:
        super().__init__(f"A state ref is malformed: {why}.",
                         hint="`git balanced doctor` lists malformed refs, `git balanced doctor --fix` removes them.")
        self.why = why


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise Malformed(f"its event.json holds a number too large for a reader ({text[:40]})")
    return value


def _no_constant(name: str) -> float:
    raise Malformed(f"its event.json holds {name}, which is not JSON")


_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def _check_depth(text: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH before parsing: a parser (and every reader after it) recurses."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return  # too few brackets to nest that deep: the common case costs two counts
    depth = 0
    for m in _TOKENS.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise Malformed(f"its event.json nests deeper than {MAX_DEPTH}")
        elif c in "]}":
            depth -= 1


def _strings(value: Any) -> Iterator[str]:
    """Every string in a parsed JSON value, keys included (iteratively: the depth is already bounded)."""
    todo = [value]
    while todo:
        v = todo.pop()
        if isinstance(v, str):
            yield v
        elif isinstance(v, dict):
            yield from v.keys()
            todo.extend(v.values())
        elif isinstance(v, list):
            todo.extend(v)


def _name(body: dict[str, Any], key: str, default: str | None) -> str | None:
    value = body.get(key, default)
    if value is None and default is None:
        return None
    if not isinstance(value, str) or len(value) > MAX_NAME:
        raise Malformed(f"its event.json's {key!r} is {_shown(value)}, not a short string")
    return value


def _shown(value: Any) -> str:
    text = dumps(value)[:40] if not isinstance(value, float) or math.isfinite(value) else str(value)
    return f"{type(value).__name__} {text}"


def parse_event(raw: bytes, sha: str = "") -> Event:
    """The one reader of an event.json: its size, depth, encoding and every field's type checked, so whatever
    a hand, a tool or another clone put there, what comes out is an `Event` or a `Malformed` saying why."""
    if len(raw) > MAX_EVENT_BYTES:
        raise Malformed(f"its event.json is {len(raw)} bytes, more than a reader takes ({MAX_EVENT_BYTES})")
    try:
        text = raw.decode("utf-8")  # strict: an encoded surrogate is refused here, not passed on
    except UnicodeDecodeError:
        raise Malformed("its event.json is not UTF-8") from None
    _check_depth(text)
    try:
        body = loads(text, parse_float=_finite, parse_constant=_no_constant)
    except (RecursionError, ValueError) as exc:
        if isinstance(exc, Malformed):
            raise
        raise Malformed(f"its event.json is not JSON ({str(exc)[:80]})") from None
    if _SURROGATE.search(text):
        for s in _strings(body):
            try:
                s.encode("utf-8")
            except UnicodeEncodeError:
                raise Malformed("its event.json holds a lone surrogate (\\ud800-\\udfff), which no text can") from None
    if not isinstance(body, dict):
        raise Malformed(f"its event.json is {_shown(body)}, not an object")
    event = _name(body, "event", "")
    if not event:
        raise Malformed("its event.json names no event")
    lamport = body.get("lamport", 0)
    if type(lamport) is not int or not 0 <= lamport <= MAX_LAMPORT:
        raise Malformed(f"its event.json's lamport is {_shown(lamport)}, not a count from 0 to 2^53")
    when = body.get("time", 0.0)
    if type(when) not in (int, float) or not 0 <= when <= MAX_TIME:
        raise Malformed(f"its event.json's time is {_shown(when)}, not a time")
    data = body.get("data")
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise Malformed(f"its event.json's data is {_shown(data)}, not an object")
    return Event(event=str(event), data=data, state=_name(body, "state", None), lamport=lamport,
                 node=str(_name(body, "node", "")), time=float(when), sha=sha)


def _object(repo: Repo, sha: bytes, what: str, kind: bytes) -> Any:
    """The object `sha` of type `kind`, or `Malformed`: missing, of another type, or one dulwich cannot parse."""
    try:
        obj = repo.store[sha]
        found = obj.type_name
    except KeyError:
        raise Malformed(f"{what} {sha.decode()[:12]} is not in the repository") from None
    except Exception as exc:  # dulwich's parse errors of a corrupt object have no common base worth importing
        raise Malformed(f"{what} {sha.decode()[:12]} cannot be read ({type(exc).__name__})") from None
    if found != kind:
        raise Malformed(f"{what} {sha.decode()[:12]} is a {found.decode()}, not a {kind.decode()}")
    return obj


def read_event(repo: Repo, commit_sha: str) -> tuple[Event | None, list[str]]:
    """The event a commit holds (None for a merge of two chains) and the commit's parents; `Malformed` when the
    commit, its tree or its event.json is not what git balanced writes: a tree of `event.json` (and, for a row
    of Now, an `attachments` folder). An event this process wrote or read before is parsed from its kept bytes."""
    where = str(repo.common_dir)
    known = readback.kept().get(where, commit_sha)
    if known is not None:
        kept = parse_event(known.raw, sha=commit_sha)
        return (None if kept.event == "merged" else kept), list(known.parents)
    commit = _object(repo, commit_sha.encode(), "its commit", b"commit")
    parents = [p.decode() for p in commit.parents]
    tree = _object(repo, commit.tree, f"the tree of {commit_sha[:12]}", b"tree")
    try:
        entries = {e.path: (e.mode, e.sha) for e in tree.items()}
    except Exception as exc:  # a tree dulwich parses lazily fails here
        raise Malformed(f"the tree of {commit_sha[:12]} cannot be read ({type(exc).__name__})") from None
    if not entries and len(parents) > 1:
        return None, parents  # a merge of two chains written without an event
    if b"event.json" not in entries:
        raise Malformed("its commits hold no event.json")
    others_ = [p for p, (m, _) in entries.items() if p != b"event.json" and (p, m) != (b"attachments", MODE_TREE)]
    if others_:
        others = ", ".join(sorted(p.decode(errors="replace") for p in others_))[:80]
        raise Malformed(f"commit {commit_sha[:12]} holds more than event.json ({others})")
    mode, blob_id = entries[b"event.json"]
    if mode not in (MODE_FILE, 0o100755):
        raise Malformed(f"the event.json of {commit_sha[:12]} is not a file (mode {mode:o})")
    blob = _object(repo, blob_id, f"the event.json of {commit_sha[:12]}", b"blob")
    ev = parse_event(blob.data, sha=commit_sha)
    if ev.event == "merged":
        return None, parents
    if mode == MODE_FILE and len(entries) == 1:  # the plain shape: read back the same from the bytes alone
        readback.kept().put(where, commit_sha, readback.Kept(blob.data, tuple(parents)))
    return ev, parents
