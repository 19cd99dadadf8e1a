"""`.magnum/settings.toml`: the models, reading them with errors that name the key, and `init`'s writing."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from datetime import date, datetime, time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from git_balanced import process
from git_balanced.bundled import template_text
from git_balanced.errors import BalancedError, SettingsError, UsageError

if TYPE_CHECKING:
    import tomllib
from git_balanced.models import COMMAND_MOST, DEPTH_MOST, NAME_MOST, fit, nested_deeper, toml_nesting
from git_balanced.settings_view import AGENTS, SETTINGS_PATH, ladder_of, stronger_of

RESERVES = (0, 10, 20, 30, 50)
CLAUDE_LADDER = ("haiku", "sonnet", "opus")
# Only claude has a model name every account can use; the others default to their own CLI's choice.
DEFAULT_MODELS: dict[str, str] = {"claude": "sonnet"}

AgentName = Literal["claude", "codex", "pi", "shell"]


def _one_of(allowed: tuple[int, ...]) -> Callable[[int], int]:
    def check(value: int) -> int:
        if value not in allowed:
            raise ValueError("not allowed")
        return value
    return check


Command = Annotated[StrictStr, AfterValidator(fit(COMMAND_MOST, "bytes", command=True))]
Name = Annotated[StrictStr, AfterValidator(fit(NAME_MOST))]
PathGlob = Annotated[StrictStr, AfterValidator(fit(1000))]
# The ranges of the numbers (docs/safety/inputs.md): far past any real use, short of absurd.
WEEK = 7 * 24 * 3600
Attempts = Annotated[StrictInt, Field(ge=1, le=100)]
Cap = Annotated[StrictInt, Field(ge=1, le=1000)]
Slots = Annotated[StrictInt, Field(ge=0, le=64)]
Seconds = Annotated[StrictInt, Field(ge=1, le=WEEK)]
_COMMAND = f"a non-empty command line of at most {COMMAND_MOST:,} bytes, without a NUL"
_SECONDS = f"a whole number of seconds from 1 to {WEEK:,} (a week)"
EnvName = Annotated[StrictStr, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=NAME_MOST)]


class _Table(BaseModel):
    # Built when a file is first checked, not at import: a command that reads checked settings (settings_view.py)
    # or only the names here (AGENTS) never builds them.
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class WorktreeSettings(_Table):
    """`[worktree]`: how a new copy is readied and how a tree is judged."""

    setup: Command | None = Field(default=None, description=_COMMAND)
    check: Command | None = Field(default=None, description=_COMMAND)
    protect: tuple[PathGlob, ...] = Field(
        default=(), max_length=1000,
        description='a list of path globs (one line each, up to 1,000), such as ["tests/**"]')
    # A day at the most: a check that needs longer is not one to land by.
    check_timeout: Annotated[StrictInt, Field(ge=1, le=86400)] = Field(
        default=1800, description='a whole number of seconds from 1 to 86400, or "90s", "30m", "2h"')

    @model_validator(mode="before")
    @classmethod
    def _duration(cls, data: Any) -> Any:
        # "30m" is 1800 seconds; any other string (or one out of range) is left for the type to refuse, and its
        # message shows it as written.
        if isinstance(data, dict) and isinstance(text := data.get("check_timeout"), str):
            if m := re.fullmatch(r"\s*(\d+)\s*([smh])\s*", text):
                seconds = int(m[1]) * {"s": 1, "m": 60, "h": 3600}[m[2]]
                return {**data, "check_timeout": seconds} if 1 <= seconds <= 86400 else data
        return data
    env: tuple[EnvName, ...] = Field(
        default=(), max_length=1000,
        description='a list of environment variable names passed on to workers, such as ["NPM_TOKEN"]')


class BalancedSettings(_Table):
    """`[balanced]`: the engine's knobs."""

    agent: AgentName = Field(default="claude", description="one of " + ", ".join(f'"{a}"' for a in AGENTS))
    model: Name | None = Field(default=None, description=f"a model name: one line, 1 to {NAME_MOST} characters")
    attempts: Attempts = Field(default=3, description="a whole number from 1 to 100")
    cap: Cap = Field(default=10, description="a whole number of running workers from 1 to 1,000")
    reserve: Annotated[StrictInt, AfterValidator(_one_of(RESERVES))] = Field(
        default=20, description="one of " + ", ".join(str(r) for r in RESERVES) + " (percent)")
    workers_edit_without_asking: StrictBool = Field(default=True, description="true or false")
    lead_allows_commands: StrictBool = Field(default=False, description="true or false")
    lead_keeps_off_workers_paths: StrictBool = Field(default=True, description="true or false")
    check_slots: Slots = Field(
        default=0, description="a whole number of checks run at once, from 1 to 64; 0: this machine's cores")
    check_seats: Annotated[StrictInt, Field(ge=0, le=1024)] = Field(
        default=0, description="a whole number of checks at once on each machine, from 1 to 1024; 0: its cores")
    ask_timeout: Seconds = Field(default=600, description=_SECONDS)
    lost_after: Seconds = Field(default=120, description=_SECONDS)
    takeover_after: Seconds = Field(default=600, description=_SECONDS)
    attach_from: tuple[PathGlob, ...] = Field(
        default=(), description='a list of folders (non-empty strings), relative to the repository or absolute, '
                                'such as ["docs/shots"]')
    placement: Literal["local", "single", "balanced"] = Field(
        default="balanced", description='one of "local" (this machine only), "single" (the one `machine` names) or '
                                        '"balanced" (the ticked machines, least busy first)')
    machine: Name | None = Field(default=None, validate_default=True,
                                 description='the name of a machine you added (see `git balanced machines`)')
    fallback: StrictBool = Field(default=False, description="true or false")

    @field_validator("machine")
    @classmethod
    def _machine_for_single(cls, value: str | None, info: ValidationInfo) -> str | None:
        single = info.data.get("placement") == "single"
        if single and value is None:
            raise ValueError('placement = "single" needs it')
        if value is not None and "placement" in info.data and not single:
            raise ValueError(f'it is read only with placement = "single", and placement is '
                             f'"{info.data["placement"]}"')
        return value
    archive_after_days: Annotated[StrictInt, Field(ge=1, le=36500)] = Field(
        default=30, description="a whole number of days from 1 to 36,500")
    check_machines: StrictBool = Field(default=True, description="true or false")

    @model_validator(mode="before")
    @classmethod
    def _default_model(cls, data: Any) -> Any:
        # The model's default follows the agent: "sonnet" means nothing to codex or pi.
        if isinstance(data, dict) and "model" not in data:
            agent = data.get("agent", "claude")
            if isinstance(agent, str) and agent in DEFAULT_MODELS:
                return {**data, "model": DEFAULT_MODELS[agent]}
        return data


Megabytes = Annotated[StrictFloat, Field(gt=0)]


class LandingSettings(_Table):
    """`[landing]`: what a landing takes without asking you; a branch past it is held for you."""

    max_file_mb: Megabytes = Field(default=10, description="a number of megabytes above 0, such as 10")
    max_change_mb: Megabytes = Field(default=50, description="a number of megabytes above 0, such as 50")


class AgentSettings(_Table):
    """`[agents.<name>]`: per-agent choices."""

    models: tuple[Name, ...] = Field(min_length=1, max_length=50,
                                     description="a list of 1 to 50 model names, weakest first")


_TABLE = "a table"
Repository = Annotated[StrictStr, Field(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$", max_length=NAME_MOST)]


class PrSettings(_Table):
    """`[pr]`: pull requests `ship --pr` opens, and whether their session fixes them."""

    repository: Repository | None = Field(default=None, description='the forge\'s repository, "owner/name"')
    fix: StrictBool = Field(default=False, description="true or false")
    fixes_a_day: Annotated[StrictInt, Field(ge=0, le=100)] = Field(
        default=3, description="a whole number of fixes from 0 to 100")
    run: Command | None = Field(default=None, description=_COMMAND + " (a shell lead's fixer runs it)")


class AgentsSettings(_Table):
    """`[agents]`: one optional table per agent."""

    claude: AgentSettings | None = Field(default_factory=lambda: AgentSettings(models=CLAUDE_LADDER),
                                         description=_TABLE + " [agents.claude]")
    codex: AgentSettings | None = Field(default=None, description=_TABLE + " [agents.codex]")
    pi: AgentSettings | None = Field(default=None, description=_TABLE + " [agents.pi]")
    shell: AgentSettings | None = Field(default=None, description=_TABLE + " [agents.shell]")


class Settings(_Table):
    """The whole of `.magnum/settings.toml`; every key has a default, so a missing file is valid."""

    worktree: WorktreeSettings = Field(default_factory=WorktreeSettings, description=_TABLE + " [worktree]")
    balanced: BalancedSettings = Field(default_factory=BalancedSettings, description=_TABLE + " [balanced]")
    agents: AgentsSettings = Field(default_factory=AgentsSettings, description=_TABLE + " [agents]")
    landing: LandingSettings = Field(default_factory=LandingSettings, description=_TABLE + " [landing]")
    pr: PrSettings = Field(default_factory=PrSettings, description=_TABLE + " [pr]")

    def ladder(self, agent: str | None = None) -> tuple[str, ...]:
        """The models a retry climbs for `agent` (default: the configured one), weakest first."""
        return ladder_of(self, agent)

    def stronger_model(self, current: str, agent: str | None = None) -> str | None:
        """The next model up the ladder from `current`, or None at the top or off the ladder."""
        return stronger_of(self, current, agent)


def plain(model: BaseModel) -> dict[str, Any]:
    """`model` as plain JSON for settings_view.py: each table's values and the keys its file wrote."""
    def one(value: Any) -> Any:
        if isinstance(value, BaseModel):
            return plain(value)
        if isinstance(value, tuple | list):
            return [one(v) for v in value]
        return value
    return {"values": {k: one(getattr(model, k)) for k in type(model).model_fields},
            "set": sorted(model.model_fields_set)}


def settings_path(root: Path) -> Path:
    """Where the settings of the repository at `root` live."""
    return Path(root) / SETTINGS_PATH


def load_settings(root: Path) -> Settings:
    """Read `<root>/.magnum/settings.toml`; a missing file gives the defaults."""
    return read_settings_file(root)[0]


def read_settings_file(root: Path) -> tuple[Settings, str | None]:
    """load_settings, and the text the settings were read from (None when there is no file)."""
    path = settings_path(root)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Settings(), None
    except OSError as exc:
        raise SettingsError(f"{path} cannot be read: {exc.strerror}.",
                            hint=f"check that {path} is a readable file") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SettingsError(f"{path} is not UTF-8 text (byte {exc.start}).",
                            hint=f"save {path} as UTF-8") from exc
    return load_settings_text(text, str(path)), text


class _Read(process.Bounded[str, Settings]):
    """Settings this process has read, by the text they were read from: a command (or an engine's pass) that
    asks at a dozen call sites parses and checks the file once, and a changed file, being other text, is read
    afresh. The few newest are kept; settings are frozen, so every caller may share them."""

    __slots__ = ()
    KEEP = 8


def load_settings_text(text: str, source_name: str) -> Settings:
    """Parse settings from `text`; errors name `source_name` (a path, or `REV:path` for committed content).
    Text read before in this process gives the settings read then (a refusal is said again each time)."""
    read = process.part(_Read)
    known = read.get(text)
    if known is None:
        known = _parsed(text, source_name)
        read.put(text, known)
    return known


def _parsed(text: str, source_name: str) -> Settings:
    """Settings from `text`, checked: nesting, TOML, then every key and value."""
    import tomllib  # here: settings read back checked (settings_view.py) parse no TOML

    deep = toml_nesting(text)  # before tomllib, which recurses once per level of brackets
    if deep is not None:
        raise SettingsError(f"{source_name}: line {deep} nests brackets more than {DEPTH_MOST} levels deep; "
                            "settings hold a list at most.", hint=_hint(source_name, f"fix line {deep}"))
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _toml_error(exc, text, source_name) from None
    deep_key = nested_deeper(raw)  # dotted keys nest without brackets
    if deep_key is not None:
        raise SettingsError(f"{source_name}: `{deep_key[:80]}` is nested more than {DEPTH_MOST} levels deep; "
                            "settings have tables of keys, two levels at most.",
                            hint=_hint(source_name, f"remove `{deep_key.split('.')[0]}`"))
    try:
        return Settings.model_validate(raw)
    except ValidationError as exc:
        problems = [_explain(err, source_name) for err in exc.errors()]
        message = "\n".join(p for p, _ in problems)
        raise SettingsError(message, hint=problems[0][1]) from None


def _hint(source_name: str, action: str) -> str:
    """What to do about a problem in `source_name`, e.g. `in F, rename X to Y`."""
    # `HEAD:.magnum/settings.toml` or `.magnum/settings.toml at HEAD` names committed content:
    # editing is not enough, it must be committed.
    committed = re.fullmatch(r"[^/:\s]+:(.+)", source_name) or re.fullmatch(r"(\S+) at \S+", source_name)
    if committed:
        return f"in {committed.group(1)}, {action}, then commit it (landing reads the committed settings)"
    return f"in {source_name}, {action}"


def _toml_error(exc: tomllib.TOMLDecodeError, text: str, source_name: str) -> SettingsError:
    reason = str(exc)
    where = re.search(r"\s*\(at line (\d+), column (\d+)\)$", reason)
    if where:
        line, col = int(where.group(1)), int(where.group(2))
        reason = reason[: where.start()]
    else:
        # "(at end of document)": point just past the last character.
        reason = re.sub(r"\s*\(at end of document\)$", "", reason)
        lines = text.split("\n")
        line, col = len(lines), len(lines[-1]) + 1
    shown = text.split("\n")[line - 1] if line <= text.count("\n") + 1 else ""
    message = (f"{source_name} is not valid TOML at line {line}, column {col}: {reason}.\n"
               f"    {line} | {shown}\n    {' ' * len(str(line))} | {' ' * (col - 1)}^")
    return SettingsError(message, hint=_hint(source_name, f"fix line {line}"))


def _dotted(loc: tuple[int | str, ...]) -> str:
    key = ""
    for part in loc:
        key += f"[{part}]" if isinstance(part, int) else (f".{part}" if key else str(part))
    return key


def _model_at(loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The table model that holds the key at `loc`, walking nested tables."""
    model: type[BaseModel] = Settings
    for part in loc[:-1]:
        if not isinstance(part, str) or part not in model.model_fields:
            return None
        nested = _table_type(model.model_fields[part].annotation)
        if nested is None:
            return None
        model = nested
    return model


def _table_type(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return None


def _all_keys(model: type[BaseModel] = Settings, prefix: str = "") -> list[str]:
    keys = []
    for name, field in model.model_fields.items():
        nested = _table_type(field.annotation)
        keys.extend(_all_keys(nested, f"{prefix}{name}.") if nested else [f"{prefix}{name}"])
    return keys


def _explain(err: Any, source_name: str) -> tuple[str, str]:
    """One pydantic error as (a line naming file, key, value and what is allowed; a hint)."""
    loc = tuple(err["loc"])
    # A list item's error is about the list: name the key, and which item.
    item = next((p for p in loc if isinstance(p, int)), None)
    key_loc = tuple(p for p in loc if isinstance(p, str))
    key = _dotted(key_loc)
    if err["type"] == "extra_forbidden":
        return _unknown_key(key_loc, source_name)
    holder = _model_at(key_loc)
    field = holder.model_fields.get(str(key_loc[-1])) if holder else None
    allowed = (field.description if field else None) or "something else"
    value = err["input"]
    where = f"`{key}`" if item is None else f"`{key}` item {item + 1}"
    if err["type"] == "missing":
        return (f"{source_name}: `{key}` is missing; it must be {allowed}.",
                _hint(source_name, f"add `{key}` ({allowed})"))
    reason = str(err.get("ctx", {}).get("error", ""))
    if err["type"].endswith("_type") and not isinstance(value, dict):
        line = f"{source_name}: {where} is {_show(value)} ({_kind(value)}), but it must be {allowed}."
    elif value is None and reason:  # a key another one needs
        line = f"{source_name}: {where} is not set, but {reason}; it must be {allowed}."
        return line, _hint(source_name, f"add `{key}` ({allowed})")
    elif reason.startswith("it is read only with"):  # a key that means nothing with the others as they are
        return f"{source_name}: {where} is {_show(value)}, but {reason}.", _hint(source_name, f"remove `{key}`")
    elif reason.startswith("it "):  # why the text is unfit: its length, or the character it holds
        line = f"{source_name}: {where} is {_show(value)}: {reason}; it must be {allowed}."
    else:
        line = f"{source_name}: {where} is {_show(value)}, but it must be {allowed}."
    return line, _hint(source_name, f"set `{key}` to {allowed}")


def _unknown_key(key_loc: tuple[str | int, ...], source_name: str) -> tuple[str, str]:
    key = _dotted(key_loc)
    holder = _model_at(key_loc)
    siblings = list(holder.model_fields) if holder else []
    table = _dotted(key_loc[:-1])
    leaf = str(key_loc[-1])
    near = difflib.get_close_matches(leaf, siblings, n=1, cutoff=0.6)
    suggestion = _dotted((*key_loc[:-1], near[0])) if near else None
    if suggestion is None:
        # A key put in the wrong table (`check` at the top) belongs where a key of that name lives.
        elsewhere = [k for k in _all_keys() if k.rsplit(".", 1)[-1] == leaf]
        suggestion = elsewhere[0] if elsewhere else None
    known = ", ".join(siblings)
    place = f"[{table}]" if table else "the top level"
    line = f"{source_name}: unknown key `{key}`"
    if suggestion:
        line += f"; did you mean `{suggestion}`?"
        hint = _hint(source_name, f"rename `{key}` to `{suggestion}`")
    else:
        line += "."
        hint = _hint(source_name, f"remove `{key}`")
    return f"{line} Known keys in {place}: {known}.", hint


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, datetime | date | time):
        return "a date or time"
    return type(value).__name__


def _show(value: Any) -> str:
    """A value as it reads in TOML, in a message (a table is only named, a long value cut)."""
    said = "a table" if isinstance(value, dict) else toml_value(value)
    return said if len(said) <= 200 else f"{said[:60]}… ({len(said):,} characters)"


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else toml_string(key)


def toml_value(value: Any) -> str:
    """`value` (a string, number, boolean, date, list or table) as TOML, tables inline: what `init` writes
    into the settings file and `codex -c` reads."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml_key(str(k))} = {toml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    return str(value)


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def toml_string(value: str) -> str:
    """`value` as a TOML string that reads back exactly: plain double quotes when it can, else
    a literal string (no escapes needed for backslashes), else an escaped basic string."""
    controls = any(ord(c) < 0x20 or ord(c) == 0x7F for c in value)
    if not controls and '"' not in value and "\\" not in value:
        return f'"{value}"'
    if not controls and "'" not in value:
        return f"'{value}'"
    out = []
    for c in value:
        if c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\u{ord(c):04X}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


_LADDER = '[agents.claude]\nmodels = ["haiku", "sonnet", "opus"]   # the ladder a retry climbs, weakest first'


def render_settings(*, check: str | None = None, setup: str | None = None, agent: str | None = None) -> str:
    """The text `init` writes: the commented template with these values filled in."""
    for flag, value in (("--check", check), ("--setup", setup)):
        if value is not None and not value.strip():
            raise UsageError(f"{flag} is empty.", hint=f"give {flag} a command line, or leave it out")
    name = agent or "claude"
    if name not in AGENTS:
        near = difflib.get_close_matches(name, AGENTS, n=1)
        hint = f"use --agent {near[0]}" if near else "use --agent " + " | ".join(AGENTS)
        raise UsageError(f"--agent {name} is not an agent; it must be one of {', '.join(AGENTS)}.", hint=hint)
    template = template_text("settings.toml")
    model = DEFAULT_MODELS.get(name)
    values = {
        "@SETUP@": f"setup = {toml_value(setup)}" if setup else '# setup = "pip install -e ."',
        "@CHECK@": f"check = {toml_value(check)}" if check else '# check = "pytest -q"',
        "@AGENT@": f"agent = {toml_value(name)}",
        "@MODEL@": f"model = {toml_value(model)}" if model else "# model = ...   (unset: the agent's own)",
        # Only the agent named gets a table: a table names an agent `ready` installs.
        "@LADDER@": _LADDER if name == "claude" else (
            "# A ladder of models per agent; a table also has `ready` install its agent:\n# "
            + _LADDER.replace("\n", "\n# ")),
    }
    for mark, line in values.items():
        template = template.replace(mark, line)
    return template


def write_settings(root: Path, *, check: str | None = None, setup: str | None = None,
                   agent: str | None = None) -> Path:
    """Write `.magnum/settings.toml` from the template; never overwrites an existing file."""
    path = settings_path(root)
    if path.exists():
        raise BalancedError(
            f"{path} already exists; it is never overwritten.",
            hint=f"edit {path} by hand, or remove it and run `git balanced init` again")
    text = render_settings(check=check, setup=setup, agent=agent)
    load_settings_text(text, str(path))  # what we write must read back
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BalancedError(f"cannot write {path}: {exc.strerror}.",
                            hint=f"check that {path.parent} is a writable folder") from exc
    try:
        # "x": a file created meanwhile by someone else is still not overwritten.
        with open(path, "x", encoding="utf-8") as fh:
            fh.write(text)
    except FileExistsError as exc:
        raise BalancedError(f"{path} already exists; it is never overwritten.",
                            hint=f"edit {path} by hand") from exc
    except OSError as exc:
        raise BalancedError(f"cannot write {path}: {exc.strerror}.",
                            hint=f"check that {path.parent} is a writable folder") from exc
    return path


__all__ = [
    "AGENTS", "RESERVES", "SETTINGS_PATH", "AgentSettings", "AgentsSettings", "BalancedSettings", "LandingSettings",
    "Settings", "WorktreeSettings", "load_settings", "load_settings_text", "render_settings",
    "plain", "settings_path", "toml_string", "toml_value", "write_settings",
]
