"""A plan's YAML parsed once: the events the scan reads (bounds.scan) are kept, and the document is composed from
them, not parsed a second time (ruamel's parser is pure Python: on a plan of 20 pieces the second parse was
a third of reading the plan)."""

from __future__ import annotations

from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.events import DocumentStartEvent


class _Replay:
    """Stands where the document's parser stands: gives the kept events back, one by one, in their order."""

    def __init__(self, events: list[Any]) -> None:
        self._events = events
        self._at = 0

    def check_event(self, *choices: type) -> bool:
        if self._at >= len(self._events):
            return False
        return not choices or isinstance(self._events[self._at], choices)

    def peek_event(self) -> Any:
        return self._events[self._at] if self._at < len(self._events) else None

    def get_event(self) -> Any:
        event = self.peek_event()
        self._at += 1
        return event

    def dispose(self) -> None:
        self._events = []


class Parsed:
    """One round-trip parse of `text`: `events()` yields its events (parsing as they are asked for) and keeps
    them; `load()` then composes the document from the kept ones, as YAML(typ="rt").load(text) would."""

    def __init__(self, text: str) -> None:
        self.yaml = YAML(typ="rt")
        self.text = text
        self.kept: list[Any] = []
        self.version: Any = None  # the first document's %YAML directive, which decides how plain scalars read
        self._begun = False

    def events(self) -> Any:
        """The parser's events, each kept as it is given; a broken document raises the parser's YAMLError."""
        for event in self.yaml.parse(self.text):
            if isinstance(event, DocumentStartEvent) and not self._begun:
                self.version, self._begun = event.version, True
            self.kept.append(event)
            yield event

    def load(self) -> Any:
        """The document, composed and constructed from every event of the text (events() read to its end); read
        afresh by ruamel's own `load` when its insides the replay leans on are not as they were (an AttributeError,
        or another lookup or type error of a loader reading from where the events are not, or nothing made of a
        text that is not empty). A broken document still raises the YAMLError it raises."""
        try:
            data = self._replayed()
        except (AttributeError, LookupError, TypeError):
            data = None
        if data is None or data == {} or data == []:
            return YAML(typ="rt").load(self.text) if self.text.strip() else data
        return data

    def _replayed(self) -> Any:
        """The document constructed from the kept events, through ruamel's loader's insides."""
        yaml = self.yaml
        yaml._parser = _Replay(self.kept)  # type: ignore[attr-defined]  # the composer asks the loader for it
        yaml.scanner.yaml_version = self.version
        try:
            return yaml.constructor.get_single_data()
        finally:
            yaml.scanner.reset_scanner()
