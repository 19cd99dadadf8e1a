"""shipped/lightjson.py gives what json gives, without importing it: json.loads on the agents' real hook inputs and
on JSON with every kind of escape, unicode and number, the same error for what is not JSON, and json.dumps'
text for the hooks' answers."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from git_balanced.shipped import lightjson, pretool
from tests.support.hook_inputs import claude_bash, claude_prompt, claude_stop, codex_stop

HERE = Path("/home/ada/project")
PAYLOADS = [claude_bash(HERE, 'echo "hi" && printf \'%s\\n\' $HOME'), claude_prompt(HERE), claude_stop(HERE, True),
            codex_stop(HERE),
            {"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": "C:\\Users\\ada\\tmp",
             "tool_input": {"file_path": "é/漢字/😀.txt", "content": "line\n\ttab \"quoted\" \\ back\u2028\u0000\x1f"}},
            {"numbers": [0, -0, 1, -1, 10 ** 30, 1.5, -2.25e-7, 1e308, 5e-324, 123456789.125], "empty": [{}, [], ""],
             "nested": [[[[{"a": [None, True, False]}]]]]}]
TEXTS = [json.dumps(p) for p in PAYLOADS] + [json.dumps(p, ensure_ascii=False, indent=2) for p in PAYLOADS] + [
    '  {"a":1}\n\r\t', '"\\ud83d\\ude00 \\ud800 \\udfff \\u00e9\\/\\b\\f\\n\\r\\t"', "[1E5, 1e-2, -0.0, 2E+3]",
    '{"a": NaN, "b": Infinity, "c": -Infinity}', '{"dup": 1, "dup": 2}', "12", "true", "null", '{"é": "ü"}']
BAD = ["", " ", "{", '{"a": }', '{"a": 1,}', "[1 2]", '{"a": 1} x', "\ufeff{}", '"\x01"', '"\\x"', "01", "[.5]",
       '{"a": "b" "c"}', "nul", '"\\ud83d', "{'a': 1}", "[1]]"]


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


@pytest.mark.parametrize("text", TEXTS)
def test_loads_gives_what_json_loads_gives(text: str) -> None:
    assert same(lightjson.loads(text), json.loads(text)), text


@pytest.mark.parametrize("text", BAD)
def test_what_is_not_json_raises_json_loads_own_error(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as theirs:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as ours:
        lightjson.loads(text)
    assert str(ours.value) == str(theirs.value)


def test_dumps_writes_what_json_dumps_writes() -> None:
    answers = [pretool.decision("deny", "The guard refused \"a\\b\" é 😀\n\ttab"), None, [], {},
               {"decision": "block", "reason": "news: \u2028 \x00"}, {1: 2, 2.5: None, None: True, False: -0.0},
               {"x": [1e100, float("nan"), float("inf"), -float("inf"), 10 ** 40, (1, "two")]}]
    for obj in [*answers, *PAYLOADS]:
        assert lightjson.dumps(obj) == json.dumps(obj), obj


def test_dumps_leaves_what_it_does_not_know_to_json() -> None:
    class Word(str):
        pass

    assert lightjson.dumps({"a": Word("b")}) == json.dumps({"a": Word("b")})
    with pytest.raises(TypeError, match="not JSON serializable"):
        lightjson.dumps({"a": {1, 2}})
    with pytest.raises(TypeError, match="keys must be str"):
        lightjson.dumps({(1, 2): 3})
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        lightjson.dumps(loop)


def test_reading_and_writing_import_neither_json_nor_re() -> None:
    code = ("import sys; from git_balanced.shipped import lightjson as j; "
            "d = j.loads(sys.argv[1]); print(j.dumps(d)); print(sorted({'json', 're'} & set(sys.modules)))")
    cp = subprocess.run([sys.executable, "-c", code, TEXTS[0]], capture_output=True, text=True, check=True)
    assert cp.stdout.splitlines() == [TEXTS[0], "[]"], cp
