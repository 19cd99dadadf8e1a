"""Committed settings read without the models: a settings file, once checked by settings.py, is kept as plain
JSON in `.git/balanced/cache/settings/` (settings_kept.py), named by its blob id and the models' fingerprint, and a
later process (an engine, a command run again) reads that back as a frozen view with the same keys, without
importing pydantic. Text never checked, or checked by other models, is checked again (and its refusal said as
before)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_balanced import process, settings_kept
from git_balanced.files import write_atomic

if TYPE_CHECKING:
    from git_balanced.git import Repo

SETTINGS_PATH = ".magnum/settings.toml"
AGENTS = ("claude", "codex", "pi", "shell")


class Table:
    """One table of settings as read: its keys as attributes (tables as Tables, lists as tuples), frozen, and
    `model_fields_set`, the keys the file wrote, as the models have it."""

    __slots__ = ("_values", "model_fields_set")

    def __init__(self, values: dict[str, Any], written: frozenset[str]) -> None:
        object.__setattr__(self, "_values", values)
        object.__setattr__(self, "model_fields_set", written)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # never a key: a copy asks before its slots are set
            raise AttributeError(name)
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(name) from None

    def model_copy(self, *, update: dict[str, Any] | None = None) -> Any:
        """A copy with `update`'s keys set to its values, as the models' `model_copy` makes one."""
        changed = dict(update or {})
        return type(self)({**self._values, **changed}, self.model_fields_set | frozenset(changed))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"settings are frozen: {name} cannot be set")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._values == self._values  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(tuple(self._values.items()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self._values.items())})"


class View(Table):
    """The whole settings file, as `settings.Settings` reads it."""

    __slots__ = ()

    def ladder(self, agent: str | None = None) -> tuple[str, ...]:
        return ladder_of(self, agent)

    def stronger_model(self, current: str, agent: str | None = None) -> str | None:
        return stronger_of(self, current, agent)


def ladder_of(settings: Any, agent: str | None = None) -> tuple[str, ...]:
    """The models a retry climbs for `agent` (default: the configured one), weakest first."""
    name = agent or settings.balanced.agent
    table = getattr(settings.agents, name, None) if name in AGENTS else None
    if table is not None:
        return tuple(table.models)
    model = settings.balanced.model if name == settings.balanced.agent else None
    return (model,) if model else ()


def stronger_of(settings: Any, current: str, agent: str | None = None) -> str | None:
    """The next model up the ladder from `current`, or None at the top or off the ladder."""
    steps = ladder_of(settings, agent)
    if current not in steps:
        return None
    i = steps.index(current)
    return steps[i + 1] if i + 1 < len(steps) else None


def _thawed(plain: Any, top: bool = False) -> Any:
    """A value of `settings.plain` as the view reads it."""
    if isinstance(plain, dict):
        values = {k: _thawed(v) for k, v in plain["values"].items()}
        return (View if top else Table)(values, frozenset(plain["set"]))
    if isinstance(plain, list):
        return tuple(_thawed(v) for v in plain)
    return plain


class _Models:
    """The models' fingerprint, read once per process: a cache written by other models is not read."""

    def __init__(self) -> None:
        self.stamp = hashlib.sha1(settings_kept.fingerprint().encode()).hexdigest()[:12]


class _Views(process.Bounded[str, "View"]):
    """Views this process has read, by cache name."""

    __slots__ = ()
    KEEP = 8


def committed(repo: Repo, text: str, check: Callable[[], dict[str, Any]]) -> View:
    """The settings of `text` (the file as committed), read back from the cache when it was checked before;
    else `check()`ed by the models (`settings.plain` of them; a refusal raised as they raise it) and kept for the
    next reader."""
    data = text.encode("utf-8", "surrogateescape")
    blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    name = f"{blob}-{process.part(_Models).stamp}.json"
    views = process.part(_Views)
    view = views.get(name)
    if view is None:
        view = _read(repo, name, check)
        views.put(name, view)
    return view


def _read(repo: Repo, name: str, check: Callable[[], dict[str, Any]]) -> View:
    path = Path(settings_kept.folder(repo.state_dir)) / name
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        view = _thawed(kept, top=True)
        if isinstance(view, View):
            return view
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass  # not kept yet, or unreadable: checked again below
    kept = check()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(kept, sort_keys=True))
        settings_kept.prune(repo.state_dir)
    except OSError:
        pass  # a read-only or full disk: the next reader checks it again
    return _thawed(kept, top=True)  # type: ignore[no-any-return]
