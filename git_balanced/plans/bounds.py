"""A plan's text at the edge, before it is parsed: read with a size cap from a regular file or stdin, and
scanned once for nesting, numbers and characters no plan has, each problem with its line and key."""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
from collections.abc import Iterable
from datetime import date
from typing import Any

from ruamel.yaml import YAML, YAMLError
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.events import (
    AliasEvent,
    CollectionEndEvent,
    MappingStartEvent,
    NodeEvent,
    ScalarEvent,
    SequenceStartEvent,
)

from git_balanced.errors import BalancedError, SettingsError
from git_balanced.models import DEPTH_MOST, shown, text_problem

PLAN_FILE_MOST = 1024 * 1024  # bytes; the largest real plans are a few KB
NUMBER_MOST = 100  # characters of a number written in the file (Python refuses ints of 4,300 digits)
PATH_MOST = 4096  # bytes of a path, and 255 of one name in it (Linux's PATH_MAX and NAME_MAX)
# The ranges of a plan's numbers and counts (docs/safety/inputs.md): far past any real plan, short of absurd.
BUDGET_MOST = 100_000.0  # USD
SIZE_RANGE = (0.01, 1000.0)
PIECES_MOST = 500
PATHS_MOST = 1000
GLOB_MOST = 1000  # characters
BUDGET_RULE = f"a number of US dollars from 0 to {BUDGET_MOST:,.0f}"
SIZE_RULE = f"a number from {SIZE_RANGE[0]} to {SIZE_RANGE[1]:,.0f} (relative, default 1)"
_NUMBER = re.compile(r"[-+]?\.?[0-9][0-9a-fA-FxXoObB_.eE+-]*")
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a pipe (FIFO)"), (stat.S_ISCHR, "a device"),
          (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))


def read_source(source: str) -> tuple[str, str]:
    """The text of a plan file (or stdin for `-`) and the name messages give it; a folder, a device, a pipe,
    a file over 1 MiB or one that is not UTF-8 is refused, and nothing is read past the cap."""
    if source == "-":
        return _decoded(_stdin_bytes(), "<stdin>"), "<stdin>"
    name = source if text_problem(source, lines=False) is None else shown(source)[1:-1]
    hint = "name a YAML plan file, or - to read the plan from stdin"
    if "\0" in source:
        raise BalancedError(f"The plan path {name} holds a NUL character, which no path can hold.", hint=hint)
    longest = max((len(part.encode("utf-8", "surrogateescape")) for part in source.split("/")), default=0)
    if len(source.encode("utf-8", "surrogateescape")) > PATH_MOST or longest > 255:
        raise BalancedError(f"The plan path {shown(source, 60)} is too long: a path has at most {PATH_MOST:,} "
                            "bytes and each name in it at most 255.", hint=hint)
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; fstat below refuses it anyway.
        fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except FileNotFoundError:
        raise BalancedError(f"There is no plan file {name}.", hint=hint) from None
    except OSError as exc:
        said = "a path that is too long" if exc.errno == errno.ENAMETOOLONG else exc.strerror
        raise BalancedError(f"Cannot read the plan file {name}: {said}.", hint=hint) from None
    try:
        mode = os.fstat(fd).st_mode
        kind = next((said for test, said in _KINDS if test(mode)), None if stat.S_ISREG(mode) else "not a file")
        if kind:
            raise BalancedError(f"The plan file {name} is {kind}, not a regular file.", hint=hint)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(PLAN_FILE_MOST + 1)
    except OSError as exc:
        raise BalancedError(f"Cannot read the plan file {name}: {exc.strerror}.", hint=hint) from None
    finally:
        os.close(fd)
    return _decoded(data, name), name


def _stdin_bytes() -> bytes:
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is not None:
        return bytes(buffer.read(PLAN_FILE_MOST + 1))
    # A text stream without bytes beneath (as tests give): a character is at least a byte.
    return sys.stdin.read(PLAN_FILE_MOST + 1).encode("utf-8", "surrogatepass")


def _decoded(data: bytes, name: str) -> str:
    if len(data) > PLAN_FILE_MOST:
        raise SettingsError(f"{name}: the plan file is larger than {PLAN_FILE_MOST:,} bytes (1 MiB); a plan "
                            "is a list of pieces, a few KB.", hint=f"make {name} smaller: split it into plans")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SettingsError(f"{name}:{line}: not UTF-8 text (byte {exc.start}).",
                            hint=f"save {name} as UTF-8") from None


def scan(text: str, source: str, events: Iterable[Any] | None = None) -> list[tuple[int, str, str]]:
    """Problems no plan may have, as (line, message, hint): nesting deeper than DEPTH_MOST (the scan stops
    there, before a parser that recurses could), numbers too long to read, and text with a NUL, a control
    character or a lone surrogate. Broken YAML raises the parser's YAMLError. `events`: the text's parser
    events, when the caller keeps them (plans/parsed.py); else it is parsed here."""
    found: list[tuple[int, str, str]] = []
    stack: list[list[Any]] = []  # per open collection: [is a mapping, key or index, expecting a key]
    for event in YAML(typ="rt").parse(text) if events is None else events:
        line = event.start_mark.line + 1 if event.start_mark else 0
        if isinstance(event, CollectionEndEvent):
            stack.pop()
            _next(stack)
            continue
        if not isinstance(event, NodeEvent):
            continue
        is_key = bool(stack) and stack[-1][0] and stack[-1][2]
        where = _path(stack) or "the plan"
        if isinstance(event, ScalarEvent):
            found += _scalar(event, line, where, is_key, source)
            if is_key:
                stack[-1][1], stack[-1][2] = event.value, False
                continue
        elif isinstance(event, MappingStartEvent | SequenceStartEvent):
            if len(stack) >= DEPTH_MOST:
                found.append((line, f"{where}: nested more than {DEPTH_MOST} levels deep; a plan has 4 (the "
                              "plan, `pieces`, a piece, its `after` or `paths`).",
                              f"in {source}, write line {line} without the nesting"))
                return found
            stack.append([isinstance(event, MappingStartEvent), None if isinstance(event, MappingStartEvent)
                          else 0, True])
            continue
        if is_key:  # an alias as a key
            stack[-1][2] = False
        elif isinstance(event, AliasEvent | ScalarEvent):
            _next(stack)
    return found


def _next(stack: list[list[Any]]) -> None:
    """After a value: a mapping expects its next key, a list moves to its next item."""
    if not stack:
        return
    if stack[-1][0]:
        stack[-1][1], stack[-1][2] = None, True
    else:
        stack[-1][1] += 1


def _path(stack: list[list[Any]]) -> str:
    out = ""
    for is_map, at, _ in stack:
        if is_map and at is not None:
            out += f".{at}" if out else str(at)
        elif not is_map:
            out += f"[{at}]"
    return out


def _scalar(event: ScalarEvent, line: int, where: str, is_key: bool, source: str) -> list[tuple[int, str, str]]:
    # ruamel marks where a folded (`>`) block folds with \a; such a block cannot hold a control of its own.
    value = event.value.replace("\a", "") if event.style == ">" else event.value
    what = f"{where}: a key" if is_key else where
    if event.style is None and len(value) > NUMBER_MOST and _NUMBER.fullmatch(value):
        return [(line, f"{what}: a number of {len(value):,} characters; numbers here have at most "
                 f"{NUMBER_MOST}.", f"in {source}, write a number in range on line {line}")]
    # A shell command may mean its control characters, and a task's are shown plain wherever it is shown
    # (docs/safety/words.md); every other text is one line of words, and none may hold a NUL.
    free = not is_key and (where.endswith(".run") or where.endswith("task"))
    wrong = text_problem(value, most=sys.maxsize, controls=free)
    if wrong:
        return [(line, f"{what}: {shown(value, 60)}: {wrong}.",
                 f"in {source}, remove the character from line {line}")]
    return []


def said(value: Any) -> str:
    """A value and its kind as a message says it: `"2" (text)`, `a list`."""
    if isinstance(value, bool):
        return f"{str(value).lower()} (true/false)"
    if isinstance(value, int | float):
        said = repr(value) if abs(value) < 1e30 else f"{value:.3g}" if isinstance(value, float) else \
            f"{str(value)[:12]}… ({len(str(abs(value))):,} digits)"
        return f"{said} (a number)"
    if isinstance(value, str):
        return f"{shown(value)} (text)"
    if isinstance(value, date):
        return f"{value.isoformat()} (a date)"
    return {CommentedSeq: "a list", CommentedMap: "a mapping"}.get(type(value), type(value).__name__)


def yaml_error(exc: YAMLError, text: str, source: str) -> SettingsError:
    mark = getattr(exc, "problem_mark", None)
    reason = getattr(exc, "problem", None) or str(exc)
    if mark is None:
        return SettingsError(f"{source}: not valid YAML: {reason}.", hint=f"in {source}, fix the YAML")
    line, col = mark.line + 1, mark.column + 1
    shown_line = (text.split("\n") + [""])[line - 1][:200]
    context = getattr(exc, "context", None)
    said = f"{reason} ({context})" if context else reason
    return SettingsError(f"{source}:{line}:{col}: not valid YAML: {said}.\n"
                         f"    {line} | {shown_line}\n    {' ' * len(str(line))} | {' ' * min(col - 1, 200)}^",
                         hint=f"in {source}, fix line {line}")


__all__ = ["BUDGET_MOST", "BUDGET_RULE", "GLOB_MOST", "PATHS_MOST", "PIECES_MOST", "PLAN_FILE_MOST", "SIZE_RANGE",
           "SIZE_RULE", "read_source", "said", "scan", "yaml_error"]
