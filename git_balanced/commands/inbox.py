"""`git balanced inbox`: what the lead hears."""

from __future__ import annotations

import time

from git_balanced import handles
from git_balanced.channel.inbox import entries
from git_balanced.kit.boardstamp import told
from git_balanced.state.events import node_id
from git_balanced.ui import clock

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from typing import Any


def inbox_command(*, as_json: bool, follow: bool) -> int:
    """Print what the lead heard; with --follow, keep printing as more comes."""
    from git_balanced import ui
    from git_balanced.lead import open_lead

    lead = open_lead()
    seen: set[str] = set()
    me = node_id(lead.repo)

    named: dict[str, str] = {}  # the handles found, kept while it follows

    def read_known() -> handles.Known:
        """Every plan and job as the board reads them, each plan wholly done as its summary and its detail."""
        from git_balanced.engine import folded
        from git_balanced.state.declared import PlanView

        read = folded.read(lead.repo, detail=True)
        return handles.Known({pid: PlanView(pid, st) for pid, st in read.plans.items()}, read.jobs, read.summaries,
                             read.detail or {})

    def show(items: list[dict[str, Any]]) -> None:
        lines = []  # written in one go: an inbox of 10,000 messages is not 10,000 writes
        for e in handles.add_to_entries(lead.repo, lead.branch, [e for e in items if e["sha"] not in seen], named,
                                        read_known):
            seen.add(e["sha"])
            if as_json:
                import json

                lines.append(json.dumps(e, sort_keys=True, ensure_ascii=False))
            else:
                # A line another clone's engine wrote speaks of that clone (its branch, its workers).
                there = f"(clone {e['node']}) " if e.get("node") and e["node"] != me else ""
                handle = f"[{e['handle']}] " if e.get("handle") else ""
                lines.append(f"{clock(e['time'])}  {handle}{there}{ui.plain(e['text'])}")
        if lines and as_json:  # JSON keeps the words exactly as they are
            ui.emit_lines(lines)
        elif lines:
            ui.say("\n".join(lines))

    known: set[str] = set()
    items = entries(lead.repo, lead.branch, known=known)
    told(not follow)  # its words are the inbox's and its clock's: front.py may keep them (kit/boardstamp.py)
    if as_json and not follow:
        ui.emit_json(handles.add_to_entries(lead.repo, lead.branch, items, known=read_known))
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
