"""Putting work to you: the lead's summary, what would ship, the check run again on the branch, attachments.

The row itself lives in `channel/now.py` with the answers to it; this part measures, since the check is the
landing's."""

from __future__ import annotations

from typing import Any

from git_balanced.channel import now
from git_balanced.channel.attachments import judged
from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.landing.review import review, run_check, upstream_of
from git_balanced.lead import Lead


def measure(lead: Lead) -> tuple[dict[str, Any], dict[str, Any]]:
    """What would ship against the upstream (`N commits · N files · +A −D`) and the check on the branch's
    tree (run again unless its note for this tree and command is there); a branch without an upstream is
    still checked. A check you have not approved refuses, as `review` does."""
    try:
        upstream_of(lead)
    except BalancedError as exc:
        ships: dict[str, Any] = {"words": exc.message, "hint": exc.hint}
        return ships, run_check(lead)
    r = review(lead)
    ships = {"summary": r.summary, "upstream": r.upstream, "commits": r.commits, "files": r.files,
             "insertions": r.insertions, "deletions": r.deletions, "behind": r.behind,
             "pieces": [p["piece"] for p in r.pieces]}
    return ships, r.check if r.commits else run_check(lead)


def put_to_you(where: Lead | Repo | str | None, summary: str,
               attachments: list[str] | tuple[str, ...] = ()) -> dict[str, Any]:
    """Put the lead's work to you: a row under Now with the summary, what would ship, the check, the
    attachments (files, kept as blobs in the row, so `sync` shares them). Returns the row."""
    lead = now.lead_of(where)
    judged(lead, attachments)  # a file that may not be attached is refused before the check runs
    ships, check = measure(lead)
    return now.put(lead, summary, ships=ships, check=check, attachments=attachments)
