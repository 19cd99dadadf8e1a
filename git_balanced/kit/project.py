"""`git balanced lead on|off --agent A`: the project files that make an agent's sessions in this repository
leads, in each agent's own conventions, and nothing else.

- claude: `.mcp.json` (the `balanced` server), the hooks and the tools' permission in `.claude/settings.json`,
  and the instructions as the skill `.claude/skills/balanced-lead/SKILL.md`;
- codex: `[mcp_servers.balanced]` in `.codex/config.toml`, the hooks in `.codex/hooks.json`, and the
  instructions in `AGENTS.md`, inside markers;
- pi (no MCP): the extension `.pi/extensions/balanced-lead.ts`, which registers the same tools (each a
  `git balanced mcp --call`) and the hooks, and the instructions in `.pi/APPEND_SYSTEM.md`, inside markers.

Round trip: `on` keeps what a file held and adds to it; `off` takes away only what `on` added. What each file
was before and what `on` left in it are kept in `.git/balanced/lead-on/<agent>.json`: a file still as `on`
left it gets back its exact bytes; one changed since loses only `on`'s part, found by its shape.
"""

from __future__ import annotations

import base64
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_balanced.agents.wiring import render
from git_balanced.bundled import template_text
from git_balanced.errors import BalancedError
from git_balanced.files import write_atomic
from git_balanced.git import Repo

AGENTS = ("claude", "codex", "pi")
ARGV = ["git", "balanced"]  # committed files call the installed command, never this machine's interpreter
BEGIN = ">>> git balanced lead: `git balanced lead off` removes this part"
END = "<<< git balanced lead"


@dataclass(frozen=True)
class Part:
    """What `on` adds to one file: entries merged into JSON, a block inside markers, or a whole file."""

    path: str
    kind: str  # "json" | "block" | "file"
    add: Any
    comment: str = "#"  # a block's comment style: "#" (TOML) or "<!--" (Markdown)


def instructions() -> str:
    """The lead's instructions (templates/lead-tools.md)."""
    return template_text("lead-tools.md")


def parts(agent: str) -> list[Part]:
    """What `lead on --agent AGENT` adds, file by file."""
    server = {"command": ARGV[0], "args": [*ARGV[1:], "mcp"]}
    if agent == "claude":
        hooks = json.loads(render("claude-lead-settings.json", ARGV))
        return [Part(".mcp.json", "json", {"mcpServers": {"balanced": server}}),
                Part(".claude/settings.json", "json", {**hooks, "permissions": {"allow": ["mcp__balanced"]}}),
                Part(".claude/skills/balanced-lead/SKILL.md", "file",
                     template_text("claude-lead-skill.md").replace("{instructions}", instructions().rstrip()))]
    if agent == "codex":
        # Codex asks before each MCP tool call, and `codex exec` (approval "never") refuses them all: the lead's
        # own tools are approved, as Claude Code's `permissions.allow` does (none of them ships anything).
        table = (f"[mcp_servers.balanced]\ncommand = {json.dumps(server['command'])}\n"
                 f"args = {json.dumps(server['args'])}\ndefault_tools_approval_mode = \"approve\"\n")
        return [Part(".codex/config.toml", "block", table),
                Part(".codex/hooks.json", "json", json.loads(render("codex-lead-hooks.json", ARGV))),
                Part("AGENTS.md", "block", instructions(), "<!--")]
    if agent == "pi":
        return [Part(".pi/extensions/balanced-lead.ts", "file", pi_extension()),
                Part(".pi/APPEND_SYSTEM.md", "block", instructions(), "<!--")]
    raise BalancedError(f"There is no lead kit for the agent {agent!r}.", hint="one of: " + ", ".join(AGENTS) + ".")


def pi_extension() -> str:
    """Pi's extension: the lead's tools, with the MCP server's own schemas, and the lead's hooks."""
    from git_balanced.kit.server import tool_specs

    text = template_text("pi-lead.ts").replace("{tools}", json.dumps(tool_specs(), indent=2))
    return text.replace("{balanced_argv}", json.dumps(ARGV))


# -- each kind of part ------------------------------------------------------------------------------------
def _load_json(path: Path, text: str) -> dict[str, Any]:
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise BalancedError(f"{path} is not JSON ({exc}), so git balanced cannot add to it.",
                            hint="fix the file, or move it away and run `git balanced lead on` again.") from None
    if not isinstance(data, dict):
        raise BalancedError(f"{path} holds no JSON object.", hint="fix the file first.")
    return data


def _merge(into: dict[str, Any], add: dict[str, Any]) -> None:
    for key, value in add.items():
        have = into.get(key)
        if isinstance(value, dict) and isinstance(have, dict):
            _merge(have, value)
        elif isinstance(value, list) and isinstance(have, list):
            have.extend(v for v in value if v not in have)
        elif key not in into:
            into[key] = json.loads(json.dumps(value))
        elif have != value:
            raise BalancedError(f"{key} is set already, to something else than git balanced would set.",
                                hint=f"remove `{key}` from the file, or leave this agent's lead off.")


def _unmerge(into: dict[str, Any], add: dict[str, Any]) -> None:
    for key, value in add.items():
        have = into.get(key)
        if isinstance(value, dict) and isinstance(have, dict):
            _unmerge(have, value)
            if not have:
                del into[key]
        elif isinstance(value, list) and isinstance(have, list):
            have[:] = [v for v in have if v not in value]
            if not have:
                del into[key]
        elif have == value:
            del into[key]


def _markers(part: Part) -> tuple[str, str]:
    if part.comment == "<!--":
        return f"<!-- {BEGIN} -->", f"<!-- {END} -->"
    return f"# {BEGIN}", f"# {END}"


def _strip_block(text: str, part: Part) -> str:
    """The text without the marked block (and the blank line `on` put before it)."""
    begin, end = _markers(part)
    start = text.find(begin)
    stop = text.find(end, start)
    if start < 0 or stop < 0:
        return text
    stop += len(end)
    if text[stop:stop + 1] == "\n":
        stop += 1
    if text[max(0, start - 2):start] == "\n\n":
        start -= 1
    return text[:start] + text[stop:]


def added(part: Part, path: Path, before: str | None) -> str:
    """The file's text with the part added (the same text when it is there already)."""
    if part.kind == "file":
        if before is not None and before != part.add:
            raise BalancedError(f"{path} exists already, and git balanced did not write it.",
                                hint="move it away, or leave this agent's lead off.")
        return str(part.add)
    if part.kind == "json":
        data = _load_json(path, before or "")
        _merge(data, part.add)
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    begin, end = _markers(part)
    text = before or ""
    if begin in text:
        return text
    if path.suffix == ".toml":
        try:
            have = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise BalancedError(f"{path} is not TOML ({exc}), so git balanced cannot add to it.",
                                hint="fix the file first.") from None
        if "balanced" in (have.get("mcp_servers") or {}):
            raise BalancedError(f"{path} has an mcp_servers.balanced of its own.",
                                hint="remove that table, or leave this agent's lead off.")
    sep = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
    return f"{text}{sep}{begin}\n{str(part.add).rstrip()}\n{end}\n"


def removed(part: Part, text: str) -> str | None:
    """The file's text without the part, found by its shape; None when nothing else is left in it."""
    if part.kind == "file":
        return None if text == part.add else text
    if part.kind == "json":
        try:
            data = json.loads(text)
        except ValueError:
            return text  # not ours to repair
        if not isinstance(data, dict):
            return text
        kept = json.loads(text)
        _unmerge(data, part.add)
        if data == kept:
            return text  # none of it is there: the file stays as it is, byte for byte
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n" if data else None
    out = _strip_block(text, part)
    return out if out.strip() else None


# -- on and off -------------------------------------------------------------------------------------------
def _record_path(repo: Repo, agent: str) -> Path:
    d = repo.state_dir / "lead-on"
    d.mkdir(exist_ok=True)
    return d / f"{agent}.json"


def _read(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise BalancedError(f"{path} is not UTF-8 text.", hint="fix or move the file first.") from None


def _b64(text: str | None) -> str | None:
    return None if text is None else base64.b64encode(text.encode()).decode()


def _unb64(raw: str | None) -> str | None:
    return None if raw is None else base64.b64decode(raw).decode()


def _missing_dirs(root: Path, folder: Path) -> list[str]:
    """The folders between the repository's root and `folder` that do not exist yet (`on` makes them)."""
    out = []
    while folder != root and not folder.exists():
        out.append(str(folder.relative_to(root)))
        folder = folder.parent
    return out


def _write(path: Path, text: str) -> None:
    """Replace the file's text, keeping its permissions."""
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    write_atomic(path, text, mode=mode)


def lead_on(repo: Repo, agent: str) -> list[tuple[str, str]]:
    """Write the agent's lead files; (path, what was done) for each file."""
    todo = [(p, repo.root / p.path) for p in parts(agent)]
    plans = []
    for part, path in todo:  # every file is read and checked before any is written
        before = _read(path)
        plans.append((part, path, before, added(part, path, before)))
    rec_path = _record_path(repo, agent)
    record = json.loads(rec_path.read_text()) if rec_path.exists() else {"files": {}}
    out = []
    for part, path, before, after in plans:
        if after == before:
            out.append((part.path, "already there"))
            continue
        made = _missing_dirs(repo.root, path.parent)
        path.parent.mkdir(parents=True, exist_ok=True)
        _write(path, after)
        old = record["files"].get(part.path, {})
        record["files"][part.path] = {"before": old.get("before", _b64(before)) if old else _b64(before),
                                      "after": _b64(after), "dirs": old.get("dirs", made) if old else made}
        out.append((part.path, "added to" if before is not None else "written"))
    write_atomic(rec_path, json.dumps(record, indent=2) + "\n")
    return out


def lead_off(repo: Repo, agent: str) -> list[tuple[str, str]]:
    """Take away what `lead on` added for the agent; (path, what was done) for each file."""
    rec_path = _record_path(repo, agent)
    record = json.loads(rec_path.read_text()) if rec_path.exists() else {"files": {}}
    out = []
    for part in parts(agent):
        path = repo.root / part.path
        now = _read(path)
        if now is None:
            continue
        known = record["files"].get(part.path)
        if known and _unb64(known["after"]) == now:
            back = _unb64(known["before"])  # untouched since: exactly what was there
        else:
            back = removed(part, now)
            if part.kind == "file" and back is not None:
                out.append((part.path, "kept: changed since `lead on` wrote it"))
                continue
        if back == now:
            continue
        if back is None:
            path.unlink()
            out.append((part.path, "removed"))
        else:
            _write(path, back)
            out.append((part.path, "restored" if known and _unb64(known["after"]) == now else "taken out of"))
    folders = {d for f in record["files"].values() for d in f.get("dirs", [])}
    for d in sorted(folders, key=lambda d: d.count("/"), reverse=True):  # the deepest first
        try:
            (repo.root / d).rmdir()
        except OSError:
            pass  # not empty: something else lives there now
    rec_path.unlink(missing_ok=True)
    return out

