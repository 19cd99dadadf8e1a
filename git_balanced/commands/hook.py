"""`git balanced hook NAME`: the entry point of every installed git hook and agent hook, one fixed table."""

from __future__ import annotations

import os

from git_balanced.errors import BalancedError

TYPE_CHECKING = False  # typing is not imported for this: a worker's hook starts on every tool call
if TYPE_CHECKING:
    from types import ModuleType

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
    "chief-pre-tool-use": "chief:chief_pre_tool_use_hook",  # the chief's agent: what it never runs
}


def run_hook(name: str, args: list[str]) -> int:
    """The entry point of `git balanced hook NAME`."""
    where = HOOKS.get(name)
    if where is None:
        raise BalancedError(f"There is no balanced hook named {name!r}.",
                            hint="known hooks: " + ", ".join(sorted(HOOKS)) + ".")
    if name == "pre-tool-use":
        from git_balanced.hooks import worker

        if worker.ready():  # all it reads is named in its environment: no repository to find, no git door
            return worker.pre_tool_use_hook()
    if name == "pre-push":
        return _pre_push(args)
    if name in ("user-prompt-submit", "stop"):
        from git_balanced.hooks import turn

        code = turn.turn(name)  # most turns bring no news: told from git's files, without the git door
        if code is not None:
            return code
    module, function = where.split(":")
    fn = getattr(_module(module), function)
    if module == "chief":  # the chief's refusals read only the tool call: they hold in any folder
        return int(fn(None, args))
    from git_balanced.git import Repo

    repo = Repo.discover(os.environ.get("GIT_WORK_TREE") or None)
    return int(fn(repo, args))


def _pre_push(args: list[str]) -> int:
    """`hook pre-push`: most pushes are told from one `git cat-file --batch` (hooks/prepush.py); the rest, and
    every refusal, through the door (git_hooks.pre_push), with what git wrote on stdin."""
    import sys

    from git_balanced.hooks import prepush

    stdin = None if os.environ.get("PRE_COMMIT_LOCAL_BRANCH") else sys.stdin.read()
    code = prepush.pre_push(stdin)
    if code is not None:
        return code
    from git_balanced.git import Repo
    from git_balanced.hooks import git_hooks

    return git_hooks.pre_push(Repo.discover(os.environ.get("GIT_WORK_TREE") or None), args, stdin)


def _module(name: str) -> ModuleType:
    """The module of git_balanced/hooks/ named, imported now."""
    if name == "git_hooks":
        from git_balanced.hooks import git_hooks

        return git_hooks
    if name == "lead_paths":
        from git_balanced.hooks import lead_paths

        return lead_paths
    if name == "chief":
        from git_balanced.hooks import chief

        return chief
    from git_balanced.hooks import agent

    return agent
