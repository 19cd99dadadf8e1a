"""A worker's PreToolUse hook (`git balanced hook pre-tool-use`), the one hook that runs on every tool call of
every worker: it starts light, reading only what its runner put in its environment, its run folder and its
lead's recorded mode, with json and os (no repository is looked for, no git door, no state).

The decision itself is shipped/pretool.py's, as on any machine. Its inputs here:
- the tool names it judges by: agents/toolnames.py, plain data;
- the guard: shipped/guard.py, imported only for an edit, with the spec the runner wrote in `{run_dir}/hooks`;
- the lead's mode now: the file named by GIT_BALANCED_LEAD_MODE_FILE (agents/levels.py), which the engine
  sets beside GIT_BALANCED_LEAD for a worker on its machine; a worker started without it finds its lead's
  repository as before (hooks/agent.py's slower path);
- asking the lead: channel/questions.py, imported only when a call waits for the lead's yes.
"""

from __future__ import annotations

import os

from git_balanced.agents import levels, toolnames
from git_balanced.errors import BalancedError
from git_balanced.hooks.hookio import emit, read_input
from git_balanced.shipped import pretool

TYPE_CHECKING = False  # typing is not imported for this: it would be a good part of the hook's start
if TYPE_CHECKING:
    from typing import Any


def ready() -> bool:
    """Whether the environment names all this hook reads: the worker's worktree, and its lead's mode file when
    its lead is on this machine. Then it runs without finding a repository (else hooks/agent.py's path)."""
    if not os.environ.get("GIT_BALANCED_WORKTREE"):
        return False
    return not os.environ.get("GIT_BALANCED_LEAD", "").strip() or bool(os.environ.get(levels.MODE_FILE_ENV))


def lead_level_now() -> str | None:
    """What the lead's mode leaves its workers at this moment, read from the lead's repository when it is on
    this machine: a lead that turned stricter since the worker started holds it to that at once."""
    where, branch = os.environ.get("GIT_BALANCED_LEAD", "").strip(), os.environ.get("GIT_BALANCED_BRANCH", "")
    if not where or not branch or not os.path.isdir(where):
        return None
    path = os.environ.get(levels.MODE_FILE_ENV)
    if path:
        return levels.workers_level_of(levels.recorded_at(path))
    from git_balanced.agents import modes
    from git_balanced.git import Repo

    try:
        return modes.workers_level(Repo.discover(where), branch)
    except BalancedError:
        return None


class _Guard:
    """shipped/guard.py, imported when the decision first asks for it (an edit): a read does not load it."""

    def __getattr__(self, name: str) -> Any:
        from git_balanced.shipped import guard

        return getattr(guard, name)


def ask_lead(tool: str, what: str, kind: str) -> dict[str, Any]:
    """Ask the lead about a tool call and wait: the decision its answer makes."""
    from git_balanced.channel import questions

    try:
        repo, job_id, branch = questions.worker_context()
    except BalancedError as exc:
        return pretool.decision("deny", f"It needs the lead's yes, and the lead cannot be asked: {exc.message}")
    qid = questions.ask(repo, job_id, what, kind=kind, tool=tool, lead_branch=branch)
    q = questions.wait(repo, qid)
    assert q is not None
    f = q["fields"]
    if q["state"] == "closed":
        return pretool.decision("deny", f"The lead's question {qid} was closed: {f.get('closed_reason')}.")
    return pretool.lead_said(qid, f.get("decision"), str(f.get("answer") or ""))


def decide(data: dict[str, Any], worktree: str) -> dict[str, Any] | None:
    """A worker's PreToolUse in `worktree`: the decision to print, or None to leave it to the agent's own
    permissions."""
    return pretool.pre_tool_use(data, toolnames.hook_rules(), worktree, _Guard(), os.environ.get("BALANCED_RUN_DIR"),
                                ask_lead, lead_level_now())


def pre_tool_use_hook() -> int:
    """`git balanced hook pre-tool-use` when ready(): the decision on the call on stdin, printed."""
    return emit(decide(read_input(), os.environ["GIT_BALANCED_WORKTREE"]))
