"""`git balanced hook NAME`: the entry point of every installed git hook and agent hook, one fixed table."""

from __future__ import annotations

import os
from collections.abc import Callable

from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.hooks.agent import lead_settings_hook, pre_tool_use_hook, stop_hook, user_prompt_submit_hook
from git_balanced.hooks.git_hooks import pre_merge_commit, pre_push

HOOKS: dict[str, Callable[[Repo, list[str]], int]] = {
    "pre-merge-commit": pre_merge_commit,   # git: a hand-made merge into the lead's branch
    "pre-push": pre_push,                   # git: lead commits without a passing check
    "pre-tool-use": pre_tool_use_hook,      # a worker's agent: the guard, and asking the lead
    "user-prompt-submit": user_prompt_submit_hook,  # a lead's agent: the inbox's news
    "stop": stop_hook,                      # a lead's agent: the inbox's news before it stops
    "lead-settings": lead_settings_hook,    # prints a lead's hook settings for an agent
}


def run_hook(name: str, args: list[str]) -> int:
    """The entry point of `git balanced hook NAME`."""
    fn = HOOKS.get(name)
    if fn is None:
        raise BalancedError(f"There is no balanced hook named {name!r}.",
                            hint="known hooks: " + ", ".join(sorted(HOOKS)) + ".")
    repo = Repo.discover(os.environ.get("GIT_WORK_TREE") or None)
    return fn(repo, args)
