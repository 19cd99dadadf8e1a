"""The rows of done jobs kept beside the cache (`.git/balanced/cache/jobs.rows.json`): each made once from its
job's whole state, with its JSON text as `board --json` lays it out, so `board --all` and `board --json` parse no
done job's whole state and write each such row as it was kept (engine/board.py makes the rows)."""

from __future__ import annotations

from git_balanced import ui
from git_balanced.files import dumps  # json.dumps' text, without importing json (and re)
from git_balanced.git import Repo
from git_balanced.state import cache

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

FORMAT = "2"  # the rows kept: made again when this, or what makes them (`rows`' `made_by`), changes
ID_LINE = '\n      "id": '  # where a row's `id` starts in its text as `board --json` lays it out (level 2)


class KeptRow(dict[str, "Any"]):
    """A done job's row as kept (`rows`), with its text as `board --json` lays it out (`text`, without its
    handle), and whether a field other than its handle was set since (`changed`: then the text is not its own)."""

    __slots__ = ("changed", "text")
    changed: bool
    text: str

    def __setitem__(self, key: str, value: Any) -> None:
        if key != "handle":
            self.changed = True
        super().__setitem__(key, value)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self.changed = True
        super().update(*args, **kwargs)

    def __delitem__(self, key: str) -> None:
        self.changed = True
        super().__delitem__(key)

    def pop(self, *args: Any) -> Any:
        self.changed = True
        return super().pop(*args)

    def setdefault(self, key: str, default: Any = None) -> Any:
        self.changed = self.changed or key not in self
        return super().setdefault(key, default)


def rows(repo: Repo, names: list[str], make: Callable[[str, dict[str, Any]], dict[str, Any]],
         made_by: str) -> list[dict[str, Any]]:
    """The rows of the done jobs `names`: `make(name, state)` of each, kept with its JSON text by its ref's tip
    and `made_by` (cache.derived). Copies: a row shown gets its handle."""
    def made(jid: str, state: dict[str, Any]) -> dict[str, Any]:
        row = make(jid, state)
        return {**row, "_json": ui.dumps(row, 2)}

    out: list[dict[str, Any]] = []
    def whole(held: Any) -> bool:
        return isinstance(held, dict) and isinstance(held.get("_json"), str)

    for held in cache.derived(repo, "jobs", "rows", names, made, f"{FORMAT}.{made_by}", whole).values():
        row = KeptRow(held)
        row.text, row.changed = dict.pop(row, "_json"), False
        out.append(row)
    return out


def laid_out(data: dict[str, Any]) -> dict[str, Any]:
    """The board's data as `board --json` writes it: each kept row still as it was kept (its handle aside) is
    its kept text, its handle put in where `ui.dumps` puts it (before `id`, the keys sorted)."""
    out: list[Any] = []
    for r in data.get("jobs", ()):
        if type(r) is not KeptRow or r.changed:
            out.append(r)
            continue
        at = r.text.find(ID_LINE) + 1
        handle = f'      "handle": {dumps(r["handle"], ensure_ascii=False)},\n' if "handle" in r else ""
        out.append(ui.Dumped(r.text[:at] + handle + r.text[at:]) if at else r)
    return {**data, "jobs": out}
