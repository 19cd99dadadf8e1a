"""The lead's own PreToolUse (`git balanced hook lead-pre-tool-use`, wired by `lead on` for Claude Code, Codex and
Pi): while its pieces run, an edit of a path that a running piece owns (its `paths`) is refused, naming the
piece and its job, so that a lead does not do its workers' work under them. `[balanced]
lead_keeps_off_workers_paths = false` turns it off. Anything that is not an edit, and an edit elsewhere, is left to
the agent's own permissions."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from git_balanced.agents.wiring import hook_rules
from git_balanced.git import Repo
from git_balanced.hooks.hookio import emit, read_input
from git_balanced.shipped import guard, pretool
from git_balanced.vocab import AT_WORK


@dataclass(frozen=True)
class Owned:
    """A path the lead may not edit now: which piece owns it, by which glob, and the job at work on it."""

    path: str
    piece: str
    job: str
    glob: str


def owned(repo: Repo, branch: str, paths: list[str]) -> list[Owned]:
    """Of `paths` (relative to the repository), those a piece of this lead at work (queued, running or paused)
    owns, each with the first such piece."""
    from git_balanced import jobs as J

    at_work = [j for j in J.all_jobs(repo).values() if j.lead == branch and j.state in AT_WORK and j.paths]
    out = []
    for path in paths:
        for j in sorted(at_work, key=lambda j: (j.piece, j.id)):
            hit = next((g for g in j.paths if guard.matches(path, [g])), None)
            if hit is not None:
                out.append(Owned(path, j.piece, j.id, hit))
                break
    return out


def refusal(repo: Repo, data: dict[str, Any]) -> dict[str, Any] | None:
    """The hook's answer to one tool call of the lead: a denial when it edits a path a running piece owns."""
    if os.environ.get("GIT_BALANCED_JOB"):  # a worker's own hooks are not a lead's
        return None
    tool, tool_input = str(data.get("tool_name") or ""), data.get("tool_input")
    cwd = str(data.get("cwd") or os.getcwd())
    edited = pretool.edited_paths(hook_rules(), tool, tool_input if isinstance(tool_input, dict) else {}, cwd)
    root = str(repo.root)
    inside = [os.path.relpath(os.path.realpath(p), os.path.realpath(root)) for p in edited or ()
              if pretool.inside(p, root)]
    branch = repo.current_branch()
    if not inside or branch is None:
        return None
    from git_balanced.lead import settings_at

    if not settings_at(repo, branch).balanced.lead_keeps_off_workers_paths:
        return None
    hits = owned(repo, branch, inside)
    if not hits:
        return None
    said = "; ".join(f"{h.path} belongs to piece {h.piece} (its `paths` has {h.glob}), whose job {h.job} is at work"
                     for h in hits)
    return pretool.decision("deny", f"git balanced refused this edit: {said}. Leave it to that worker: tell it "
                            f"with `git balanced tell {hits[0].job} TEXT`, or wait until it lands (`git balanced "
                            "board`). `lead_keeps_off_workers_paths = false` under [balanced] turns this off.")


def lead_pre_tool_use_hook(repo: Repo, args: list[str]) -> int:
    """`git balanced hook lead-pre-tool-use`: the event's JSON on stdin, the decision (if any) on stdout."""
    return emit(refusal(repo, read_input()))
