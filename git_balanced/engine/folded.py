"""The board as it prints (done workers folded into one line of counts) reads each plan wholly done as one summary
(state/summary.py), made here from its jobs' briefs: what the printed board shows of them, and no more."""

from __future__ import annotations

import os
import sys

from git_balanced.engine import kept
from git_balanced.git import Repo
from git_balanced.handles import Who, cores
from git_balanced.state import summary
from git_balanced.state.declared import PlanView
from git_balanced.vocab import ENDED_BADLY

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from typing import Any

# What makes a summary, beside this file: the package's files whose stamps key the kept summaries.
MADE_BY = ("handles.py", "vocab.py", os.path.join("state", "summary.py"), os.path.join("state", "declared.py"))


def read(repo: Repo, detail: bool = False) -> summary.Read:
    """Plans, jobs and summaries as state/summary.read gives them, summed up by `make` (with each plan's detail,
    when asked: the board that shows every job)."""
    return summary.read(repo, make, _made_by(), detail=detail, valid=_valid)


def make(pid: str, plan: dict[str, Any], briefs: dict[str, dict[str, Any]]
         ) -> tuple[dict[str, Any], list[list[Any]]] | None:
    """A plan wholly done as the board shows it, or None when a job of it may show on its own (one that ended
    badly can wait on you under Now). Its summary, for the printed board: how many of its jobs it shows (`rows`,
    the dismissed ones not), by state (`counts`), the longest piece name among them (`width`: the board lines up
    its pieces), what its jobs spent (`spent`: summed in their order, as the board sums them), and each job's
    handle without its machine or plan, by the job's lead (`cores`: a live job's handle is qualified when another
    names the same). Its detail, for the board of every job: each job's id, bare handle, machine, lead and whether
    it is shown (not dismissed), in order."""
    if any(st["state"] in ENDED_BADLY for st in briefs.values()):
        return None
    counts: dict[str, int] = {}
    width = 0
    for st in briefs.values():
        f = st["fields"]
        if f.get("dismissed"):
            continue
        counts[st["state"]] = counts.get(st["state"], 0) + 1
        width = max(width, len(f.get("piece", "")))
    spent = sum([brief_cost(st) for st in briefs.values()])
    who = {jid: Who.of(jid, st) for jid, st in briefs.items()}
    by_lead: dict[str, list[str]] = {}
    named = cores(who, {pid: PlanView(pid, plan)})
    for jid, core in named.items():
        by_lead.setdefault(who[jid].lead, []).append(core)
    detail = [[jid, named[jid], who[jid].machine, who[jid].lead, not st["fields"].get("dismissed")]
              for jid, st in briefs.items()]
    return {"rows": sum(counts.values()), "counts": counts, "width": width, "spent": spent, "cores": by_lead}, detail


def _valid(summaries: dict[str, Any], detail: dict[str, Any] | None) -> bool:
    """Whether kept summaries (and their detail, when read) are of the shape `make` makes them."""
    for s in summaries.values():
        if not (isinstance(s, dict) and type(s.get("rows")) is int and isinstance(s.get("counts"), dict)
                and all(isinstance(k, str) and type(n) is int for k, n in s["counts"].items())
                and type(s.get("width")) is int and type(s.get("spent")) is float and isinstance(s.get("cores"), dict)
                and all(isinstance(c, list) for c in s["cores"].values())):
            return False
    return detail is None or all(isinstance(rows, list) and all(map(_row, rows)) for rows in detail.values())


def _row(r: Any) -> bool:
    """Whether a job's detail is of the shape `make` makes it: [id, bare handle, machine, lead, shown]."""
    return type(r) is list and len(r) == 5 and type(r[0]) is str and type(r[1]) is str and type(r[2]) is str and \
        type(r[3]) is str and type(r[4]) is bool


def brief_cost(st: dict[str, Any]) -> float:
    """A done job's spend as the board counts it, from its brief (what it cost, else what it spent before)."""
    cost = st["fields"].get("cost_usd")
    return float(cost if cost is not None else st["fields"].get("spent_before", 0.0))


def merged(summaries: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The summaries of the plans a board shows, as one: rows and counts added up, the widest piece."""
    counts: dict[str, int] = {}
    for s in summaries.values():
        for state, n in s["counts"].items():
            counts[state] = counts.get(state, 0) + n
    return {"rows": sum(s["rows"] for s in summaries.values()), "counts": counts,
            "width": max((s["width"] for s in summaries.values()), default=0), "plans": sorted(summaries)}


def _made_by() -> str:
    """The stamp of what makes the summaries: each file's (size, mtime in ns), and the Python that sums."""
    parts = kept.files_stamp(__file__, MADE_BY)
    parts.append(".".join(map(str, sys.version_info[:2])))
    return ".".join(parts)
