"""What the user sees: words on stdout, notes on stderr, JSON on stdout, and times as the lead reads them."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from git_balanced import ui


def test_words_go_to_stdout_and_notes_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    ui.say("Landed f1.")
    ui.note("Checking f1…")
    ui.say()
    got = capsys.readouterr()
    assert (got.out, got.err) == ("Landed f1.\n\n", "Checking f1…\n")


def test_json_is_sorted_readable_and_takes_what_json_does_not(capsys: pytest.CaptureFixture[str]) -> None:
    ui.emit_json({"b": 1, "a": "é", "where": Path("/srv/lead")})
    out = capsys.readouterr().out
    assert out.startswith('{\n  "a": "é",'), "sorted keys, indented, not escaped"
    assert json.loads(out) == {"a": "é", "b": 1, "where": "/srv/lead"} and out.endswith("}\n")


def test_tail_keeps_the_last_lines_indented() -> None:
    text = "\n".join(f"line {i}" for i in range(1, 21)) + "\n\n"
    assert ui.tail(text, 2) == "    line 19\n    line 20"
    assert ui.tail("one", indent="> ") == "> one"


def test_clock_is_the_local_hour_and_minute() -> None:
    before = os.environ.get("TZ")
    os.environ["TZ"] = "Europe/Berlin"
    time.tzset()
    try:
        assert ui.clock(1_800_000_000) == "09:00", "2027-01-15 08:00 UTC is 09:00 in Berlin"
        assert ui.clock(1_800_000_000 + 59) == "09:00", "the minute is cut, not rounded"
    finally:
        if before is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = before
        time.tzset()  # the next test reads local time as it was


class _Named:
    def __str__(self) -> str:
        return "named"


@pytest.mark.parametrize("data", [
    {}, [], None, 1, 2.5, "x", {"a": [], "b": {}}, [[[]]], (1, (2,)), [True, False, None],
    {"jobs": [{"id": "j1", "cost_usd": 2.0, "in_the_way": ["a", "b"], "model": None}] * 3, "lead": "main"},
    {"é": "ü\n\"\\", "nan": float("nan"), "deep": {"a": {"b": {"c": [1, [2, {"d": ()}]]}}}},
    {"where": Path("/srv/lead"), "who": _Named()}, {"n": {1: "one", 2: {"x": [1]}}}, {"mixed": [{"a": 1}, 2, [3]]},
], ids=lambda d: repr(d)[:30])
def test_json_is_what_json_dumps_with_an_indent_writes(data: object) -> None:
    want = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, default=str)
    assert ui.dumps(data) == want and ui.dumps(data, end="\n") == want + "\n"


def test_a_list_laid_out_from_its_items_is_what_json_dumps_writes() -> None:
    """ui.dumped_list: items laid out already (the board's kept rows), joined as json.dumps lays the list out."""
    rows = [{"id": "j1", "in_the_way": [{"path": "a"}], "x": None}, {"id": "j2", "checks": []}, {"b": {"c": [1]}}]
    for items in (rows, rows[:1], []):
        for level in (0, 1, 3):
            made = ui.dumped_list([ui.dumps(r, level + 1) for r in items], level)
            assert type(made) is ui.Dumped and made.text == ui.dumps(items, level) == ui.dumps(made, level)
        data = {"jobs": ui.dumped_list([ui.dumps(r, 2) for r in items], 1), "lead": "main", "now": []}
        want = json.dumps({**data, "jobs": items}, indent=2, sort_keys=True, ensure_ascii=False)
        assert ui.dumps(data) == want and ui.dumps(data, end="\n") == want + "\n"


EVIL = "\033]0;x\007\033[2J\u202eevil"
SHOWN = "\\x1b]0;x\\x07\\x1b[2J\\u202eevil"


def test_plain_escapes_controls_and_bidirectional_marks_and_keeps_lines_where_asked() -> None:
    assert ui.plain("a\tb\nc") == "a\tb\nc"
    assert ui.plain("a\tb\nc", lines=False) == "a\\x09b\\x0ac"
    assert ui.plain("\r\x00\x7f\x9b\u200e\u200f\u061c\u202a\u2066\u2069") == \
        "\\x0d\\x00\\x7f\\x9b\\u200e\\u200f\\u061c\\u202a\\u2066\\u2069"
    assert ui.plain(ui.plain(EVIL)) == ui.plain(EVIL) == SHOWN, "shown once or twice, the same"
    assert ui.plain("naïve — ünïcode ✓") == "naïve — ünïcode ✓", "other characters are words"


def test_say_note_and_tail_show_words_plain_and_json_keeps_them(capsys: pytest.CaptureFixture[str]) -> None:
    ui.say("a " + EVIL)
    ui.note("b " + EVIL)
    assert ui.tail("one\n" + EVIL + "\n", 1) == "    " + SHOWN
    got = capsys.readouterr()
    assert (got.out, got.err) == ("a " + SHOWN + "\n", "b " + SHOWN + "\n")
    ui.emit_json({"w": EVIL})
    assert json.loads(capsys.readouterr().out) == {"w": EVIL}, "JSON keeps the words as they are"
    ui.emit_lines([json.dumps({"w": "\x7f\x9b\u202e"}, ensure_ascii=False)])
    assert json.loads(capsys.readouterr().out) == {"w": "\x7f\x9b\u202e"}


def test_a_table_lines_up_its_columns_two_spaces_apart() -> None:
    lines = ui.table_lines([("s1", "daily 09:00", "next 09:00"), ("s22", "every 2 hours", "done")],
                           head=("NAME", "WHEN", "STATUS"))
    assert lines == ["NAME  WHEN           STATUS",
                     "s1    daily 09:00    next 09:00",
                     "s22   every 2 hours  done"], "each column as wide as its widest cell; no trailing spaces"


def test_a_table_counts_wide_characters_and_reads_no_markup() -> None:
    lines = ui.table_lines([("日本", "[bold]x[/] :smile:"), ("ab", "y")])
    assert lines == ["日本  [bold]x[/] :smile:", "ab    y"], "a wide character takes two cells; words stay words"


def test_a_table_shows_a_workers_words_plain_and_lines_under_a_row() -> None:
    lines = ui.table_lines([("alpha", "ok\x1b[2J"), ui.Under("then \u202ehint"), ("b", "x\ny")], indent=2)
    assert lines == ["  alpha  ok\\x1b[2J", "         then \\u202ehint", "  b      x\\x0ay"]


def test_a_table_keeps_its_least_widths_and_is_plain_off_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    ui.table([("written", ".mcp.json")], indent=2, least=(12,))
    ui.table([("a", "b")], head=("X", "Y"))
    assert capsys.readouterr().out == "  written       .mcp.json\nX  Y\na  b\n", "no colour when not a terminal"
    assert ui.table_lines([("a", "b")], head=("X", "Y"), bold=True)[0].startswith("\x1b[1m"), "a bold head on one"
