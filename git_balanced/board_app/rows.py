"""The board's data (engine/shown.collect_shown) as the app's rows: each with its key, its cells and what it is
(a question, a review, an idea, a worker), so a key knows what it acts on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.text import Text

from git_balanced.engine.board import under_next
from git_balanced.engine.shown import DOTS, FOLD_AFTER, FOLD_ORDER
from git_balanced.vocab import DONE, JobState

FOLD_KEY = "fold"


@dataclass
class Row:
    """One row of a pane: its key, its cells, and what it is (`question`, `review`, `idea`, `worker`, `fold`,
    `text`), with the id its answer or action takes (`qid`, a row's id, a job's id)."""

    key: str
    cells: list[Text | str]
    kind: str
    target: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def dot(state: str) -> Text:
    mark, colour = DOTS.get(state, ("?", "white"))
    return Text(mark, style=colour)


def now_rows(data: dict[str, Any]) -> list[Row]:
    """What waits on the person: numbered questions, reviews and ideas, then held and failed workers."""
    out = []
    for r in data["now"]:
        first = str(r.get("text", "")).splitlines()[0] if r.get("text") else ""
        if "n" in r and r.get("kind") == "question":
            out.append(Row(f"n{r['n']}", [str(r["n"]), Text(first.split(" ", 1)[-1])], "question", str(r["qid"])))
        elif "n" in r:
            out.append(Row(f"n{r['n']}", [str(r["n"]), Text(first.split(" ", 1)[-1])], str(r["kind"]),
                           str(r["row"]["id"])))
        elif "id" in r:
            words = Text.assemble(dot(r["state"]), f" {r.get('handle') or ''} {r['piece']}: {r['reason']}")
            out.append(Row(r["id"], ["", words], "worker", r["id"]))
        else:
            out.append(Row(f"t{len(out)}", ["", first], "text"))
    return out


def worker_rows(data: dict[str, Any], folded: bool) -> list[Row]:
    """Each worker, the done ones first (past FOLD_AFTER, one line of counts when `folded`), then the live."""
    rows = [r for r in data["jobs"] if not under_next(r)]  # a waiting piece and a paused worker are under Next
    done = [r for r in rows if r["state"] in DONE]
    live = [r for r in rows if r["state"] not in DONE]
    out = []
    if folded and len(done) > FOLD_AFTER:
        counts = {s: sum(1 for r in done if r["state"] == s) for s in FOLD_ORDER}
        words = " · ".join(f"{n} {s}" for s, n in counts.items() if n)
        out.append(Row(FOLD_KEY, ["", "", "", Text(f"{words}  (f opens)", style="bold"), ""], "fold"))
        done = []
    for r in done + live:
        where = " · ".join(b for b in (r["machine"], r["agent"] or "", r["model"] or "", f"#{r['attempt']}") if b)
        cost = f"${r['cost_usd']:.2f}" + (f"/{r['budget_usd']:.2f}" if r.get("budget_usd") else "") \
            if r.get("cost_usd") else ""
        out.append(Row(r["id"], [dot(r["state"]), r.get("handle") or "", r["piece"], Text(r["reason"]),
                                 f"{where} {cost}".strip()], "worker", r["id"], extra=r))
    return out


def seats_words(data: dict[str, Any]) -> str:
    """The machines' check seats for the app's top line, while any is in use: `check seats: local 1/2`; else ''."""
    found = data.get("check_seats") or {}
    if not any(s.get("in_use") for s in found.values()):
        return ""
    return "check seats: " + " · ".join(f"{m} {s.get('in_use', 0)}/{s.get('budget', '?')}" for m, s in found.items())


def next_rows(data: dict[str, Any]) -> list[Row]:
    """What comes: pieces not started yet with why, and the next schedule."""
    out = []
    for i, n in enumerate(data["next"]):
        if "piece" in n and n.get("job"):  # a worker that waits or is paused: its dot, and it opens as a worker
            out.append(Row(f"x{i}", [dot(str(n.get("state") or JobState.QUEUED)), n["piece"], Text(n["words"]),
                               n.get("machine") or ""], "worker", str(n["job"])))
        elif "piece" in n:
            out.append(Row(f"x{i}", ["·", n["piece"], Text(n["words"]), n.get("machine") or ""], "text"))
        else:
            out.append(Row(f"x{i}", ["", "", Text(str(n.get("text", ""))), ""], "text"))
    return out
