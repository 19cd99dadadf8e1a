"""JSON read and written without importing `json`, for the hooks that start on every tool call and turn: the `json`
package imports `re` (and `enum`, `functools`, `collections` with it), which is most of such a hook's start.

`loads` runs the very scanner `json.loads` runs (the C one of `_json`), set up as `json.loads` sets it up, so what
it gives is what `json.loads` gives; wherever that scanner stops short (not JSON, a byte-order mark, no `_json`) it
hands the text to `json.loads`, which gives the same answer or raises its own error. `dumps` writes what
`json.dumps(obj)` writes (its default separators, ASCII only) for dicts, lists, tuples, strings, numbers, booleans
and None, and hands anything else to `json.dumps`. Stdlib only, Python 3.9+.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported for this: it would be a good part of a hook's start
if TYPE_CHECKING:
    from typing import Any

WHITESPACE = " \t\n\r"  # what JSON allows around a value (json.decoder.WHITESPACE)
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}  # as json.decoder's
_DEEPEST = 100  # a value nested deeper than this is written by json.dumps (which also tells a circle)


class _Decoding:
    """The settings json.loads hands its C scanner (json.JSONDecoder's defaults)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


def _c_parts() -> tuple[Any, Any]:
    """json's C scanner, set up as json.loads sets it up, and its C string quoting; None, None without them."""
    try:
        import _json
    except ImportError:  # an interpreter without json's C parts: json itself answers
        return None, None
    decoding: Any = _Decoding()
    return _json.make_scanner(decoding), _json.encode_basestring_ascii


_scan, _quote = _c_parts()


def _skip(text: str, at: int) -> int:
    """The index of the first character at or after `at` that is not JSON whitespace."""
    end = len(text)
    while at < end and text[at] in WHITESPACE:
        at += 1
    return at


def loads(text: str) -> Any:
    """What `json.loads(text)` gives for the string `text` (its error too, raised by json.loads itself)."""
    if _scan is not None and not text.startswith("\ufeff"):
        try:
            value, end = _scan(text, _skip(text, 0))
        except Exception:  # noqa: BLE001 — json.loads says what is wrong, in its own words
            pass
        else:
            if _skip(text, end) == len(text):
                return value
    import json

    return json.loads(text)


def dumps(obj: Any) -> str:
    """What `json.dumps(obj)` gives."""
    try:
        return _written(obj, 0)
    except _NotPlain:
        import json

        return json.dumps(obj)


class _NotPlain(Exception):
    """A value this module leaves to json.dumps."""


def _number(value: Any) -> str:
    if type(value) is int:
        return int.__repr__(value)
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _key(key: Any) -> str:
    """A dict key as json.dumps writes it (always a string)."""
    if type(key) is str:
        return _quote(key)
    if key is True or key is False or key is None:
        return '"' + {True: "true", False: "false", None: "null"}[key] + '"'
    if type(key) in (int, float):
        return '"' + _number(key) + '"'
    raise _NotPlain


def _written(value: Any, depth: int) -> str:
    kind = type(value)
    if _quote is None or depth > _DEEPEST:
        raise _NotPlain
    if kind is str:
        return _quote(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int or kind is float:
        return _number(value)
    if kind is dict:
        return "{" + ", ".join(_key(k) + ": " + _written(v, depth + 1) for k, v in value.items()) + "}"
    if kind is list or kind is tuple:
        return "[" + ", ".join(_written(v, depth + 1) for v in value) + "]"
    raise _NotPlain
