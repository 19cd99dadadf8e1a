"""What the user sees: words on stdout or stderr, JSON on stdout."""

from __future__ import annotations

import sys
import time

from git_balanced import process
from git_balanced.files import dumps as json_dumps  # json.dumps' text, by json's C encoder: no `json` imported
from git_balanced.files import json_encoder

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    import re
    from collections.abc import Sequence
    from typing import Any

# What a terminal obeys rather than shows: C0 controls, DEL, C1 controls (ESC starts every sequence that
# retitles, clears or recolours it; BEL ends some), and the marks that reorder what follows them on screen.
# Every one of them is a character str.isprintable refuses: text it takes whole has none (tests/test_ui_plain.py),
# and the patterns are compiled (and kept, by re) only for text it does not.
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_OBEYED = f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]"
_OBEYED_IN_A_LINE = f"[\x00-\x1f\x7f-\x9f{_BIDI}]"


def _escaped(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def plain(text: str, *, lines: bool = True) -> str:
    """`text` (a worker's, a plan's: words the person did not write) as the terminal should show it: control
    characters and bidirectional marks written out (`\\x1b`, `\\u202e`); newlines and tabs kept when `lines`.
    JSON output keeps the words as they are."""
    if (text.replace("\n", "").replace("\t", "") if lines else text).isprintable():
        return text
    import re  # here: compiling the patterns is most of this module's import, and most text is printable

    pattern = re.compile(_OBEYED if lines else _OBEYED_IN_A_LINE)
    return pattern.sub(_escaped, text) if pattern.search(text) else text


def say(text: str = "") -> None:
    """A line for the user on stdout, shown plain (a worker's words can be in any line)."""
    print(plain(str(text)), flush=True)


def note(text: str) -> None:
    """A line about what is going on, on stderr, so stdout stays clean for data; shown plain."""
    print(plain(str(text)), file=sys.stderr, flush=True)


def emit_lines(lines: list[str]) -> None:
    """Lines of data for programs (JSON lines), on stdout as they are, in one write."""
    sys.stdout.write("".join(x + "\n" for x in lines))
    sys.stdout.flush()


def emit_json(data: Any) -> None:
    """Data for programs, on stdout, in one write."""
    sys.stdout.write(dumps(data, end="\n"))
    sys.stdout.flush()


_SCALARS = frozenset((str, int, float, bool, type(None)))
_STR = frozenset((str,))
_NESTED = (dict, list, tuple)


class _Encoders:
    """json's C encoders made so far, one per indent level (made once per process)."""

    __slots__ = ("by_level",)

    def __init__(self) -> None:
        self.by_level: dict[int, Any] = {}


def _flat(values: Any) -> bool:
    """Whether every value is empty or a plain scalar: then json's C encoder lays them all out as `indent`
    would (in C, as the board has 10,000 rows to look at)."""
    return _SCALARS.issuperset(map(type, filter(None, values)))


def _encoder(level: int) -> Any:
    """json's C encoder, items separated by the newline and indent `indent=2` puts at `level`."""
    made = process.part(_Encoders).by_level
    enc = made.get(level)
    if enc is None:
        enc = made[level] = json_encoder(sort_keys=True, ensure_ascii=False, default=str,
                                         separators=(",\n" + "  " * level, ": "))
    return enc


class Dumped:
    """JSON text laid out as `dumps` lays out a value at the level it is put at (`text`): `dumps` writes it as it is
    (the board's rows kept as text beside the cache). Not a str: the board's 7 MB of rows are not copied into one."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"Dumped({self.text[:40]!r}...)" if len(self.text) > 40 else f"Dumped({self.text!r})"


def dumps(data: Any, level: int = 0, end: str = "") -> str:
    """`json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, default=str)`, to the byte (and `end` after it).

    With `indent`, json encodes in pure Python, which for the board's 10,000 jobs costs more than all the rest
    of the board: here each container of scalars (a job's row) goes through the C encoder, its items separated
    by the newline and indent that `indent=2` would put there, and only the nesting is done in Python, each
    container's parts joined once (a large one, the board's rows, is copied once more, not at each step). A
    `Dumped` is written as it is."""
    if type(data) is Dumped:
        return data.text + end if end else data.text
    if not data or not isinstance(data, _NESTED):
        return json_dumps(data, sort_keys=True, ensure_ascii=False, default=str) + end
    pad, inner = "  " * level, "  " * (level + 1)
    if isinstance(data, dict):
        if not _STR.issuperset(map(type, data)):  # json's own rules for other keys, indented to this level
            return json_dumps(data, indent=2, sort_keys=True, ensure_ascii=False, default=str).replace("\n",
                                                                                                      "\n" + pad) + end
        if _flat(data.values()):
            return f"{{\n{inner}{_encoder(level + 1)(data)[1:-1]}\n{pad}}}{end}"
        parts = [f"{{\n{inner}"]
        for k in sorted(data):
            parts += (json_dumps(k, ensure_ascii=False), ": ", dumps(data[k], level + 1), f",\n{inner}")
        parts[-1] = f"\n{pad}}}{end}"
        return "".join(parts)
    if _flat(data):
        return f"[\n{inner}{_encoder(level + 1)(data)[1:-1]}\n{pad}]{end}"
    parts = [f"[\n{inner}"]
    for v in data:
        parts += (dumps(v, level + 1), f",\n{inner}")
    parts[-1] = f"\n{pad}]{end}"
    return "".join(parts)


def dumped_list(texts: list[str], level: int) -> Dumped:
    """A list whose items are laid out already (each `dumps(item, level + 1)`), as `dumps` lays it out at `level`:
    the board's 10,000 rows joined once, not looked at one by one again. Not for a list of scalars alone (`dumps`
    writes those through the C encoder)."""
    if not texts:
        return Dumped("[]")
    inner = "  " * (level + 1)
    parts = [f"[\n{inner}"]
    for text in texts:
        parts += (text, f",\n{inner}")
    parts[-1] = f"\n{'  ' * level}]"
    return Dumped("".join(parts))


def tail(text: str, n: int = 10, indent: str = "    ") -> str:
    """The last `n` lines of a worker's or a check's output, indented, shown plain."""
    lines = text.rstrip().splitlines()[-n:]
    return "\n".join(indent + plain(x) for x in lines)


def clock(ts: float, *, seconds: bool = False) -> str:
    """A moment as the lead reads it in messages and on the board: the local hour and minute (and second)."""
    return time.strftime("%H:%M:%S" if seconds else "%H:%M", time.localtime(float(ts)))


class Under:
    """A line of a table under the row above it, starting where the second column starts: a why, a hint. A plain
    class, not a dataclass: `dataclasses` imports `inspect` and `ast`, which the board would pay for at start."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return type(other) is Under and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"Under(text={self.text!r})"


def table(rows: Sequence[Sequence[str] | Under], *, head: Sequence[str] | None = None, indent: int = 0,
          least: Sequence[int] = ()) -> None:
    """Print a table on stdout: each column as wide as its widest cell (a wide character counts two) or its
    `least` width (so a column of a few known words stays put from one run to the next), two spaces apart, the
    last not padded, no box. Not on a terminal (a test, an agent, a pipe) it is plain text; on one the head is
    bold. Cells are shown plain and never read as markup."""
    lines = table_lines(rows, head=head, indent=indent, least=least, bold=sys.stdout.isatty())
    sys.stdout.write("".join(x + "\n" for x in lines))
    sys.stdout.flush()


def table_lines(rows: Sequence[Sequence[str] | Under], *, head: Sequence[str] | None = None, indent: int = 0,
                least: Sequence[int] = (), bold: bool = False) -> list[str]:
    """The lines `table` prints (with the head in bold only when `bold`)."""
    from rich.cells import cell_len  # the width of wide characters, without rich's layout

    cells = [[plain(str(c), lines=False) for c in row] for row in rows if not isinstance(row, Under)]
    shown_head = [plain(h, lines=False) for h in head] if head is not None else None
    every = ([shown_head] if shown_head else []) + cells
    if not every:
        return [" " * indent + plain(row.text, lines=False) for row in rows if isinstance(row, Under)]
    columns = max(len(r) for r in every)
    least = [*least, *[0] * columns]
    widths = [max(least[i], *(cell_len(cells_of[i]) for cells_of in every if i < len(cells_of)))
              for i in range(columns)]

    def line(row: Sequence[str]) -> str:
        padded = [c + " " * (widths[i] - cell_len(c)) for i, c in enumerate(row)]
        return ("  ".join(padded)).rstrip()

    lines = []
    if shown_head:
        top = line(shown_head)
        lines.append(" " * indent + (f"\x1b[1m{top}\x1b[0m" if bold and top else top))
    under = " " * (indent + widths[0] + 2)
    for row in rows:
        if isinstance(row, Under):
            lines.append(under + plain(row.text, lines=False))
        else:
            lines.append(" " * indent + line([plain(str(c), lines=False) for c in row]))
    return lines


def ago(t: float | None) -> str:
    """How long ago the time `t` (seconds since the epoch) was, in a few words: `never` when it is not set."""
    if not t:
        return "never"
    s = int(time.time() - t)
    return f"{s} s ago" if s < 120 else f"{s // 60} min ago"


def session_lines(rec: dict[str, Any], running: bool, *, told: str, spent: str = "",
                  between: Sequence[str] = ()) -> list[str]:
    """The lines of a headless session's status (the lead's, the chief's), from its record: what it was `told`
    (the label), its session, turns and spend (`spent` added), the lines `between` (what only one of them
    has), what it waits on while `running`, and what it said last."""
    lines = [f"  {told:<10}{rec['task']}", f"  session   {rec.get('session') or 'not yet'}",
             f"  turns     {rec['turns']}, the last {ago(rec.get('last_turn_at'))}",
             f"  spent     ${float(rec.get('cost_usd') or 0):.2f}{spent}", *between]
    if running and rec.get("waits_on"):
        lines.append(f"  waits on  {rec['waits_on']}")
    if rec.get("last_words"):
        lines.append(f"  it said   {rec['last_words']}")
    return lines
