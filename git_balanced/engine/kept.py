"""The rows of done jobs kept beside the cache (`.git/balanced/cache/jobs.rows.txt`, state/fragments.py): each
made once from its job's whole state, with its JSON text as `board --json` lays it out, so `board --all` and
`board --json` parse no done job's whole state, and `board --json` writes each such row as it was kept, reading of
it only a few fields (engine/board.py makes the rows)."""

from __future__ import annotations

import itertools
import os

from git_balanced import ui
from git_balanced.files import dumps, loads  # json.dumps' text, without importing json (and re)
from git_balanced.git import Repo
from git_balanced.state import cache

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

FORMAT = "3"  # the rows kept: made again when this, or what makes them (`rows`' `made_by`), changes
# What the board reads of a done job's row besides its text (the slim rows of `board --json`).
META = ("id", "plan", "piece", "state", "updated", "landed", "node")
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


class SlimRow(KeptRow):
    """A kept row with only the fields the board reads of a done row (META), for `board --json`: its text is the
    row in full."""

    __slots__ = ()


def rows(repo: Repo, names: list[str], make: Callable[[str, dict[str, Any]], dict[str, Any]],
         made_by: str, order: tuple[str, ...] = (), slim: bool = False) -> list[dict[str, Any]]:
    """The rows of the done jobs `names`: `make(name, state)` of each, kept with its JSON text by its ref's tip
    and `made_by` (cache.fragments). Each row in full, its fields in the order `order` names them (as `make` makes
    them); or, `slim`, only the fields the board reads of a done row (META) with its text, for `board --json`,
    which writes the text as it is. Copies: a row shown gets its handle."""
    def made(jid: str, state: dict[str, Any]) -> tuple[Any, str]:
        row = make(jid, state)
        return [row[k] for k in META], ui.dumps(row, 2)

    stamp = f"{FORMAT}.{made_by}"
    held = cache.fragments(repo, "jobs", "rows", names, made, stamp, _valid)
    done = cache.SETTLED["jobs"]
    out: list[dict[str, Any]] = []
    junk = set()
    keys = len(order)
    quoted = {state: f'\n      "state": {_handle(state)},\n' for state in done}  # each done row's, looked for
    for jid, (meta, text) in held.items():
        state = meta[3]
        if slim and state in quoted:  # a done row, read only for META: its text told laid out without parsing it
            if not _laid_out(jid, meta, text, keys, quoted[state]):
                junk.add(jid)
                continue
            row: KeptRow = SlimRow(zip(META, meta, strict=True))
        else:
            whole = _whole(jid, meta, text, order)
            if whole is None or not _laid_out(jid, meta, text, keys):
                junk.add(jid)
                continue
            row = _full(whole, order)
        row.text, row.changed = text, False
        out.append(row)
    if junk:  # a text that is not this job's row as kept (tampered with, or left half-written): made again
        again = cache.fragments(repo, "jobs", "rows", sorted(junk), made, stamp, _valid, junk)
        for meta, text in again.values():
            row = SlimRow(zip(META, meta, strict=True)) if slim and meta[3] in done else _full(loads(text), order)
            row.text, row.changed = text, False
            out.append(row)
    return out


def _full(whole: dict[str, Any], order: tuple[str, ...]) -> KeptRow:
    """A row in full from its parsed text: the fields `order` names first, in that order, then the rest."""
    row = KeptRow({k: whole.pop(k) for k in order if k in whole})
    dict.update(row, whole)
    return row


def _whole(jid: str, meta: Any, text: str, order: tuple[str, ...]) -> dict[str, Any] | None:
    """The row a kept text holds, or None when it is not a row of job `jid` that agrees with its kept fields
    (`meta`, META's) and has every field `order` names."""
    try:
        whole = loads(text)
    except ValueError:
        return None
    if type(whole) is not dict or whole.get("id") != jid or not whole.keys() >= set(order) or \
            [whole.get(k) for k in META] != meta:
        return None
    return whole


def _laid_out(jid: str, meta: Any, text: str, keys: int, state_line: str | None = None) -> bool:
    """Whether a kept text is laid out as `rows` keeps a row of job `jid` (ui.dumps's, at level 2), told without
    parsing it: an object of `keys` fields (when not 0), whose first `id` is `jid` and whose `state` is its kept
    one (`meta`; `state_line`, its line, when made already), with none of the control characters a terminal acts
    on (a text written as it is must not hold one)."""
    if meta[0] != jid or not text.startswith(_FIRST) or not text.endswith(_LAST) or \
            (keys and text.count(_KEY) != keys):
        return False
    at = text.find(ID_LINE)
    if at < 0 or not text.startswith(f"{ID_LINE}{_handle(jid)},{_AFTER_ID}", at) or \
            (state_line or f'\n      "state": {_handle(meta[3])},\n') not in text:
        return False
    # JSON escapes every character below U+0020: a text that holds one was not written here (each looked for at
    # C's speed: those a terminal acts on, ESC starting its sequences). C1 characters and DEL are written as they
    # are, in rows made here too, so they tell nothing.
    return "\x1b" not in text and "\r" not in text and "\x08" not in text and "\x07" not in text and \
        "\x00" not in text


_FIRST = '{\n      "'  # how a kept row's text starts and ends, and what follows its `id` (its keys sorted)
_LAST = '\n    }'
_KEY = '\n      "'  # where each of its fields starts (a nested one is indented further)
_AFTER_ID = '\n      "in_the_way": '


def _valid(meta: Any) -> bool:
    """Whether a kept row's fields are of the shape `rows` writes them (META's, in order): their types, told by one
    lookup (a row each look at --all)."""
    return type(meta) is list and tuple(map(type, meta)) in _SHAPES


_STRING_OR_NONE = (str, type(None))
# META's types: id, plan, piece and state strings, the time a number, the landing and the node a string or None
_SHAPES = frozenset(itertools.product((str,), (str,), (str,), (str,), (int, float), _STRING_OR_NONE,
                                      _STRING_OR_NONE))


def _handle(handle: str) -> str:
    """`dumps(handle, ensure_ascii=False)`, without its call for a handle of plain characters."""
    if handle.isprintable() and '"' not in handle and "\\" not in handle:
        return f'"{handle}"'
    return dumps(handle, ensure_ascii=False)


def files_stamp(here: str, names: tuple[str, ...]) -> list[str]:
    """The stamp of the module at `here` and of the package's files `names` (paths under git_balanced/): each
    one's size and mtime in ns ("-" when missing), so that what a kept text was made by is known again."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(here)))
    parts = []
    for path in (os.path.abspath(here), *(os.path.join(package, name) for name in names)):
        try:
            st = os.stat(path)
            parts.append(f"{st.st_size}.{st.st_mtime_ns}")
        except OSError:
            parts.append("-")
    return parts


def laid_out(data: dict[str, Any]) -> dict[str, Any]:
    """The board's data as `board --json` writes it: its rows laid out once, as one text (`ui.dumps` of the list,
    at its level): each kept row still as it was kept (its handle aside) is its kept text, its handle put in where
    `ui.dumps` puts it (before `id`, the keys sorted); a slim row changed since, or under Now, is its text's fields
    with its own put over them."""
    texts: list[str] = []
    for r in data.get("jobs", ()):
        kind = type(r)
        if kind is not KeptRow and kind is not SlimRow:
            texts.append(ui.dumps(r, 2))
        elif r.changed:
            texts.append(ui.dumps({**loads(r.text), **r} if kind is SlimRow else r, 2))
        else:
            text = r.text
            at = text.find(ID_LINE) + 1
            if not at:
                texts.append(ui.dumps(r, 2))
            elif "handle" in r:
                texts.append(f'{text[:at]}      "handle": {_handle(r["handle"])},\n{text[at:]}')
            else:
                texts.append(text)
    now = [{**loads(r.text), **r} if type(r) is SlimRow else r for r in data.get("now", ())]
    out = {**data, "jobs": ui.dumped_list(texts, 1)}
    return {**out, "now": now} if "now" in data else out
