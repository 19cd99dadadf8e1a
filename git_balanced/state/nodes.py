"""Nodes: the clones that share one plan through `sync`. Each node's engine says it is alive in
`refs/balanced/nodes/<node>`, and another node may take a job over only when that word has gone stale.

The heartbeat is one commit with no parent and the empty tree, rewritten in place (compare-and-swap) at
most every few seconds: no chain grows, no event is written per pass, and `sync` carries it like any other
ref (each node pushes only its own, since only it writes it)."""

from __future__ import annotations

import json
import math
import time
from typing import Any

from git_balanced.files import write_json
from git_balanced.git import Repo
from git_balanced.state.events import node_id
from git_balanced.state.refs import update_with_retry

NODES = "refs/balanced/nodes/"
_TRAILER = "Balanced-Heartbeat:"


def node_ref(node: str) -> str:
    """`refs/balanced/nodes/<node>`."""
    return NODES + node


def beat_time(repo: Repo, sha: str) -> float:
    """When the heartbeat commit `sha` was written (0.0 when it says nothing readable)."""
    try:
        msg = repo.store[sha.encode()].message.decode(errors="replace")
    except (KeyError, AttributeError):  # missing, or not a commit: a heartbeat another hand wrote
        return 0.0
    for line in msg.splitlines():
        if line.startswith(_TRAILER):
            try:
                when = float(line[len(_TRAILER):])
            except ValueError:
                return 0.0
            return when if math.isfinite(when) else 0.0
    return 0.0


def beat(repo: Repo, every: float, now: float | None = None) -> bool:
    """Rewrite this node's heartbeat when the one there is `every` seconds old or older; True when written."""
    node = node_id(repo)
    when = time.time() if now is None else now

    def build(tip: str | None) -> str | None:
        if tip and when - beat_time(repo, tip) < every:
            return None
        tree = repo.write_tree([])
        msg = f"{node}: its engine is alive\n\nBalanced-Node: {node}\n{_TRAILER} {when:.3f}\n"
        return repo.write_commit(tree, [], msg, when=when)

    return update_with_retry(repo, node_ref(node), build, "balanced: heartbeat") is not None


def beats(repo: Repo) -> dict[str, float]:
    """Every node's last heartbeat this clone knows of, by node."""
    return {ref[len(NODES):]: beat_time(repo, sha) for ref, sha in repo.list_refs(NODES).items()}


# -- what this clone saw of the others, through its fetches ------------------------------------------------
def _seen_path(repo: Repo) -> Any:
    return repo.state_dir / "nodes-seen.json"


def _load_seen(repo: Repo) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(_seen_path(repo).read_text())
    except (FileNotFoundError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def observe(repo: Repo, fetched: dict[str, str], now: float | None = None) -> None:
    """Note, after a fetch, each other node's heartbeat commit: since when this clone has seen that very
    commit (by its own clock), and that it looked now. A heartbeat that did not change across fetches
    longer apart than the limit is silence this clone saw for itself, whatever the other clock says."""
    when = time.time() if now is None else now
    me = node_id(repo)
    seen = _load_seen(repo)
    for ref, sha in fetched.items():
        if not ref.startswith(NODES) or ref[len(NODES):] == me:
            continue
        node = ref[len(NODES):]
        entry = seen.get(node)
        if not isinstance(entry, dict) or entry.get("sha") != sha:
            entry = {"sha": sha, "seen": when}
        entry["fetched"] = when
        seen[node] = entry
    write_json(_seen_path(repo), seen)


def silent_since(repo: Repo, node: str, limit: float, now: float | None = None) -> float | None:
    """When `node`'s engine last said it was alive, if it has been silent longer than `limit` seconds: by its
    own heartbeat's time, and by this clone's fetches, which saw that same heartbeat for longer than the
    limit. None while it may still be alive, or when this clone never heard of it (nothing to judge by)."""
    when = time.time() if now is None else now
    if node == node_id(repo):
        return None
    tip = repo.read_ref(node_ref(node))
    if tip is None:
        return None
    entry = _load_seen(repo).get(node)
    if not isinstance(entry, dict) or entry.get("sha") != tip:
        return None
    last = beat_time(repo, tip)
    watched = float(entry.get("fetched", 0.0)) - float(entry.get("seen", 0.0))
    if watched <= limit or when - last <= limit:
        return None
    return last
