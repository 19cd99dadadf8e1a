"""The agents' hooks: what `git balanced hook pre-tool-use|user-prompt-submit|stop` do with the JSON that
Claude Code and Codex send on stdin (and Pi, through templates/pi-balanced.ts, in the same shape).

- pre-tool-use (a worker's): the guard refuses an edit outside the piece's paths; with lead_allows_commands
  on, or under a lead whose own mode asks before commands, any other tool call but a read becomes a question
  to the lead, and its answer allows or denies it.
- user-prompt-submit and stop (a lead's): record the lead's permission mode, and hand the lead the inbox
  messages it has not been handed yet.
The templates under templates/ wire these to each agent; `render` fills in how to call git balanced.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from git_balanced.agents import lead_session, modes
from git_balanced.agents.wiring import render
from git_balanced.errors import BalancedError
from git_balanced.files import write_atomic
from git_balanced.git import Repo
from git_balanced.hooks import hookio, worker
from git_balanced.ui import clock

NOT_FOR_LEAD = ("answer",)  # what the lead did itself is not news to it
MAX_SHOWN = 30


# -- templates ------------------------------------------------------------------------------------------


# -- what a worker is given ------------------------------------------------------------------------------


# -- the worker's PreToolUse (hooks/worker.py decides; here a worker started without the lead's mode file) ----
def pre_tool_use(data: dict[str, Any], repo: Repo | None = None) -> dict[str, Any] | None:
    """A worker's PreToolUse: the decision to print, or None to leave it to the agent's own permissions."""
    worktree = os.environ.get("GIT_BALANCED_WORKTREE") or (str(repo.root) if repo else os.getcwd())
    return worker.decide(data, worktree)


def record_lead_mode(repo: Repo, data: dict[str, Any]) -> None:
    """Keep the permission mode a lead's hook was handed, for its workers (agents/modes.py)."""
    branch = repo.current_branch()
    if branch is not None and not os.environ.get("GIT_BALANCED_JOB"):  # a worker's own hooks are not a lead's
        from git_balanced.channel import presence  # here: a worker's pre-tool-use reads no state of the lead's

        modes.record(repo, branch, data, _session_owner(repo, branch))
        presence.mark_seen(repo, branch)  # a lead session that takes turns can answer its workers


def _session_owner(repo: Repo, branch: str) -> dict[str, Any]:
    """The process whose session this lead's hook is of: a headless lead's driver (its turns' agents come and
    go), else the agent that ran the hook (agents/lead_session.py)."""
    from git_balanced.channel import presence

    driver = presence.headless_record(repo, branch) if os.environ.get(presence.HEADLESS_ENV) else None
    pid = (driver or {}).get("pid")
    return lead_session.owner_of(pid) if isinstance(pid, int) else lead_session.of_hook()


# -- the lead's UserPromptSubmit and Stop -----------------------------------------------------------------
def _cursor(repo: Repo, branch: str) -> Path:
    from git_balanced.channel import inbox

    d = repo.state_dir / "lead-read"
    d.mkdir(exist_ok=True)
    return d / inbox.inbox_ref(branch)[len("refs/balanced/inbox/"):]


def unread(repo: Repo, branch: str) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Inbox entries not handed to the lead yet (and not its own doing), oldest first, and the newest entry
    read (what the cursor moves to)."""
    from git_balanced.channel import inbox

    everything = inbox.entries(repo, branch)
    try:
        last_sha, _, last_time = _cursor(repo, branch).read_text().strip().partition(" ")
    except FileNotFoundError:
        last_sha, last_time = "", ""
    shas = [e["sha"] for e in everything]
    if last_sha in shas:
        items = everything[shas.index(last_sha) + 1:]
    else:
        items = [e for e in everything if not last_time or e["time"] > float(last_time)]
    return [e for e in items if e.get("kind") not in NOT_FOR_LEAD], (everything[-1] if everything else None)


def mark_read(repo: Repo, branch: str, newest: dict[str, Any]) -> None:
    write_atomic(_cursor(repo, branch), f"{newest['sha']} {newest['time']!r}\n")


def lead_news(repo: Repo) -> str | None:
    """The unread messages in words for an agent lead, marked as handed over; None when there are none."""
    branch = repo.current_branch()
    if branch is None:
        return None
    items, newest = unread(repo, branch)
    if newest is not None:
        mark_read(repo, branch, newest)
    if not items:
        return None
    shown = items[-MAX_SHOWN:]
    lines = [f"git balanced: {len(items)} new message{'s' if len(items) != 1 else ''} for you, the lead of "
             f"{branch}:"]
    if len(items) > len(shown):
        lines.append(f"- ({len(items) - len(shown)} earlier ones: `git balanced inbox`)")
    lines += [f"- {clock(e['time'])} {e['text']}" for e in shown]
    if any(e.get("kind") in ("question", "passed") for e in items):
        lines.append("Answer a worker with `git balanced answer ID TEXT` (or `--allow` / `--deny REASON` for what "
                     "it asks to run), or hand the question to the person with `git balanced pass ID`.")
    return "\n".join(lines)


# -- entry points -----------------------------------------------------------------------------------------
_input, _emit = hookio.read_input, hookio.emit


def pre_tool_use_hook(repo: Repo, args: list[str]) -> int:
    return _emit(pre_tool_use(_input(), repo))


def user_prompt_submit_hook(repo: Repo, args: list[str]) -> int:
    record_lead_mode(repo, _input())
    return _emit(hookio.answer("user-prompt-submit", lead_news(repo)))


def stop_hook(repo: Repo, args: list[str]) -> int:
    record_lead_mode(repo, _input())
    return _emit(hookio.answer("stop", lead_news(repo)))


def lead_settings_hook(repo: Repo, args: list[str]) -> int:
    """Print an agent lead's hook settings: claude (for --settings or .claude/settings.json), codex (for
    .codex/hooks.json) or pi (an extension for `pi -e`)."""
    names = {"claude": "claude-lead-settings.json", "codex": "codex-lead-hooks.json", "pi": "pi-balanced.ts"}
    agent = args[0] if args else "claude"
    if agent not in names:
        raise BalancedError(f"There are no lead hooks for {agent!r}.", hint="one of: " + ", ".join(names) + ".")
    sys.stdout.write(render(names[agent]))
    return 0
