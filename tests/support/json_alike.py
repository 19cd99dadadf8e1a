"""What the two JSON readers that stand in for `json` (files.loads, shipped/lightjson.loads) are held to: the texts
both must read as json.loads reads them, the texts both must refuse with json's own error, and `same`, which
compares two readings type for type, and `outcome`, which holds
what a call gave or raised."""

from __future__ import annotations

import json
import math
from pathlib import Path

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
    '{"a": NaN, "b": Infinity, "c": -Infinity}', '{"dup": 1, "dup": 2}', "12", "true", "null", '{"é": "ü 漢字"}',
    str(10**300), "1.7976931348623157e309", "[5e-324, 123456789.125, -2.25e-7]",
    '{"n": [[[[{"a": [null, true, false]}]]]], "b": 123456789012345678901234567890}',
    json.dumps({"tips": {"refs/balanced/jobs/x": "ab" * 20}, "stamp": [1, 2, 3]}, separators=(",", ":"))]
BAD = ["", " ", "{", '{"a": }', '{"a": 1,}', "[1 2]", '{"a": 1} x', "\ufeff{}", '"\x01"', '"\\x"', "01", "[.5]",
       '{"a": "b" "c"}', "nul", '"\\ud83d', "{'a': 1}", "[1]]", "1 2", "\u3000[1]", "[" + "9" * 5000 + "]"]


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
    """What `call(arg)` gave: ("value", it), or ("error", (its type, its words))."""
    try:
        return "value", call(arg)  # type: ignore[operator]
    except Exception as exc:  # noqa: BLE001 — the error is what is compared
        return "error", (type(exc), str(exc))
