"""Where workers run: this machine, or (remote.py) a ticked SSH machine. Both speak to the runner."""

from __future__ import annotations

import json
import sys
from typing import Any, Protocol

from git_balanced import fence, proc, process
from git_balanced.errors import BalancedError
from git_balanced.git import Repo, handback
from git_balanced.machines.reach import sessions, workcopy
from git_balanced.machines.reach.routes import Reach
from git_balanced.shipped import runner

LOCAL_TIMEOUT = 120.0  # seconds for a runner action here (the longest, a stop, waits 5)


def _runner_argv(repo: Repo, action: str) -> list[str]:
    """The runner on this machine, and so every worker it starts, with the lead's repository read-only where
    this machine allows it (fence.py): a worker works in its copy, and has no business writing the lead's."""
    return fence.lead_readonly(repo.common_dir, repo.root, [sys.executable, runner.__file__, action],
                               writable=[repo.worktrees_home(), workcopy.path(repo)])


class Host(Protocol):
    name: str

    def call(self, action: str, request: dict[str, Any]) -> dict[str, Any]: ...

    def call_many(self, action: str, requests: list[dict[str, Any]]) -> list[dict[str, Any]]: ...

    def answered(self, action: str, answer: dict[str, Any]) -> dict[str, Any]: ...

    def repo_path(self) -> str: ...

    def worktree_path(self, job: str) -> str: ...

    def prepare_base(self, branch: str, base: str) -> None: ...

    def fetch_back(self, branch: str) -> str | None: ...

    def fetch_back_many(self, branches: list[str]) -> dict[str, str | None]: ...

    def warm(self) -> None: ...


class LocalHost:
    """This machine: the runner is called in-process for reads, and through a session (a runner process
    kept open, sessions.py) to start or stop a worker."""

    name = "local"

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self.reach = process.part(Reach)
        self._config: tuple[dict[str, str], str] | None = None  # what copies carry of the lead's, read once a host

    def pool(self) -> sessions.Pool:
        """The runner sessions of this machine for this repository (each fenced around its own lead)."""
        repo = self.repo
        return self.reach.pool(("local", repo.identity),
                               lambda: (proc.open_pipes(_runner_argv(repo, "serve")), None))

    def call(self, action: str, request: dict[str, Any]) -> dict[str, Any]:
        return self.answered(action, self._call_raw(action, request))

    def call_many(self, action: str, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Several requests of one action through the session at once; the answers as they are."""
        answers = self._through_session(lambda p: p.call_many(action, requests, LOCAL_TIMEOUT), action)
        answers = answers or [None] * len(requests)
        return [a if a is not None else self._call_raw(action, r) for a, r in zip(answers, requests, strict=True)]

    def _through_session(self, ask: Any, action: str) -> Any:
        try:
            return ask(self.pool())
        except sessions.SessionTimeout:
            raise BalancedError(f"The runner on this machine did not answer {action} within {LOCAL_TIMEOUT:.0f} s.",
                                hint="`git balanced board` shows the job; the engine tries again.") from None

    def _call_raw(self, action: str, request: dict[str, Any]) -> dict[str, Any]:
        if action in ("status", "log", "cleanup"):  # none of these forks: no process needed
            try:
                return dict(runner.ACTIONS[action](request))
            except runner.RequestError as exc:  # the same answer the runner gives as a process
                return {"error": str(exc)}
        answer = self._through_session(lambda p: p.call(action, request, LOCAL_TIMEOUT), action)
        if answer is not None:
            return dict(answer)
        res = proc.run(_runner_argv(self.repo, action), input=json.dumps(request))
        try:
            answer = json.loads(res.out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise BalancedError(f"The runner did not answer {action} on this machine: {res.err.strip()[-500:]}",
                                hint="this is a bug: please report it with the output above.") from None
        if not isinstance(answer, dict):
            raise BalancedError(f"The runner answered {action} on this machine with {answer!r}.",
                                hint="this is a bug: please report it.")
        return answer

    @staticmethod
    def answered(action: str, answer: dict[str, Any]) -> dict[str, Any]:
        """The answer, unless it is a start the runner refused: that raises, saying why."""
        if answer.get("error") and action == "start":
            raise BalancedError(f"The runner refused to start a worker: {answer['error']}",
                                hint="this is a bug: please report it.")
        return answer

    def warm(self) -> None:
        """Open a runner session ahead of the starts it will serve."""
        self.pool().warm(LOCAL_TIMEOUT)

    def repo_path(self) -> str:
        """The folder of this repository's worker copies (workcopy.py): never the lead's own repository. A
        job's worktree belongs to its branch's copy, `branch_repo`."""
        return str(workcopy.path(self.repo))

    def branch_repo(self, branch: str) -> str:
        """The worker copy of `branch`, which only its job's worker writes where the fence works."""
        return str(workcopy.ensure(self.repo, workcopy.WORKERS, branch))

    def worktree_path(self, job: str) -> str:
        return str(self.repo.worktrees_home() / job)

    def prepare_base(self, branch: str, base: str) -> None:
        """Make the base visible in the branch's worker copy, with the lead's hooks, and set the branch there
        to what this repository recorded (an earlier attempt's work, here or fetched back from another
        machine, else the base): as an SSH machine's copy gets it pushed, without a push, since the copy
        borrows this repository's objects."""
        if self._config is None:  # a batch of starts reads the lead's config once (a host is made per batch)
            self._config = workcopy.copy_config(self.repo)  # one `git config` for both
        carried, hooks_path = self._config
        earlier = earlier_work(self.repo, branch)
        # A copy made now has the base and the branch written in it before it takes its place: no update-ref.
        copy, made = workcopy.ensure_with(self.repo, workcopy.WORKERS, branch, carried,
                                          workcopy.base_refs(branch, base, earlier))
        workcopy.sync_hooks(self.repo, copy, hooks_path)
        if not made:
            workcopy.set_base(copy, branch, base, earlier)

    def fetch_back(self, branch: str) -> str | None:
        """Fetch exactly the worker's branch from the copy into `refs/heads/<branch>`; the ref's name."""
        return self.fetch_back_many([branch])[branch]

    def fetch_back_many(self, branches: list[str]) -> dict[str, str | None]:
        """Each branch from its own copy; None for a branch that has none here. Each branch's objects come in
        two git processes and every branch's ref moves in one (git/handback.py); one that cannot is fetched."""
        out: dict[str, str | None] = {}
        carried: dict[str, str] = {}
        fetch: list[str] = []
        for branch in branches:
            copy = workcopy.for_branch(self.repo, branch)
            tip = workcopy.carry_back(self.repo, copy, branch) if copy.is_dir() else None
            if tip:
                carried[branch] = tip
            else:
                fetch.append(branch)
        if not handback.set_branches(self.repo, carried):
            fetch += list(carried)
        else:
            out.update({b: f"refs/heads/{b}" for b in carried})
        for branch in fetch:
            copy = workcopy.for_branch(self.repo, branch)
            out.update(workcopy.fetch_branches(self.repo, copy, [branch]) if copy.is_dir() else {branch: None})
        return {b: out[b] for b in branches}

    def forget(self, branch: str) -> None:
        """Remove the branch's worker copy once its worktree is gone."""
        workcopy.forget(self.repo, branch)


def earlier_work(repo: Repo, branch: str) -> str | None:
    """The newest commit earlier attempts left for `branch`: its own branch here, or one fetched back from
    another machine (`refs/remotes/<machine>/<branch>`)."""
    tips = []
    own = repo.read_ref(f"refs/heads/{branch}")
    if own:
        tips.append(own)
    for ref, sha in repo.list_refs("refs/remotes/").items():
        if ref.split("/", 3)[-1] == branch:
            tips.append(sha)
    best: str | None = None
    for sha in tips:
        if best is None or (sha != best and repo.is_ancestor(best, sha)):
            best = sha
    return best


def negotiation_tips(repo: Repo, lead_ref: str, fetched: str) -> tuple[str, ...]:
    """What a fetch of a worker's branch back from a machine tells the machine this repository has: the lead's
    branch (every base pushed there came from it) and the branch as an earlier attempt left it here, when it
    did. Not every ref: a machine's copy never had the state's chains or the archive, and over SSH (git's
    protocol 0, where sshd does not pass GIT_PROTOCOL on) git would name each of their commits to it, back to
    the base: 11,872 of them a fetch in a lead with 10,000 jobs of history, 130 ms of CPU where 28 ms do
    (docs/performance.md, Scale). Only refs that exist (git refuses a tip it cannot find); none, git's default."""
    return tuple(ref for ref in (lead_ref, fetched) if repo.read_ref(ref))
