"""The inbox: what the lead hears, one entry per event, in words a person reads."""

from __future__ import annotations

from typing import Any

from git_balanced.git import Repo
from git_balanced.state import refs


def inbox_ref(branch: str) -> str:
    """`refs/balanced/inbox/<lead-branch>`, with `/` in the branch kept as `%2F` (one ref per branch)."""
    return "refs/balanced/inbox/" + branch.replace("%", "%25").replace("/", "%2F")


def post(repo: Repo, lead_branch: str, text: str, *, kind: str = "info", **data: Any) -> str:
    """Tell the lead something; returns the entry's id (its commit)."""
    ev = refs.append(repo, inbox_ref(lead_branch), kind, text, {"text": text, "kind": kind, **data})
    return ev.sha


def entries(repo: Repo, branch: str, since: float | None = None,
            known: set[str] | None = None) -> list[dict[str, Any]]:
    """The lead's messages, oldest first; with `known`, only those whose commits are not in it (and every
    commit read is added to it), so following the inbox reads each message once."""
    tip = repo.read_ref(inbox_ref(branch))
    if tip is None or (known is not None and tip in known):
        return []
    out = []
    events = refs.read_chain(repo, tip, known)
    if known is not None:
        known.update(ev.sha for ev in events)
        known.add(tip)
    for ev in events:
        if since is not None and ev.time <= since:
            continue
        out.append({"id": ev.sha[:12], "sha": ev.sha, "time": ev.time, "kind": ev.event, **ev.data})
    out.sort(key=lambda e: (e["time"], e["sha"]))
    return out

