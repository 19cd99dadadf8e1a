"""Where workers run: this machine, or (machines/remote.py) a ticked SSH machine. Both speak to the runner."""

from __future__ import annotations

import json
import sys
from typing import Any, Protocol

from git_balanced import proc, runner
from git_balanced.errors import BalancedError
from git_balanced.git import Repo


class Host(Protocol):
    name: str

    def call(self, action: str, request: dict[str, Any]) -> dict[str, Any]: ...

    def repo_path(self) -> str: ...

    def worktree_path(self, job: str) -> str: ...

    def prepare_base(self, branch: str, base: str) -> None: ...

    def fetch_back(self, branch: str) -> str | None: ...


class LocalHost:
    """This machine: the runner is called in-process for reads, and as a process to start a worker."""

    name = "local"

    def __init__(self, repo: Repo) -> None:
        self.repo = repo

    def call(self, action: str, request: dict[str, Any]) -> dict[str, Any]:
        if action in ("status", "log", "cleanup"):  # none of these forks: no process needed
            try:
                return runner.ACTIONS[action](request)
            except runner.RequestError as exc:  # the same answer the runner gives as a process
                return {"error": str(exc)}
        res = proc.run([sys.executable, runner.__file__, action], input=json.dumps(request))
        try:
            answer = json.loads(res.out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise BalancedError(f"The runner did not answer {action} on this machine: {res.err.strip()[-500:]}",
                                hint="this is a bug: please report it with the output above.") from None
        if isinstance(answer, dict) and answer.get("error") and action == "start":
            raise BalancedError(f"The runner refused to start a worker: {answer['error']}",
                                hint="this is a bug: please report it.")
        return answer

    def repo_path(self) -> str:
        return str(self.repo.root)

    def worktree_path(self, job: str) -> str:
        return str(self.repo.worktrees_home() / job)

    def prepare_base(self, branch: str, base: str) -> None:
        """Nothing to copy: the worker shares this repository's objects. A piece whose earlier attempt ran
        on another machine goes on from what that one brought back: the branch starts there."""
        if self.repo.read_ref(f"refs/heads/{branch}") is None:
            earlier = earlier_work(self.repo, branch)
            if earlier:
                self.repo.cas_ref(f"refs/heads/{branch}", earlier, None, message="balanced: an earlier attempt")

    def fetch_back(self, branch: str) -> str | None:
        """The worker's branch lives in this repository already."""
        return self.repo.read_ref(f"refs/heads/{branch}")


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
