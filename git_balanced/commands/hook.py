"""`git balanced hook NAME`: the entry point of every installed git hook and agent hook, one fixed table."""

from __future__ import annotations

import os
from types import ModuleType

from git_balanced.errors import BalancedError
from git_balanced.git import Repo

# Each hook's function, as "module:function" of git_balanced.hooks, imported only when that hook runs: a git
# hook does not pay for the agents' hooks, nor an agent's hook for the check's (tests/test_startup.py).
HOOKS: dict[str, str] = {
    "pre-merge-commit": "git_hooks:pre_merge_commit",   # git: a hand-made merge into the lead's branch
    "pre-push": "git_hooks:pre_push",                   # git: lead commits without a passing check
    "pre-tool-use": "agent:pre_tool_use_hook",          # a worker's agent: the guard, and asking the lead
    "user-prompt-submit": "agent:user_prompt_submit_hook",  # a lead's agent: the inbox's news
    "stop": "agent:stop_hook",                          # a lead's agent: the inbox's news before it stops
    "lead-settings": "agent:lead_settings_hook",        # prints a lead's hook settings for an agent
    "lead-pre-tool-use": "lead_paths:lead_pre_tool_use_hook",  # a lead's agent: keep off its running pieces' paths
}


def run_hook(name: str, args: list[str]) -> int:
    """The entry point of `git balanced hook NAME`."""
    where = HOOKS.get(name)
    if where is None:
        raise BalancedError(f"There is no balanced hook named {name!r}.",
                            hint="known hooks: " + ", ".join(sorted(HOOKS)) + ".")
    module, function = where.split(":")
    fn = getattr(_module(module), function)
    repo = Repo.discover(os.environ.get("GIT_WORK_TREE") or None)
    return int(fn(repo, args))


def _module(name: str) -> ModuleType:
    """The module of git_balanced/hooks/ named, imported now."""
    if name == "git_hooks":
        from git_balanced.hooks import git_hooks

        return git_hooks
    if name == "lead_paths":
        from git_balanced.hooks import lead_paths

        return lead_paths
    from git_balanced.hooks import agent

    return agent
