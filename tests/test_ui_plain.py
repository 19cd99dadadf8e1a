"""ui.plain writes out what a terminal obeys and keeps the rest as it is; text that str.isprintable takes whole
(newlines and tabs aside, when lines are kept) is returned without its patterns compiled: no character it writes
out is one isprintable takes."""

from __future__ import annotations

import re

import pytest

from git_balanced import ui


def test_no_character_it_writes_out_is_printable() -> None:
    """The patterns' classes end at U+2069: every character up to U+2FFF they take, isprintable refuses."""
    obeyed = [re.compile(ui._OBEYED), re.compile(ui._OBEYED_IN_A_LINE)]
    taken = [c for c in map(chr, range(0x3000)) if any(p.search(c) for p in obeyed)]
    assert len(taken) == 32 + 33 + 12 and not any(c.isprintable() for c in taken)


@pytest.mark.parametrize("text", ["plain words", "é 漢字 😀", "two\nlines\tand a tab", "\x1b[31mred\x1b[0m",
                                  "bell\x07", "back\rto the start", "\u202eevil\u202c", "nbsp\u00a0here", "",
                                  "\x85 next line", "\u2028 line sep"])
@pytest.mark.parametrize("lines", [True, False])
def test_plain_is_what_the_patterns_give(text: str, lines: bool) -> None:
    pattern = re.compile(ui._OBEYED if lines else ui._OBEYED_IN_A_LINE)
    expected = pattern.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                           else f"\\u{ord(m.group()):04x}", text)
    assert ui.plain(text, lines=lines) == expected
