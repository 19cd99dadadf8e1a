"""The lead's permission mode, read from what its own hooks receive, and what it leaves its workers: never more
than the lead may do itself.

Claude Code and Codex both put `permission_mode` in a hook's input, in Claude Code's words (`default`,
`acceptEdits`, `plan`, `dontAsk`, `bypassPermissions`; Claude Code also `auto`), and Codex's sandbox is read from
its session's rollout; Pi has no modes, so its extension (templates/pi-balanced.ts) names one from the tools it was
given. The lead's hooks record the mode they were handed; a worker started after goes by it, and a worker on this
machine by the mode its lead is in at each tool call, whichever is stricter. A lead never seen in a session (you,
on the command line) leaves workers to the settings, as before, and so does a lead whose session has ended: a
record is its session's (agents/lead_session.py) and counts only while that process runs. The worker's agent is
started at the same level (START), so a call its hook never saw is held by the agent's own flags.
"""

from __future__ import annotations

import os
import time

from git_balanced.agents import lead_model, lead_session
from git_balanced.agents.levels import FROM_LEAD as FROM_LEAD
from git_balanced.agents.levels import LEVELS as LEVELS
from git_balanced.agents.levels import level_of, mode_file_in, recorded_at, stricter, workers_level_of
from git_balanced.shipped import lightjson  # json and re are not imported on a turn that writes nothing

TYPE_CHECKING = False  # a lead's hook records its mode on every turn: typing and the git door are not loaded
if TYPE_CHECKING:
    from typing import Any

    from git_balanced.git import Repo

# LEVELS (strictest first) and FROM_LEAD (a lead's mode -> its workers' level) are in levels.py, read by a
# worker's hook on every tool call.

# A Claude Code worker's tools allowed by name (`--allowedTools`): `bypassPermissions` refuses to start as root
# (a common case on build machines), so the tools it may use unasked are named. Without Bash in the list a
# command its PreToolUse hook did not allow is refused, even where the hook was never reached.
CLAUDE_READS = "Read,Glob,Grep"
CLAUDE_EDITS = "Read,Write,Edit,MultiEdit,Glob,Grep,NotebookEdit,TodoWrite"
CLAUDE_ALL = "Bash," + CLAUDE_EDITS
PI_READS = "read,grep,find,ls"

# Each worker's agent is started with these flags at each level (agents/claude.py, codex.py, pi.py build from
# them), and its PreToolUse hook (shipped/pretool.py) holds each call to the level: together, in the words
# of docs/agents.md's table (tests/hooks/test_modes.py checks that the table is this). Codex has no approval
# policy for `exec` that refuses a command it was not asked about (`untrusted` is refused by 0.171, and
# `on-request` runs a command inside the sandbox unasked), so its hook is what asks.
START = {
    "read-only": {"claude": ["--permission-mode", "plan", "--allowedTools", CLAUDE_READS],
                  "codex": ["--sandbox", "read-only"], "pi": ["--tools", PI_READS]},
    "ask": {"claude": ["--permission-mode", "default", "--allowedTools", CLAUDE_READS],
            "codex": ["--sandbox", "workspace-write"], "pi": []},
    "edits": {"claude": ["--permission-mode", "acceptEdits", "--allowedTools", CLAUDE_EDITS],
              "codex": ["--sandbox", "workspace-write"], "pi": []},
    "free": {"claude": ["--permission-mode", "acceptEdits", "--allowedTools", CLAUDE_ALL],
             "codex": ["--sandbox", "workspace-write"], "pi": []},
}
WORKER_AGENTS = {
    "read-only": {"claude": "reads only; every edit and Bash call refused",
                  "codex": "reads only; every patch and shell command refused", "pi": "reads only"},
    "ask": {"claude": "each edit and Bash call waits for the lead's yes",
            "codex": "each patch and shell command waits for the lead's yes",
            "pi": "every tool; each `edit`, `write` and `bash` waits for the lead's yes"},
    "edits": {"claude": "edits go ahead, each Bash call waits for the lead's yes",
              "codex": "patches go ahead, each shell command waits for the lead's yes",
              "pi": "every tool; `edit` and `write` go ahead, each `bash` waits for the lead's yes"},
    "free": {"claude": "as the settings say", "codex": "as the settings say",
             "pi": "every tool, as the settings say"},
}


def from_settings(edit_without_asking: bool = True, lead_allows_commands: bool = False) -> str:
    """The level the settings alone leave a worker: `ask` when it may not edit unasked, `edits` when its
    commands go to the lead, else `free`."""
    if not edit_without_asking:
        return "ask"
    return "edits" if lead_allows_commands else "free"


def effective(lead_level: str | None, edit_without_asking: bool = True, lead_allows_commands: bool = False) -> str:
    """The level a worker is started at: the stricter of the settings' and its lead's."""
    return stricter(from_settings(edit_without_asking, lead_allows_commands), lead_level) or "free"


def start_flags(agent: str, level: str | None, edit_without_asking: bool = True) -> list[str]:
    """The flags that hold `agent`'s worker to `level` (as effective() makes it of the settings). A Codex or
    Pi worker that may not edit unasked makes no edit at all, as before: nothing would ask for it."""
    held = effective(level, edit_without_asking)
    if not edit_without_asking and agent in ("codex", "pi"):
        held = "read-only"
    return list(START[held][agent])


def for_worker(repo: Repo, branch: str) -> str:
    """The level a worker of the lead of `branch` is started at: its lead's mode and its settings together."""
    from git_balanced.lead import settings_at

    settings = settings_at(repo, branch).balanced
    return effective(workers_level(repo, branch), settings.workers_edit_without_asking,
                     settings.lead_allows_commands)


# Codex reports `bypassPermissions` whenever it never asks (every `codex exec`), whatever its sandbox: the
# sandbox, which its session's rollout file records as `sandbox_policy`, is what still holds it back. A worker
# of a sandboxed Codex lead is held as far: no writes, or no command the lead has not seen.
FROM_SANDBOX = {"read-only": "read-only", "workspace-write": "edits", "danger-full-access": "free",
                "external-sandbox": "edits"}
SANDBOX = r'"sandbox_policy":\s*\{\s*"type":\s*"([a-z-]+)"'  # compiled when a Codex lead's turn reads it
TAIL_BYTES = 1 << 20  # the newest turn's context is near the end of the rollout


def sandbox_of(data: dict[str, Any]) -> str | None:
    """The sandbox of the Codex session whose hook input is `data`, from its rollout file, or None."""
    try:
        with open(str(data.get("transcript_path") or ""), "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - TAIL_BYTES))
            tail = f.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    import re

    found = re.findall(SANDBOX, tail)
    return found[-1] if found else None


def agent_of(data: dict[str, Any]) -> str:
    """Which agent sent a hook's input: Pi's extension says so; Codex's carries a `turn_id`."""
    said = str(data.get("agent") or "")
    if said:
        return said
    return "codex" if "turn_id" in data else "claude"


def _path(repo: Repo, branch: str) -> str:
    (repo.state_dir / "lead-mode").mkdir(exist_ok=True)
    return mode_file_in(str(repo.state_dir), branch)


def mode_file(repo: Repo, branch: str) -> str:
    """The path of the file the lead of `branch` records its mode in (a worker's hook reads it: levels.py)."""
    return _path(repo, branch)


KEPT = ("mode", "agent", "session", "level", "model", "pid", "tick")  # a change to any of them is written


def record(repo: Repo, branch: str, data: dict[str, Any], owner: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """Keep the mode a lead's hook was handed (its input `data`), with its agent, session and model (where its
    input shows it: agents/lead_model.py), for as long as the session's process runs (`owner`, by default the
    one this hook's process runs under: lead_session.py); None when the input names no mode (then what was
    recorded before stands)."""
    return record_at(_path(repo, branch), data, owner)


def record_at(path: str, data: dict[str, Any], owner: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """record, in the lead's mode file at `path` (mode_file_in: a hook that found its checkout itself)."""
    owner = owner or lead_session.of_hook()
    mode = str(data.get("permission_mode") or "")
    if not mode:  # a lead whose hooks name no mode (Pi's lead extension) may still name its model
        agent = agent_of(data)
        remember_model_at(path, agent, lead_model.model_of(data, agent), data.get("session_id"), owner)
        return None
    agent = agent_of(data)
    sandbox = sandbox_of(data) if agent == "codex" else None
    level = stricter(level_of(mode), FROM_SANDBOX.get(sandbox, "ask") if sandbox else None)
    rec: dict[str, Any] = {"mode": mode, "agent": agent, "session": data.get("session_id"), "at": time.time(),
                           "level": level, **owner}
    if sandbox:
        rec["sandbox"] = sandbox
    try:
        with open(path, encoding="utf-8") as fh:
            old = lightjson.loads(fh.read())
    except (FileNotFoundError, ValueError):
        old = None
    model = lead_model.model_of(data, agent)
    if model is None and isinstance(old, dict) and old.get("session") == rec["session"]:
        model = old.get("model")  # a hook that does not say keeps what the session said before
    if model:
        rec["model"] = model
    if not old or [old.get(k) for k in KEPT] != [rec.get(k) for k in KEPT]:
        _write(path, rec)
    return rec


def _write(path: str, rec: dict[str, Any]) -> None:
    import json

    from git_balanced.files import write_atomic  # only a change is written: most turns import no writer

    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_atomic(path, json.dumps(rec, sort_keys=True) + "\n")


def recorded(repo: Repo, branch: str) -> dict[str, Any] | None:
    """The lead's mode as its hooks last recorded it, or None, also when the session that recorded it has ended:
    a mode belongs to its session, and a run after it without an agent lead goes by the settings."""
    return recorded_at(_path(repo, branch))


def _read(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            rec = lightjson.loads(fh.read())
    except (FileNotFoundError, ValueError):
        return {}
    return rec if isinstance(rec, dict) else {}


def last(repo: Repo, branch: str) -> dict[str, Any]:
    """What the lead's hooks last recorded of its session (agent, mode, session, model), or {}, whether or not
    that session still runs (the board says when it was seen)."""
    return _read(_path(repo, branch))


def remember_model(repo: Repo, branch: str, agent: str, model: str | None, session: Any = None,
                   owner: dict[str, Any] | None = None) -> None:
    """Keep the model of the lead of `branch` when nothing recorded its mode with it (a lead whose hooks name no
    mode, a headless lead), for as long as its session's process runs (`owner`, as for record()): beside the
    mode recorded for the same agent by the same process, else alone (no mode: no level)."""
    remember_model_at(_path(repo, branch), agent, model, session, owner)


def remember_model_at(path: str, agent: str, model: str | None, session: Any = None,
                      owner: dict[str, Any] | None = None) -> None:
    """remember_model, in the lead's mode file at `path`."""
    if not model:
        return
    owner = owner or lead_session.of_hook()
    old = _read(path)
    same = old.get("agent") == agent and old.get("pid") == owner.get("pid") and lead_session.lives(old)
    if same and old.get("model") == model:
        return
    rec = {**old, "model": model} if same else \
        {"agent": agent, "model": model, "session": session, "at": time.time(), **owner}
    _write(path, rec)


def model_for(repo: Repo, branch: str, agent: str) -> str | None:
    """The model the lead of `branch` runs on when it is an agent of the kind `agent`, else None: a worker of
    the same agent starts on it. None too when the session that named it has ended."""
    rec = _read(_path(repo, branch))
    model = rec.get("model") if rec.get("agent") == agent and lead_session.lives(rec) else None
    return model if isinstance(model, str) and model else None


def workers_level(repo: Repo, branch: str) -> str | None:
    """The level the lead of `branch` leaves its workers, or None when no lead session was recorded."""
    return workers_level_of(recorded(repo, branch))
