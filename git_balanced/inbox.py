"""The inbox: what the lead hears, one entry per event, in words a person reads."""

from __future__ import annotations

import time
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


def entries(repo: Repo, branch: str, since: float | None = None) -> list[dict[str, Any]]:
    """The lead's messages, oldest first."""
    out = []
    for ev in refs.events_of(repo, inbox_ref(branch)):
        if since is not None and ev.time <= since:
            continue
        out.append({"id": ev.sha[:12], "sha": ev.sha, "time": ev.time, "kind": ev.event, **ev.data})
    out.sort(key=lambda e: (e["time"], e["sha"]))
    return out


def clock(ts: float) -> str:
    return time.strftime("%H:%M", time.localtime(ts))
