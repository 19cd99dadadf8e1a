"""git balanced's three extensions for Pi are each one file Pi loads whole, made from one shared part
(templates/pi-part.ts, written in where a template names it): what they share is written once."""

from __future__ import annotations

import re

from git_balanced.agents.wiring import render
from git_balanced.bundled import template_text

TEMPLATES = ("pi-balanced.ts", "pi-lead.ts", "pi-chief.ts")
SHARED = ("run", "hook", "guard", "tools", "inbox", "model")


def _raw(name: str) -> str:
    from git_balanced.bundled import template

    return template(name).read_text(encoding="utf-8")


def test_each_template_names_the_part_and_spells_none_of_it() -> None:
    for name in TEMPLATES:
        raw = _raw(name)
        assert "// {part pi-part.ts}\n" in raw, name
        assert "spawn(" not in raw and 'pi.on("tool_call"' not in raw, f"{name} calls git balanced through the part"
        assert not [f for f in SHARED if f"function {f}(" in raw], f"{name} defines none of the part's functions"


def test_each_extension_as_written_is_whole() -> None:
    """As its writers read it (the lead's and the chief's then fill in their tools: tests/kit/test_project.py)."""
    written = {"pi-balanced.ts": render("pi-balanced.ts"), "pi-lead.ts": template_text("pi-lead.ts"),
               "pi-chief.ts": template_text("pi-chief.ts")}
    for name, text in written.items():
        assert "{part" not in text and ("{balanced_argv}" not in text) == (name == "pi-balanced.ts"), name
        assert [len(re.findall(rf"\n(?:async )?function {f}\(", text)) for f in SHARED] == [1] * len(SHARED), name
        assert text.count('import { spawn } from "node:child_process";') == 1, name
    assert template_text("pi-lead.ts").startswith("// git balanced's lead for Pi"), "the template's own words first"
