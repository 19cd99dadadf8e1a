"""The rows of done jobs kept beside the cache (`.git/balanced/cache/jobs.rows.json`): each made once from its
job's whole state, with its JSON text as `board --json` lays it out, so `board --all` and `board --json` parse no
done job's whole state and write each such row as it was kept (engine/board.py makes the rows)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from git_balanced import ui
from git_balanced.git import Repo
from git_balanced.state import cache

FORMAT = "2"  # the rows kept: made again when this, or what makes them (`rows`' `made_by`), changes
ID_LINE = '\n      "id": '  # where a row's `id` starts in its text as `board --json` lays it out (level 2)


class KeptRow(dict[str, Any]):
    """A done job's row as kept (`rows`), with its text as `board --json` lays it out (`text`, without its
    handle) and the row it was kept as (`was`), to tell whether it changed since."""

    __slots__ = ("text", "was")
    text: str
    was: dict[str, Any]


def rows(repo: Repo, names: list[str], make: Callable[[str, dict[str, Any]], dict[str, Any]],
         made_by: str) -> list[dict[str, Any]]:
    """The rows of the done jobs `names`: `make(name, state)` of each, kept with its JSON text by its ref's tip
    and `made_by` (cache.derived). Copies: a row shown gets its handle."""
    def made(jid: str, state: dict[str, Any]) -> dict[str, Any]:
        row = make(jid, state)
        return {**row, "_json": ui.dumps(row, 2)}

    out: list[dict[str, Any]] = []
    for held in cache.derived(repo, "jobs", "rows", names, made, f"{FORMAT}.{made_by}").values():
        row = KeptRow(held)
        row.text, row.was = row.pop("_json"), held
        out.append(row)
    return out


def laid_out(data: dict[str, Any]) -> dict[str, Any]:
    """The board's data as `board --json` writes it: each kept row still as it was kept (its handle aside) is
    its kept text, its handle put in where `ui.dumps` puts it (before `id`, the keys sorted)."""
    out: list[Any] = []
    for r in data.get("jobs", ()):
        if type(r) is not KeptRow or len(r) != len(r.was) - 1 + ("handle" in r) or any(
                r.get(k) != v for k, v in r.was.items() if k != "_json"):
            out.append(r)
            continue
        at = r.text.find(ID_LINE) + 1
        handle = f'      "handle": {json.dumps(r["handle"], ensure_ascii=False)},\n' if "handle" in r else ""
        out.append(ui.Dumped(r.text[:at] + handle + r.text[at:]) if at else r)
    return {**data, "jobs": out}
