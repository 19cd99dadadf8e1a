"""The chief's PreToolUse hook (`git balanced hook chief-pre-tool-use`): the chief talks to leads and never lands,
ships, allows a command or starts a worker. Its tools have none of that; a shell command that tries it (`git
balanced land`, `ship`, `answer --allow`, `worker`, a `git push`) is refused with the reason, as a worker's
guard refuses what its piece may not do. Claude Code calls it from the chief's settings, Pi from its extension.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from typing import Any

from git_balanced.git import Repo
from git_balanced.shipped import pretool

# What the chief never runs, each with the reason it reads.
NEVER = {
    "land": "landing is the lead's and the engine's, on a passing check",
    "ship": "shipping is the person's call alone",
    "worker": "workers are started by a lead's plan",
    "plan": "workers are started by a lead's plan",
    "start": "workers are started by a lead's plan",
    "retry": "workers are started by a lead's plan",
    "allow": "what runs is approved by the person",
    "go-ahead": "the person says go ahead",
}
WHY = "The chief talks to leads and never lands, ships, allows a command or starts a worker"
_SEPARATORS = re.compile(r"&&|\|\||[;&|\n()`]|\$\(")
_PREFIXES = {"sudo", "command", "exec", "env", "nohup", "time", "xargs"}


def _words(part: str) -> list[str]:
    try:
        words = shlex.split(part)
    except ValueError:
        words = part.split()
    while words and (words[0] in _PREFIXES or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0])):
        words = words[1:]
    return words


def _after_balanced(words: list[str]) -> list[str] | None:
    """The words after `git balanced` (or `git-balanced`, `python -m git_balanced.cli`), or None."""
    for i, w in enumerate(words):
        name = w.rsplit("/", 1)[-1]
        if name == "git-balanced" or w == "git_balanced.cli":
            return words[i + 1:]
        if name == "git":
            rest, j = words[i + 1:], 0
            while j < len(rest) and rest[j].startswith("-"):
                j += 2 if rest[j] in ("-C", "-c") else 1
            if j < len(rest) and rest[j] == "balanced":
                return rest[j + 1:]
    return None


def _git_push(words: list[str]) -> bool:
    for i, w in enumerate(words):
        if w.rsplit("/", 1)[-1] == "git":
            rest = [r for r in words[i + 1:] if not r.startswith("-")]
            return bool(rest) and rest[0] == "push" or "push" in words[i + 1:i + 4]
    return False


def refused(command: str) -> str | None:
    """Why the chief may not run this shell command, or None when it may."""
    for part in _SEPARATORS.split(command):
        words = _words(part)
        if not words:
            continue
        after = _after_balanced(words)
        verb = next((w for w in after or [] if not w.startswith("-")), None)
        if verb in NEVER:
            return f"{WHY}: `git balanced {verb}` is refused ({NEVER[verb]})."
        if verb == "answer" and after and ("--allow" in after or "--deny" in after):
            return f"{WHY}: `git balanced answer --allow` is refused (what a worker runs is the person's to allow)."
        if after is None and _git_push(words):
            return f"{WHY}: `git push` is refused (shipping is the person's call alone)."
    return None


def command_of(data: dict[str, Any]) -> str:
    """The shell command a tool call runs (Claude Code's Bash, Pi's bash, Codex's shell), or ''."""
    given = data.get("tool_input") or {}
    command = given.get("command") if isinstance(given, dict) else None
    if isinstance(command, list):
        return " ".join(shlex.quote(str(c)) for c in command)
    return str(command or "")


def pre_tool_use(data: dict[str, Any]) -> dict[str, Any] | None:
    """The chief's PreToolUse: a deny with the reason, or None to leave the call to the agent."""
    why = refused(command_of(data))
    return pretool.decision("deny", why) if why else None


def chief_pre_tool_use_hook(repo: Repo | None, args: list[str]) -> int:
    raw = sys.stdin.read()
    try:
        data = json.loads(raw) if raw.strip() else {}
    except ValueError:
        data = {}
    out = pre_tool_use(data if isinstance(data, dict) else {})
    if out is not None:
        sys.stdout.write(json.dumps(out) + "\n")
    return 0
