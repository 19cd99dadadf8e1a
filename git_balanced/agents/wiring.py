"""The wiring of the agents' hooks into a worker: the templates filled in, the environment, the guard."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_balanced import proc
from git_balanced.agents import levels, modes, toolnames
from git_balanced.bundled import template_text
from git_balanced.shipped import guard

if TYPE_CHECKING:
    from git_balanced.agents.base import AgentRun
    from git_balanced.jobs import Job
    from git_balanced.lead import Lead


# The front door's entry point as a program for `python -c`: `-m git_balanced.front` would import runpy (and with
# it importlib.util, contextlib, collections) on each start of a hook that runs on every tool call.
FRONT = "from git_balanced.front import main; sys.exit(main())"


def balanced_argv(local: bool = True) -> list[str]:
    """How a hook calls git balanced: this very interpreter and package on this machine (`proc.ours_code`: never a
    `git_balanced/` in the worktree the hook runs in, which the worker writes), `git balanced` elsewhere."""
    return proc.ours_code(FRONT) if local else ["git", "balanced"]


def render(name: str, argv: list[str] | None = None) -> str:
    """A template of templates/ with `{balanced}` (a command line) or `{balanced_argv}` (a JSON list) filled."""
    argv = argv or balanced_argv()
    text = template_text(name)
    if name.endswith(".json"):
        text = text.replace("{balanced}", json.dumps(shlex.join(argv))[1:-1])
    return text.replace("{balanced_argv}", json.dumps(argv))


def claude_settings(argv: list[str] | None = None) -> str:
    """A worker's `--settings` for Claude Code: the PreToolUse hook."""
    return render("claude-settings.json", argv)


def codex_hook_args(argv: list[str] | None = None) -> list[str]:
    """A worker's hooks for `codex exec`, as `-c hooks.<Event>=[...]` overrides, trusted for this run only
    (Codex skips hooks nobody reviewed unless told they were checked outside it)."""
    from git_balanced.settings import toml_value  # pydantic's import is kept off the hooks' own path

    spec = json.loads(render("codex-hooks.json", argv))["hooks"]
    args = ["--dangerously-bypass-hook-trust"]
    for event, groups in spec.items():
        args += ["-c", f"hooks.{event}={toml_value(groups)}"]
    return args


def with_hooks(agent: str, run: AgentRun, local: bool) -> AgentRun:
    """A Codex or Pi worker's run with its hooks added before the task (their last argument): `-c hooks...`
    for Codex, the extension for Pi. Claude's come through the adapter's `settings_json`; others have none."""
    from dataclasses import replace

    argv = balanced_argv(local)
    if agent == "codex":
        return replace(run, argv=[*run.argv[:-1], *codex_hook_args(argv), run.argv[-1]])
    if agent == "pi":
        files = {**run.files, "balanced.ts": render("pi-balanced.ts", argv)}
        return replace(run, argv=[*run.argv[:-1], "-e", "{run_dir}/balanced.ts", run.argv[-1]], files=files)
    return run


def worker_env(lead: Lead, job: Job, worktree: str, local: bool) -> dict[str, str]:
    """What a worker's hooks and `git balanced ask` need to know: its job, its lead, the lead's settings and
    what the lead's own permission mode leaves the worker (agents/modes.py)."""
    from git_balanced.lead import settings_at

    settings = settings_at(lead.repo, lead.branch).balanced
    env = {"GIT_BALANCED_JOB": job.id, "GIT_BALANCED_BRANCH": lead.branch, "GIT_BALANCED_WORKTREE": worktree,
           "GIT_BALANCED_ASK_COMMANDS": "1" if settings.lead_allows_commands else "0",
           "GIT_BALANCED_EDIT_WITHOUT_ASKING": "1" if settings.workers_edit_without_asking else "0"}
    if local:  # a worker elsewhere asks through its runner's own `git balanced` (runner.ASK_SHIM)
        env["GIT_BALANCED_LEAD"] = str(lead.repo.root)
        # where its hook reads the lead's mode at each tool call, without finding the lead's repository
        env[levels.MODE_FILE_ENV] = modes.mode_file(lead.repo, lead.branch)
    level = modes.workers_level(lead.repo, lead.branch)
    if level:  # the lead's own mode, as its hooks recorded it: the worker is held to no more than that
        env["GIT_BALANCED_WORKER_MODE"] = level
    return env


def guard_request(lead: Lead, job: Job, others: Collection[Job]) -> dict[str, Any] | None:
    """The guard for the runner to install (guard.py itself and its spec), or None for a piece without paths.
    The spec names the globs of the other live pieces (of its plan, and of `others`, the jobs the caller
    read), so a refusal can say whose a path is."""
    from git_balanced import jobs as J

    paths = list(job.paths)
    if not paths:
        return None
    owners: dict[str, list[str]] = {}
    plan = J.one_plan(lead.repo, job.plan) if job.plan else None
    for piece in plan.pieces if plan else ():
        if piece.id != job.piece and piece.paths:
            owners[piece.id] = list(piece.paths)
    for other in others:
        if other.state in J.LIVE and other.piece != job.piece and other.paths and other.lead == job.lead:
            owners.setdefault(other.piece, list(other.paths))
    script = Path(guard.__file__).read_text(encoding="utf-8")
    return {"script": script, "spec": {"piece": job.piece, "job": job.id, "paths": paths, "owners": owners}}


# The tool names a worker's hook judges by live in toolnames.py (plain data, read on every tool call).
PATCH_PATH = re.compile(toolnames.PATCH_PATH, re.M)
ASKING = re.compile(toolnames.ASKING)


def hook_rules() -> dict[str, Any]:
    """What shipped/pretool.py judges a tool call by, here and (as `bin/hook.json`) on a machine without git
    balanced: the reads, the edits and the field naming their path, a patch's paths, asking, plans."""
    return toolnames.hook_rules()
