"""The chief's notes under a row of Now, kept in the project's own refs (channel/nownotes.py): a project here
is written in this process, one on a machine by `git balanced now note` there."""

from __future__ import annotations

from typing import Any

from git_balanced.channel import now, nownotes
from git_balanced.chief import remote
from git_balanced.chief.projects import project
from git_balanced.lead import Lead, open_lead


def note_here(lead: Lead, row: str, text: str, by: str = "Chief") -> dict[str, Any]:
    """Put a note under the row `row` names in this lead's Now (its number, or its id)."""
    item = now.resolve(lead, row)
    return {**nownotes.add(lead.repo, str(item["id"]), text, by=by), "n": _number(lead, str(item["id"]))}


def _number(lead: Lead, rid: str) -> int | None:
    return next((int(i["n"]) for i in now.numbered(lead) if i["id"] == rid), None)


def note(project_name: str, row: str, text: str, by: str = "Chief") -> dict[str, Any]:
    """Put a note under row `row` (its number in that project, or its id) of project `project_name`; shown by
    `now`, `now --all` and `board` under the row ("Chief: ship this one first: shop-ios builds on it")."""
    p = project(project_name)
    if p.machine:
        out = remote.read_json(p, ["now", "note", row, text, "--by", by])
        return {**out, "project": p.name}
    return {**note_here(open_lead(p.path), row, text, by), "project": p.name}
