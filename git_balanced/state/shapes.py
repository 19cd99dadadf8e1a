"""The types of the fields that readers of thousands take without validation (views.py, the fold), checked once
per event as a chain is read: an event that sets one of them to another type makes its ref malformed, named and
set aside, rather than a crash of the board or of every engine pass."""

from __future__ import annotations

from git_balanced.state.declared import PIECE_NEEDS, Job, StoredPiece, StoredPlan, declared_fields

TYPE_CHECKING = False  # typing is not imported for this: the inbox checks its new lines without it
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    Check = Callable[[Any], bool]


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


def _is_number(v: Any) -> bool:
    return type(v) in (int, float)


def _strs(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


_SIMPLE: dict[str, Check] = {
    "str": _is_str, "int": lambda v: type(v) is int, "float": _is_number, "bool": lambda v: type(v) is bool,
    "None": lambda v: v is None, "tuple[str, ...]": _strs, "dict[str, Any]": lambda v: isinstance(v, dict),
    "dict[str, str]": lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
    "tuple[dict[str, Any], ...]": lambda v: isinstance(v, list) and all(isinstance(x, dict) for x in v),
}


def _of(annotation: str) -> Check:
    """The check of an annotation as views.py writes them (`str | None`, `tuple[str, ...]`)."""
    checks = [_SIMPLE[part.strip()] for part in annotation.split("|")]
    return lambda v: any(c(v) for c in checks)


def _fields_of(kind: type, *skip: str) -> dict[str, Check]:
    """The check of each field of a dataclass the events set (not the fold's own), from its annotation."""
    return {name: _of(annotation) for name, (annotation, _, _) in declared_fields(kind).items()
            if name not in ("id", "state", "created", "updated", "extra", "set_", *skip)}


_PIECE = _fields_of(StoredPiece)


def _pieces(v: Any) -> bool:
    return isinstance(v, list) and all(
        isinstance(p, dict) and all(k in p for k in PIECE_NEEDS) and _is_str(p["id"])
        and all(_PIECE[k](p[k]) for k in p.keys() & _PIECE.keys()) for p in v)


# Every field of a job and a plan, from the types themselves: a field added there is checked from then on, and
# `Job.of` need not check one (the board types every job).
_JOB: dict[str, Check] = _fields_of(Job)
_PLAN: dict[str, Check] = {**_fields_of(StoredPlan, "pieces"), "pieces": _pieces}
_TIME = _of("float | None")
# Schedules: what every reader of one parses (its `when`) or compares (times, counts) without asking first.
_SCHEDULE: dict[str, Check] = {"when": _is_str, "text": _is_str, "lead": _is_str, "name": _is_str,
                               "added_at": _is_number, "last_fired": _TIME, "fired": _of("int | None")}
# Questions and the inbox: what the lead reads in words.
_QUESTION: dict[str, Check] = {"text": _is_str, "lead": _is_str, "kind": _is_str, "answered_at": _TIME}
_INBOX: dict[str, Check] = {"text": _is_str, "kind": _is_str}


def _object_or_none(v: Any) -> bool:
    return v is None or isinstance(v, dict)


def _attachments(v: Any) -> bool:
    return isinstance(v, list) and all(
        isinstance(a, dict) and _is_str(a.get("name")) and _is_str(a.get("blob")) and type(a.get("bytes")) is int
        for a in v)


# A row of Now (channel/now.py): what its listing shows and how it is answered.
_NOW: dict[str, Check] = {"kind": _is_str, "lead": _is_str, "summary": _is_str, "ships": _object_or_none,
                          "check": _object_or_none, "attachments": _attachments, "commit": _of("str | None"),
                          "put_at": _TIME, "answer": _of("str | None"), "answer_text": _of("str | None"),
                          "answered_at": _TIME}
SHAPES: dict[str, dict[str, Check]] = {"jobs": _JOB, "plans": _PLAN, "schedules": _SCHEDULE,
                                       "questions": _QUESTION, "inbox": _INBOX, "now": _NOW}


_ONE = {"jobs": "a job", "plans": "a plan", "schedules": "a schedule", "questions": "a question",
        "inbox": "a message", "now": "a row of Now"}


def wrong_field(kind: str, data: Mapping[str, Any]) -> str | None:
    """Why one event's `data` cannot be read as a `kind`'s (the first field of the wrong type), or None."""
    shape = SHAPES.get(kind)
    if not shape:
        return None
    for key in data.keys() & shape.keys():
        if not shape[key](data[key]):
            value = repr(data[key])
            return f"its field {key!r} is {type(data[key]).__name__} {value[:40]}, which {_ONE[kind]} cannot hold"
    return None
