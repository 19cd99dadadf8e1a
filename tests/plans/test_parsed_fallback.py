"""A plan is composed from the events its scan kept through ruamel's loader's insides (plans/parsed.py); were
those insides changed by a later ruamel, the plan is still read, by ruamel's own `load`."""

from __future__ import annotations

from typing import Any

import pytest
from ruamel.yaml import YAML
from ruamel.yaml.composer import Composer

from git_balanced.plans.parsed import Parsed
from git_balanced.plans.planfile import load_plan

TEXT = "task: ship it\nbudget: 2\npieces:\n  - id: one\n    task: do one\n  - id: two\n    task: do two\n"


def _renamed(self: Any) -> Any:
    if not hasattr(self, "_events_from"):
        self._events_from = self.Parser(loader=self)
    return self._events_from


def _parsed(text: str) -> Any:
    parsed = Parsed(text)
    for _ in parsed.events():
        pass
    return parsed.load()


def test_a_ruamel_whose_loader_keeps_its_parser_elsewhere_still_reads_plans(monkeypatch: pytest.MonkeyPatch) -> None:
    want = _parsed(TEXT)
    monkeypatch.setattr(YAML, "parser", property(_renamed))  # the loader's parser no longer at `_parser`
    monkeypatch.setattr(Composer, "parser", property(lambda self: self.loader.parser))
    assert _parsed(TEXT) == want == YAML(typ="rt").load(TEXT)
    assert [p.id for p in load_plan(TEXT, "plan.yaml").pieces] == ["one", "two"]


def test_a_ruamel_without_the_insides_leaned_on_still_reads_plans(monkeypatch: pytest.MonkeyPatch) -> None:
    want = _parsed(TEXT)
    monkeypatch.setattr(Parsed, "_replayed", lambda self: self.yaml.no_such_inside)
    assert _parsed(TEXT) == want
    assert _parsed("") is None and _parsed("# nothing\n") is None
