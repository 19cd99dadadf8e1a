"""The `shell` agent: a piece's `run` command in the worktree; the runner commits what it changed."""

from __future__ import annotations

from git_balanced.agents.base import AgentRun, Outcome, short, tail
from git_balanced.errors import BalancedError
from git_balanced.shipped.messages import Reason


class ShellAdapter:
    name = "shell"

    def build(self, *, task: str, rules: str, model: str | None, budget_usd: float | None,
              worktree: str, run_dir: str, edit_without_asking: bool = True,
              settings_json: str | None = None, level: str | None = None, run: str | None = None) -> AgentRun:
        """`sh -c RUN` in the worktree; the task reaches the command as $BALANCED_TASK, never in its text."""
        if not run or not run.strip():
            raise BalancedError(
                "The shell agent was given no command to run.",
                hint="Give the piece a `run:` line in the plan, or `git balanced worker TASK --run CMD`.",
            )
        # Model, budget, rules and level mean nothing to a shell command: it costs nothing and reads no prompt.
        return AgentRun(argv=["sh", "-c", run], env={"BALANCED_TASK": task}, files={}, meter=None)

    def outcome(self, log_text: str, exit_code: int | None) -> Outcome:
        """Exit 0 is success; anything else failed, summed up by the last lines of the log."""
        if exit_code == 0:
            return Outcome(Reason.SUCCESS, None, None, tail(log_text))
        how = "was stopped by a signal" if exit_code is None else f"exited {exit_code}"
        return Outcome(Reason.FAILED, None, None, short(f"the command {how}: {tail(log_text)}"))


def commit_message(piece: str, task: str) -> str:
    """The message of the runner's commit of a piece's leftovers: `piece: task`, then the whole task."""
    first = " ".join(task.split())
    subject = f"{piece}: {first}"
    if len(subject) > 72:  # cut at a word, as git's one-line views read best
        cut = subject[:71]
        subject = (cut[:cut.rfind(" ")] if " " in cut[len(piece) + 2:] else cut).rstrip(" ,.;:") + "…"
    # The whole task follows whenever the subject had to cut or fold it.
    return subject if subject == f"{piece}: {task.strip()}" else f"{subject}\n\n{task.strip()}"
