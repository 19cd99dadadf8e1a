"""Notes under a row of Now: a line the chief (or the person) puts under a review, an idea or a question
("Chief: ship this one first: shop-ios builds on it"), shown under the row by `now`, `board` and their --json.

Each noted row has a chain of its own, `refs/balanced/now-notes/<row id>`, one `noted` event per note, kept in
the project's own refs (so `git balanced sync` shares them) and never in the row's chain, whose compare-and-swap
decides which answer counts.
"""

from __future__ import annotations

from typing import Any

from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.state.refs import append, events_of

KIND = "now-notes"
PREFIX = f"refs/balanced/{KIND}/"
NOTED = "noted"
MAX_CHARS = 500


def ref_of(row_id: str) -> str:
    return PREFIX + row_id


def add(repo: Repo, row_id: str, text: str, *, by: str = "Chief") -> dict[str, Any]:
    """Put a note under the row `row_id` (a checked id of a row or question), said by `by`; the note as stored."""
    text, by = " ".join(text.split()), " ".join(by.split())[:40] or "Chief"
    if not text:
        raise BalancedError("A note needs some text.", hint='git balanced now note ID "ship this one first"')
    if len(text) > MAX_CHARS:
        raise BalancedError(f"A note holds {MAX_CHARS} characters at most; this one has {len(text)}.",
                         hint="say it in a line; a longer word belongs in the lead's inbox (`git balanced tell`).")
    ev = append(repo, ref_of(row_id), NOTED, f"{by} on {row_id}: {text[:60]}", {"row": row_id, "by": by, "text": text})
    return {"row": row_id, "by": by, "text": text, "at": ev.time}


def noted(repo: Repo) -> dict[str, list[dict[str, Any]]]:
    """Every note, by row id, oldest first: one listing of the refs, then only the noted rows' chains."""
    out: dict[str, list[dict[str, Any]]] = {}
    for ref in repo.list_refs(PREFIX):
        notes = [{"row": str(ev.data.get("row")), "by": str(ev.data.get("by") or "Chief"),
                  "text": str(ev.data.get("text") or ""), "at": ev.time}
                 for ev in events_of(repo, ref) if ev.event == NOTED]
        if notes:
            out[ref[len(PREFIX):]] = notes
    return out


def lines(notes: list[dict[str, Any]], pad: str) -> list[str]:
    """The notes as the board shows them under their row: `Chief: ship this one first`."""
    return [f"{pad}{n['by']}: {n['text']}" for n in notes]
