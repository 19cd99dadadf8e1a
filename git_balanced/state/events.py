"""Event commits: a readable subject, trailers for the fields that matter, and `event.json` in the tree."""

from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from git_balanced.git import Repo

MODE_FILE = 0o100644
_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32: sortable, no look-alikes


def new_id() -> str:
    """A random id that sorts by time: 9 characters of milliseconds, then 6 of randomness."""
    ms = int(time.time() * 1000)
    head = ""
    for _ in range(9):
        head = _ALPHABET[ms % 32] + head
        ms //= 32
    tail = "".join(secrets.choice(_ALPHABET) for _ in range(6))
    return head + tail


_NODES: dict[str, str] = {}  # by the file's path: a node name never changes once made


def node_id(repo: Repo) -> str:
    """This clone's node name, made once and kept in `.git/balanced/node`."""
    path = repo.state_dir / "node"
    known = _NODES.get(str(path))
    if known:
        return known
    try:
        node = path.read_text().strip()
    except FileNotFoundError:
        node = ""
    if node:
        _NODES[str(path)] = node
        return node
    node = secrets.token_hex(4)
    tmp = path.with_suffix(f".{os.getpid()}")
    tmp.write_text(node + "\n")
    try:
        os.link(tmp, path)  # first writer wins, so every process agrees on one node name
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    return path.read_text().strip()


@dataclass(frozen=True)
class Event:
    """One thing that happened to one thing (a job, a plan, a schedule, the inbox)."""

    event: str
    data: dict[str, Any] = field(default_factory=dict)
    state: str | None = None
    lamport: int = 0
    node: str = ""
    time: float = 0.0
    sha: str = ""

    def to_json(self) -> bytes:
        body = {"event": self.event, "state": self.state, "lamport": self.lamport, "node": self.node,
                "time": self.time, "data": self.data}
        return json.dumps(body, sort_keys=True, ensure_ascii=False).encode()

    @classmethod
    def from_json(cls, raw: bytes, sha: str = "") -> Event:
        body = json.loads(raw)
        return cls(event=body["event"], data=body.get("data") or {}, state=body.get("state"),
                   lamport=int(body.get("lamport", 0)), node=body.get("node", ""),
                   time=float(body.get("time", 0.0)), sha=sha)

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
    """Write the blob, tree and commit of one event as loose objects; returns the commit id."""
    blob = repo.write_blob(ev.to_json())
    tree = repo.write_tree([("event.json", MODE_FILE, blob)])
    return repo.write_commit(tree, parents, message(ev, subject), when=ev.time)


def read_event(repo: Repo, commit_sha: str) -> tuple[Event | None, list[str]]:
    """The event a commit holds (None for a merge of two chains) and the commit's parents."""
    store = repo.store
    commit = store[commit_sha.encode()]
    parents = [p.decode() for p in commit.parents]
    tree = store[commit.tree]
    try:
        _mode, blob_id = tree[b"event.json"]
    except KeyError:
        return None, parents
    ev = Event.from_json(store[blob_id].data, sha=commit_sha)
    if ev.event == "merged":
        return None, parents
    return ev, parents
