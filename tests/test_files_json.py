"""files.loads, files.dumps and files.json_encoder give what json gives without importing it: json.loads on the
state's own files and on JSON with every kind of escape, number and nesting, as text and as bytes (json's own
error for what is not JSON), and json.dumps' text with the options the package writes with; and typed.py's
NamedTuple and Generic stand in for typing's."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from git_balanced import files, typed

TEXTS = ['  {"a":1}\n\r\t', '"\\ud83d\\ude00 \\ud800 \\udfff \\u00e9\\/\\b\\f\\n\\r\\t"', "[1E5, 1e-2, -0.0, 2E+3]",
         '{"a": NaN, "b": Infinity, "c": -Infinity}', '{"dup": 1, "dup": 2}', "12", "true", "null", '{"é": "ü 漢字"}',
         str(10**300), "1.7976931348623157e309", "[5e-324, 123456789.125, -2.25e-7]",
         '{"n": [[[[{"a": [null, true, false]}]]]], "b": 123456789012345678901234567890}',
         json.dumps({"tips": {"refs/balanced/jobs/x": "ab" * 20}, "stamp": [1, 2, 3]}, separators=(",", ":"))]
BAD = ["", " ", "{", '{"a": }', '{"a": 1,}', "[1 2]", '{"a": 1} x', "\ufeff{}", '"\x01"', '"\\x"', "01", "[.5]",
       "nul", '"\\ud83d', "[1]]", "1 2", "\u3000[1]", "[" + "9" * 5000 + "]"]


def same(a: object, b: object) -> bool:
    """Equal, NaN to NaN included, and of the same types all the way down."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)  # type: ignore[index]
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))  # type: ignore[arg-type]
    return a == b


def outcome(call: object, arg: object) -> tuple[str, object]:
    try:
        return "value", call(arg)  # type: ignore[operator]
    except Exception as exc:  # noqa: BLE001 — the error is what is compared
        return "error", (type(exc), str(exc))


def encodings(text: str) -> list[str | bytes]:
    raw = text.encode("utf-8", "surrogatepass")
    return [text, raw, b"\xef\xbb\xbf" + raw, text.encode("utf-16", "surrogatepass"), text.encode("utf-32-le",
                                                                                                  "surrogatepass")]


@pytest.mark.parametrize("text", TEXTS + BAD)
def test_loads_gives_what_json_loads_gives(text: str) -> None:
    for given in encodings(text):
        ours, theirs = outcome(files.loads, given), outcome(json.loads, given)
        assert ours[0] == theirs[0] and (same(ours[1], theirs[1]) if ours[0] == "value" else ours == theirs), given


def read_alike(paths: list[Path]) -> None:
    """Each file, whole and line by line, as bytes and as text, read by files.loads as json.loads reads it."""
    for path in paths:
        data = path.read_bytes()
        for part in [data, data.decode("utf-8", "replace"), *data.splitlines()]:
            ours, theirs = outcome(files.loads, part), outcome(json.loads, part)
            assert ours[0] == theirs[0] and (same(ours[1], theirs[1]) if ours[0] == "value" else ours == theirs), path


def test_loads_reads_what_write_json_writes(tmp_path: Path) -> None:
    made = tmp_path / "made.json"
    files.write_json(made, {"jobs": {"j": ["ab" * 20, {"state": "landed", "fields": {"at": 1.5e9, "x": "é"}}]}},
                     separators=(",", ":"))
    read_alike([made])


class Word(str):
    pass


VALUES = [None, [], {}, "é\u2028\x00 😀", 5, 1e100, -0.0, 10**40, (1, "two"), Word("w"), {Word("k"): Word("v")},
          {"b": 1, "a": [1.5, float("nan"), float("inf"), -float("inf"), True, None, {"z": {"y": []}}]},
          {1: 2, 2.5: None, None: True, False: -0.0}, {"x": {1, 2}}, {(1, 2): 3}, {"b": 1, 2: 3}]
OPTIONS = [{}, {"ensure_ascii": False}, {"sort_keys": True, "ensure_ascii": False, "default": str},
           {"separators": (",", ":")}, {"separators": (",\n    ", ": "), "sort_keys": True, "default": str},
           {"indent": 2, "sort_keys": True, "ensure_ascii": False, "default": str}, {"allow_nan": False}]


@pytest.mark.parametrize("how", OPTIONS, ids=str)
def test_dumps_writes_what_json_dumps_writes(how: dict[str, object]) -> None:
    for value in VALUES:
        assert outcome(lambda v: files.dumps(v, **how), value) == outcome(lambda v: json.dumps(v, **how), value)
    loop: list[object] = []
    loop.append(loop)
    assert outcome(lambda v: files.dumps(v, **how), loop) == outcome(lambda v: json.dumps(v, **how), loop)


def test_an_encoder_after_an_error_writes_the_next_value_whole() -> None:
    encode = files.json_encoder(sort_keys=True)
    shared = {"a": 1}
    with pytest.raises(TypeError):
        encode([shared, {1, 2}])
    assert encode([shared, shared]) == json.dumps([shared, shared], sort_keys=True)


def test_reading_and_writing_import_no_json() -> None:
    code = ("import sys; from git_balanced import files; "
            "d = files.loads(sys.argv[1]); print(files.dumps(d, sort_keys=True, ensure_ascii=False, default=str)); "
            "print(sorted({'json', 'typing'} & set(sys.modules)))")
    cp = subprocess.run([sys.executable, "-c", code, TEXTS[-1]], capture_output=True, text=True, check=True)
    assert cp.stdout.splitlines() == [json.dumps(json.loads(TEXTS[-1]), sort_keys=True), "[]"], cp


def test_a_named_tuple_is_typings() -> None:
    from typing import NamedTuple

    class Theirs(NamedTuple):
        """A pair."""

        a: int
        b: str = "x"

        def both(self) -> str:
            return f"{self.a}{self.b}"

    class Ours(typed.NamedTuple):
        """A pair."""

        a: int
        b: str = "x"

        def both(self) -> str:
            return f"{self.a}{self.b}"

    for kind in (Theirs, Ours):
        one = kind(1)  # type: ignore[call-arg]
        assert one == (1, "x") and one.both() == "1x" and one._replace(b="y").b == "y"  # type: ignore[attr-defined]
        assert kind._fields == ("a", "b") and kind._field_defaults == {"b": "x"}  # type: ignore[attr-defined]
        named = {k: getattr(v, "__forward_arg__", v) for k, v in kind.__annotations__.items()}
        assert kind.__doc__ == "A pair." and named == {"a": "int", "b": "str"}
    assert repr(Ours(2, "z")).endswith("Ours(a=2, b='z')")  # type: ignore[call-arg]


def test_a_generic_is_the_class_itself() -> None:
    class Box(typed.Generic):
        pass

    assert Box[int] is Box and typed.Generic[str, int] is typed.Generic
