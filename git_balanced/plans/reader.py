"""Plan files read and checked: the YAML's every key, value and line, each problem said with its place and what
to do, without pydantic (whose import alone costs more than starting Python). planfile.py builds the plan's models
from what this reads; draft.py, for storing it, a plain copy of them."""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field, fields
from typing import Any

from ruamel.yaml import YAMLError
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from git_balanced.errors import BalancedError, SettingsError
from git_balanced.jobs import FILE_OPTIONS, PieceOptions
from git_balanced.models import COMMAND_MOST, NAME_MOST, TEXT_MOST, MachineName, PieceId, shown, text_problem
from git_balanced.plans import bounds
from git_balanced.plans.bounds import said as _said
from git_balanced.plans.parsed import Parsed
from git_balanced.settings_view import AGENTS

PLAN_KEYS = ("task", "budget", "pieces")
PIECE_KEYS = ("id", "task", "size", "after", "machine", *FILE_OPTIONS)
# The options read by a reader of their own below; any other is read by its type (`_Reader.option`).
_READ_APART = ("agent", "model", "run", "paths", "writes", "check")
WRITES = ("none",)  # what `writes` may say; left out, the worker writes in a worktree of its own
# How long each text key may be, and in what unit: a command goes to `sh -c` as one argument.
_TEXT_MOST = {"task": (TEXT_MOST, "characters"), "run": (COMMAND_MOST, "bytes"), "model": (NAME_MOST, "characters"),
              "check": (COMMAND_MOST, "bytes"),
              "machine": (NAME_MOST, "characters"), "agent": (NAME_MOST, "characters")}



@dataclass
class _Reader:
    """Walks the YAML tree once, noting every problem with its line (1-based; 0 for none)."""

    source: str
    known: set[str] | None
    problems: list[tuple[int, str, str]] = field(default_factory=list)

    def problem(self, line: int, text: str, action: str) -> None:
        self.problems.append((line, text, f"in {self.source}, {action}"))

    def keys(self, node: CommentedMap, allowed: tuple[str, ...], where: str) -> None:
        for key in node:
            name = str(key)
            if name == "budget" and allowed is PIECE_KEYS:
                self.problem(_line(node, key), f"{where}: `budget` is set for the whole plan, not per piece; "
                             "each piece's share follows its `size`.",
                             "move `budget` to the top level and give the pieces sizes")
            elif name not in allowed:
                name = name if len(name) <= 60 else shown(name, 40)[1:-1]
                near = difflib.get_close_matches(name, allowed, n=1, cutoff=0.6)
                said = f"; did you mean `{near[0]}`?" if near else "."
                self.problem(_line(node, key), f"{where}: unknown key `{name}`{said} "
                             f"Known keys: {', '.join(allowed)}.",
                             f"rename `{name}` to `{near[0]}`" if near else f"remove `{name}`")

    def text(self, node: CommentedMap, key: str, where: str) -> str | None:
        value = node.get(key)
        if isinstance(value, str) and value.strip():
            most, unit = _TEXT_MOST.get(key, (TEXT_MOST, "characters"))
            wrong = text_problem(value.strip(), most=most, unit=unit, lines=key in ("task", "run", "check"),
                                 controls=key in ("task", "run", "check"))
            if wrong:
                self.problem(_line(node, key), f"{where}, `{key}`: {wrong}.",
                             f"shorten `{key}` to at most {most:,} {unit}" if wrong.startswith("it has") else
                             f"write `{key}` without that character")
                return None
            return value.strip()
        said = "empty" if value is None or isinstance(value, str) else _said(value)
        self.problem(_line(node, key), f"{where}, `{key}`: is {said}, but it must be text.",
                     f"write the text of `{key}`")
        return None

    def number(self, node: CommentedMap, key: str, where: str, rule: str, low: float, high: float) -> float | None:
        value = node.get(key)
        real = isinstance(value, int | float) and not isinstance(value, bool) and \
            (isinstance(value, int) or math.isfinite(value))
        if real and low <= value <= high:
            return float(value)
        said = f"is {_said(value).removesuffix(' (a number)')}" if real else f"is {_said(value)}"
        self.problem(_line(node, key), f"{where}, `{key}`: {said}, but it must be {rule}.",
                     f"set `{key}` to {rule}")
        return None

    def option(self, node: CommentedMap, key: str, where: str) -> Any:
        """A piece's option read by its type in `PieceOptions` (true or false: the text ones are read apart); None
        when it is wrong."""
        kind = _OPTION_TYPES[key]
        if kind == "bool":
            if isinstance(node[key], bool):
                return node[key]
            self.problem(_line(node, key), f"{where}, `{key}`: it is true or false.", f"set `{key}: true` in {where}")
            return None
        raise AssertionError(f"PieceOptions.{key} is a {kind}: give it a reader in plans/planfile.py")

    def named(self, kind: type[PieceId] | type[MachineName], value: Any, line: int, where: str) -> Any:
        try:  # `id: 7` reads as a number; the id is still "7"
            return kind.of(str(value) if isinstance(value, int) and not isinstance(value, bool) else value)
        except BalancedError as exc:
            self.problem(line, f"{where}: {exc.message}", exc.hint or "")
            return None


def read_fields(text: str, source: str, *, known_machines: set[str] | None = None) -> dict[str, Any]:
    """Read and check a plan file's text: its fields (the plan's, and a dict of each piece's), or every problem
    found, each with `source`, the piece, the field and the line, in one SettingsError."""
    try:
        parsed = Parsed(text)  # parsed once: the scan reads its events, the document is composed from them
        bad = bounds.scan(text, source, parsed.events())  # before the composer, which recurses, meets the nesting
        if bad:
            raise SettingsError("\n".join(f"{source}:{line}: {said}" for line, said, _ in bad), hint=bad[0][2])
        doc = parsed.load()
    except YAMLError as exc:
        raise bounds.yaml_error(exc, text, source) from None
    if not isinstance(doc, CommentedMap):
        said = "empty" if doc is None else _said(doc)
        raise SettingsError(f"{source}:1: the plan is {said}, but it must be a mapping with `task`, `budget` "
                            "and `pieces`.", hint=f"in {source}, start with `task:` at the top level")
    reader = _Reader(source, None if known_machines is None else set(known_machines) | {"local"})
    reader.keys(doc, PLAN_KEYS, "the plan")
    plan: dict[str, Any] = {}
    if "task" in doc:
        plan["task"] = reader.text(doc, "task", "the plan")
    else:
        reader.problem(1, "the plan: `task` is missing; it says what the whole plan does.",
                       "add `task: <what the whole plan does>` at the top")
    if doc.get("budget") is not None:
        plan["budget"] = reader.number(doc, "budget", "the plan", bounds.BUDGET_RULE, 0, bounds.BUDGET_MOST)
    pieces = doc.get("pieces")
    if "pieces" not in doc:
        reader.problem(1, "the plan: `pieces` is missing; it lists the pieces of the task.",
                       "add `pieces:` with at least one `- id: ...` and its `task: ...`")
    elif not isinstance(pieces, CommentedSeq) or not pieces:
        said = "empty" if not pieces else _said(pieces)
        reader.problem(_line(doc, "pieces"), f"the plan, `pieces`: is {said}, but it must be a list of "
                       "pieces, each with `id` and `task`.",
                       "list the pieces under `pieces:`, each as `- id: ...` with `task: ...`")
    elif len(pieces) > bounds.PIECES_MOST:
        reader.problem(_line(doc, "pieces"), f"the plan, `pieces`: it lists {len(pieces):,} pieces, more than "
                       f"{bounds.PIECES_MOST}.", "split the task into plans of fewer pieces")
    else:
        read = [_read_piece(reader, pieces, i) for i in range(len(pieces))]
        plan["pieces"] = [piece for piece, _ in read]
        _check_graph(reader, read)
    if reader.problems:
        found = sorted(reader.problems, key=lambda p: p[0])
        raise SettingsError("\n".join(f"{source}:{line}: {text}" if line else f"{source}: {text}"
                                      for line, text, _ in found), hint=found[0][2])
    return plan


def _read_piece(reader: _Reader, pieces: CommentedSeq, i: int) -> tuple[dict[str, Any], dict[str, int]]:
    """One piece as the fields that are good, and the lines of its parts for later messages."""
    node, where = pieces[i], f"pieces[{i}]"
    lines = {"piece": _line(pieces, item=i)}
    if not isinstance(node, CommentedMap):
        reader.problem(lines["piece"], f"{where}: is {_said(node)}, but a piece must be a mapping with `id` "
                       "and `task`.", f"write {where} as `- id: ...` with `task: ...` under it")
        return {}, lines
    piece: dict[str, Any] = {}
    lines["id"] = _line(node, "id")
    if "id" not in node:
        reader.problem(lines["piece"], f"{where}: `id` is missing.", f"give {where} an `id` like `part-{i}`")
    elif (good := reader.named(PieceId, node["id"], lines["id"], f"{where}, `id`")) is not None:
        piece["id"], where = good, f"piece {good}"
    reader.keys(node, PIECE_KEYS, where)
    if "task" in node:
        piece["task"] = reader.text(node, "task", where)
    else:
        reader.problem(lines["piece"], f"{where}: `task` is missing; it tells the worker what to do.",
                       f"add `task: ...` to {where}")
    if node.get("size") is not None:
        piece["size"] = reader.number(node, "size", where, bounds.SIZE_RULE, *bounds.SIZE_RANGE)
    piece["after"] = []
    for line, item in _listed(reader, node, "after", where):
        piece["after"].append(reader.named(PieceId, item, line, f"{where}, `after`"))
        lines[f"after {item}"] = line
    for key in ("machine", "agent", "model", "run", "check"):
        if node.get(key) is not None:
            piece[key] = reader.text(node, key, where)
    _check_choices(reader, node, piece, where)
    listed = _listed(reader, node, "paths", where)
    if len(listed) > bounds.PATHS_MOST:
        reader.problem(_line(node, "paths"), f"{where}, `paths`: it lists {len(listed):,} globs, more than "
                       f"{bounds.PATHS_MOST:,}.", "write fewer, wider globs such as `src/**`")
        listed = []
    piece["paths"] = [path for line, path in listed if _good_path(reader, path, line, where)]
    if "writes" in node and _good_writes(reader, node, where):
        piece["writes"] = node["writes"]
    for name in FILE_OPTIONS:
        if name not in _READ_APART and node.get(name) is not None:
            value = reader.option(node, name, where)
            wrong = _RULES[name](piece, value) if name in _RULES and value is not None else None
            if wrong:
                reader.problem(_line(node, name), f"{where}, `{name}`: {wrong[0]}", f"{wrong[1]} in {where}, or "
                               f"remove `{name}`")
            elif value is not None:
                piece[name] = value
    return piece, lines


def _good_writes(reader: _Reader, node: CommentedMap, where: str) -> bool:
    """Whether the piece's `writes` is one of WRITES, and goes with the rest of it; else a problem said."""
    value, line = node.get("writes"), _line(node, "writes")
    if value not in WRITES:
        said = "empty" if value is None else _said(value)
        reader.problem(line, f"{where}, `writes`: {said} is not a choice; `writes: none` is the one there is, for a "
                       "piece that only reads (it runs in a shared read-only checkout and reports).",
                       f"set `writes: none` in {where}, or remove `writes` to give it a worktree of its own")
        return False
    if node.get("paths"):
        reader.problem(line, f"{where}, `writes`: a piece that writes nothing has no `paths` to write.",
                       f"remove `paths` from {where}, or remove `writes: none`")
        return False
    return True


def _only_claude(piece: dict[str, Any], value: Any) -> tuple[str, str] | None:
    if value and piece.get("agent") not in (None, "claude"):
        return "only a Claude Code worker shows a plan before it starts.", "set `agent: claude`"
    return None


# An option's own rule beyond its type: (what is wrong, what to do) for the piece read so far and its value.
_RULES = {"plan_first": _only_claude}
_OPTION_TYPES = {f.name: str(f.type) for f in fields(PieceOptions)}


def _check_choices(reader: _Reader, node: CommentedMap, piece: dict[str, Any], where: str) -> None:
    machine, agent = piece.get("machine"), piece.get("agent")
    at, line = f"{where}, `machine`", _line(node, "machine")
    known = sorted(reader.known or ())
    if machine and reader.named(MachineName, machine, line, at) and known and machine not in known:
        near = difflib.get_close_matches(machine, known, n=1, cutoff=0.6)
        said = f"; did you mean {shown(near[0])}?" if near else "."
        reader.problem(line, f"{at}: {shown(machine)} is not a known machine{said} Known machines: "
                       f"{', '.join(known)}.", f"set `machine: {near[0]}`" if near else
                       f"pick a known machine, or run `git balanced machines add {machine} --host HOST`")
    if agent and agent not in AGENTS:
        near = difflib.get_close_matches(agent, AGENTS, n=1, cutoff=0.6)
        said = f"; did you mean {shown(near[0])}?" if near else "."
        reader.problem(_line(node, "agent"), f"{where}, `agent`: {shown(agent)} is not an agent{said} "
                       f"Agents: {', '.join(AGENTS)}.", f"set `agent: {near[0] if near else AGENTS[0]}`")
    if node.get("run") is not None and agent != "shell":
        reader.problem(_line(node, "run"), f"{where}, `run`: a command to run needs `agent: shell`, but the "
                       f"piece has {f'`agent: {agent}`' if agent else 'no `agent`'}.",
                       f"add `agent: shell` to {where}, or remove `run`")
    if agent == "shell" and node.get("run") is None:
        reader.problem(_line(node, "agent"), f"{where}, `agent`: the shell agent needs `run`, the command it "
                       "runs in the worktree.", f"add `run: <command>` to {where}")


def _listed(reader: _Reader, node: CommentedMap, key: str, where: str) -> list[tuple[int, Any]]:
    """A key holding one item or a list of them, as (line, item) pairs; a problem when it is neither."""
    value = node.get(key)
    if value is None:
        return []
    if isinstance(value, CommentedSeq):
        return [(_line(value, item=j), item) for j, item in enumerate(value)]
    if isinstance(value, str):
        return [(_line(node, key), value)]
    reader.problem(_line(node, key), f"{where}, `{key}`: is {_said(value)}, but it must be a list.",
                   f"write `{key}` as a list: `{key}: [..., ...]`")
    return []


def _good_path(reader: _Reader, path: Any, line: int, where: str) -> bool:
    if not isinstance(path, str) or not path.strip():
        said = "empty" if path is None or isinstance(path, str) else _said(path)
        reader.problem(line, f"{where}, `paths`: an item is {said}, but it must be a glob such as `src/**`.",
                       "write each path as a glob relative to the repository's top folder")
        return False
    wrong = text_problem(path, most=bounds.GLOB_MOST, lines=False)
    if wrong:
        reader.problem(line, f"{where}, `paths`: {shown(path, 60)}: {wrong}.", "write each path as a short glob")
        return False
    if path.startswith("/") or ".." in path.split("/"):
        # The guard matches paths inside the worktree; one outside it could never match.
        reader.problem(line, f"{where}, `paths`: {shown(path)} leaves the repository; paths are globs "
                       "relative to its top folder.", f"write {shown(path)} relative to the top folder")
        return False
    return True


def _check_graph(reader: _Reader, read: list[tuple[dict[str, Any], dict[str, int]]]) -> None:
    first: dict[str, int] = {}
    for i, (piece, lines) in enumerate(read):
        if piece.get("id") in first:
            reader.problem(lines["id"], f"pieces[{i}], `id`: {shown(piece['id'])} is already the id of "
                           f"pieces[{first[piece['id']]}]; ids must be unique in the plan.",
                           f"give pieces[{i}] an id not used yet")
        elif piece.get("id"):
            first[piece["id"]] = i
    edges: dict[str, list[str]] = {}
    for piece, lines in read:
        if not piece.get("id") or piece["id"] in edges:
            continue
        edges[piece["id"]] = [a for a in piece["after"] if a in first]
        for after in [a for a in piece["after"] if a and a not in first]:
            near = difflib.get_close_matches(after, list(first), n=1, cutoff=0.6)
            said = f"; did you mean {shown(near[0])}?" if near else "."
            reader.problem(lines[f"after {after}"], f"piece {piece['id']}, `after`: {shown(after)} is no "
                           f"piece of this plan{said}", f"change {shown(after)} to {shown(near[0])}" if near
                           else f"remove {shown(after)} from `after`")
    for cycle in _cycles(edges):
        line = read[first[cycle[0]]][1][f"after {cycle[1]}"]
        if len(cycle) == 2:
            reader.problem(line, f"piece {cycle[0]}, `after`: it waits for itself, so it could never start.",
                           f"remove {cycle[0]} from its own `after`")
        else:
            reader.problem(line, "pieces wait for each other in a circle, so none could start: "
                           + " → ".join(cycle) + " (each waits for the next).",
                           f"remove one `after` among {', '.join(cycle[:-1])}")


def _cycles(edges: dict[str, list[str]]) -> list[list[str]]:
    """Circles of waiting pieces as `[a, b, a]`: one for each `after` that closes a circle."""
    done: set[str] = set()
    path: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:  # depth first; a step back onto the path closes a circle
        path.append(node)
        for nxt in edges.get(node, []):
            if nxt in path:
                found.append(path[path.index(nxt):] + [nxt])
            elif nxt not in done:
                visit(nxt)
        path.pop()
        done.add(node)

    for node in edges:
        if node not in done:
            visit(node)
    return found


def _line(node: CommentedMap | CommentedSeq, key: Any = None, *, item: int | None = None) -> int:
    """The 1-based line of a key of a mapping, or of an item of a list."""
    try:
        return (node.lc.key(key) if item is None else node.lc.item(item))[0] + 1
    except (KeyError, TypeError, AttributeError):
        return node.lc.line + 1  # keys brought in by a `<<:` merge have no place of their own

