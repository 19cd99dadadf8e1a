"""files.loads, files.dumps and files.json_encoder give what json gives without importing it: json.loads on the
state's own files and on JSON with every kind of escape, number and nesting, as text and as bytes (json's own
error for what is not JSON), and json.dumps' text with the options the package writes with; and typed.py's
NamedTuple and Generic stand in for typing's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from git_balanced import files, typed
from tests.support.json_alike import BAD, TEXTS, outcome, same


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
