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


def clock(ts: float) -> str:
    return time.strftime("%H:%M", time.localtime(ts))


def inbox_command(*, as_json: bool, follow: bool) -> int:
    """Print what the lead heard; with --follow, keep printing as more comes."""
    from git_balanced import ui
    from git_balanced.lead import open_lead

    lead = open_lead()
    seen: set[str] = set()

    def show(items: list[dict[str, Any]]) -> None:
        for e in items:
            if e["sha"] in seen:
                continue
            seen.add(e["sha"])
            if as_json:
                import json
                import sys

                sys.stdout.write(json.dumps(e, sort_keys=True, ensure_ascii=False) + "\n")
                sys.stdout.flush()
            else:
                ui.say(f"{clock(e['time'])}  {e['text']}")

    known: set[str] = set()
    items = entries(lead.repo, lead.branch, known=known)
    if as_json and not follow:
        ui.emit_json(items)
        return 0
    if not items and not follow:
        ui.say("Nothing yet.")
    show(items)
    try:
        while follow:
            time.sleep(1.0)
            show(entries(lead.repo, lead.branch, known=known))
    except KeyboardInterrupt:
        pass
    return 0
