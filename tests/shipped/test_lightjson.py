"""shipped/lightjson.py gives what json gives, without importing it: json.loads on the agents' real hook inputs and
on JSON with every kind of escape, unicode and number, the same error for what is not JSON, and json.dumps'
text for the hooks' answers. The texts are files.loads' too (tests/support/json_alike.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from git_balanced.shipped import lightjson, pretool
from tests.support.json_alike import BAD, PAYLOADS, TEXTS, outcome, same


@pytest.mark.parametrize("text", TEXTS)
def test_loads_gives_what_json_loads_gives(text: str) -> None:
    assert same(lightjson.loads(text), json.loads(text)), text


@pytest.mark.parametrize("text", BAD)
def test_what_is_not_json_raises_json_loads_own_error(text: str) -> None:
    theirs = outcome(json.loads, text)
    assert theirs[0] == "error" and outcome(lightjson.loads, text) == theirs


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
