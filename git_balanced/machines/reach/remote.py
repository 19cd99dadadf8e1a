"""A ticked SSH machine as a Host (hosts.py): the same runner as here, sent with `python3` over the master.

Every command goes through transport.py: the runner's source and its request travel on stdin, git pushes the
base into the machine's copy of this repository (copies.py: `~/<repository>`, or `~/<repository>-<short id>`
when that one is another repository's) and fetches a finished branch back into
`refs/remotes/<machine>/balanced/*` from the copy of that branch's own the runner made there
(shipped/branchcopy.py), where its worker worked. The transports, sessions and batches are this process's
Reach (routes.py), so a long-running engine pays for one SSH connection per machine.
`GIT_BALANCED_SSH_MULTIPLEX=0` turns the shared connection off (the benchmark measures against it). Through a
session, what the engine asks per piece goes together (batched.py): the logs of the workers a status answer
says finished are read ahead in one message, and cleanups go in the background, together (`RemoteHost.call`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

from git_balanced import proc, process
from git_balanced.errors import BalancedError
from git_balanced.lead import Lead
from git_balanced.machines.inventory import records
from git_balanced.machines.inventory.names import SshHost
from git_balanced.machines.reach import copies, sessions
from git_balanced.machines.reach.copies import copy_path, worktrees_folder
from git_balanced.machines.reach.hosts import earlier_work, negotiation_tips
from git_balanced.machines.reach.routes import Reach
from git_balanced.machines.reach.transport import MAX_SESSIONS, MachineUnreachable, Transport, ssh_failed
from git_balanced.shipped import branchcopy
from git_balanced.untrusted import machine_program
from git_balanced.vocab import RunState

# Seconds a runner action may take there; the runner answers at once (the worker runs detached).
TIMEOUTS = {"start": 60.0, "status": 30.0, "stop": 40.0, "log": 60.0, "cleanup": 90.0}
GIT_TIMEOUT = 300.0
LOG_LIMIT = 4 << 20  # what the engine reads of a finished worker's log (engine/workers.read_log)
READ_AHEAD_BYTES = 16 << 20  # logs read ahead after one status answer at most; the rest are read when asked


def transport_for(host: SshHost | str) -> Transport:
    """This process's Transport to an SSH host (routes.py keeps one per host)."""
    return process.part(Reach).transport(host)


def _key(request: dict[str, Any]) -> str:
    return json.dumps(request, sort_keys=True)


class MachineNotReady(MachineUnreachable):
    """A machine that is not ticked or not ready for this repository: nothing was sent there."""


class RemoteHost:
    """An SSH machine: the runner is sent to its python3, and git carries the branches both ways."""

    def __init__(self, lead: Lead, machine: str) -> None:
        self.lead = lead
        self.repo = lead.repo
        self.name = machine
        self.reach = process.part(Reach)
        self.alias = records.host_alias(machine)
        self.transport = self.reach.transport(self.alias)
        self._record = records.readiness(self.repo).get(machine, {})
        key = (self.alias, str(self.transport.config), self.transport.multiplex, str(self.repo.common_dir))
        self._ahead, self._later = self.reach.batches(key)

    # -- the runner ----------------------------------------------------------------------------------
    def call(self, action: str, request: dict[str, Any]) -> dict[str, Any]:
        """Run one runner action there. Without the shared connection, each request is a connection of its own,
        in turn. Through this process's session there: a cleanup is queued, sent in the background with the
        others that come meanwhile, and answers `{"job", "queued": True}` at once; a log is taken from what a
        status answer read ahead when it had it; a start, and a request about the same job, first waits for
        the cleanups queued before it."""
        if not self.transport.multiplex:  # no session to send requests together through
            return self.answered(action, self._call_raw(action, request))
        job = str(request.get("job", ""))
        if action in ("start", "stop", "cleanup"):  # the job's log is to change or go: not read ahead
            self._ahead.forget([job])
        if action == "cleanup":
            self._later.add(dict(request), lambda rs: self._call_many_now("cleanup", rs))
            return {"job": request.get("job"), "queued": True}
        # Reading or settling other jobs cannot meet a cleanup there; a start, or the same job, can.
        named = request.get("jobs") if action == "status" else [job] if action != "start" else None
        self._later.wait([str(j) for j in named] if isinstance(named, list) else None)
        if action == "log":
            kept = self._ahead.take((job, _key(request)), TIMEOUTS["log"])
            if kept is not None:
                return self.answered(action, kept)
        answer = self.answered(action, self._call_raw(action, request))
        if action == "status":
            self._read_logs_ahead(request, answer)
        return answer

    def call_many(self, action: str, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Several requests of one action in one round trip through a session (a pass's starts there);
        the runner's answers as they are, each to be read with `answered`."""
        self._ahead.forget([str(r.get("job", "")) for r in requests])
        self._later.wait()
        return self._call_many_now(action, requests)

    def _read_logs_ahead(self, request: dict[str, Any], answer: dict[str, Any]) -> None:
        """Ask, in one message, for the log of each job the status answer says finished: the engine reads
        each one next (a round trip each otherwise). Only for a status of named jobs, and up to
        READ_AHEAD_BYTES of logs."""
        states = answer.get("jobs")
        if not isinstance(request.get("jobs"), list) or "runs_dir" not in request or not isinstance(states, dict):
            return
        left = READ_AHEAD_BYTES
        keyed = []
        for job, st in states.items():
            if not isinstance(st, dict) or st.get("state") != RunState.FINISHED:
                continue
            size = min(int(st.get("log_size") or 0), LOG_LIMIT)
            if size > left:
                continue
            left -= size
            req = {"job": job, "runs_dir": request["runs_dir"], "offset": 0, "limit": LOG_LIMIT}
            keyed.append(((job, _key(req)), req))
        self._ahead.ask(keyed, lambda rs: self._call_many_now("log", rs))

    def _call_many_now(self, action: str, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        timeout = TIMEOUTS.get(action, 60.0)
        answers: list[dict[str, Any] | None] | None = None
        if self.transport.multiplex:
            answers = self._through_session(lambda p: p.call_many(action, requests, timeout), action, timeout)
        answers = answers or [None] * len(requests)
        left = [i for i, a in enumerate(answers) if a is None]
        if left:  # as one-offs, at once: each its own command, up to the host's session cap
            with ThreadPoolExecutor(max_workers=min(len(left), MAX_SESSIONS)) as pool:
                for i, answer in zip(left, pool.map(lambda i: self._call_raw(action, requests[i]), left), strict=True):
                    answers[i] = answer
        return [a for a in answers if a is not None]

    def _through_session(self, ask: Any, action: str, timeout: float) -> Any:
        """What `ask(pool)` returns; None when no session can be had now (every session slot there is
        taken: a one-off waits for one)."""
        try:
            return ask(self._pool())
        except sessions.SessionTimeout:
            raise self._timed_out(action, timeout) from None
        except MachineUnreachable:
            raise
        except BalancedError:
            return None

    def _call_raw(self, action: str, request: dict[str, Any]) -> dict[str, Any]:
        timeout = TIMEOUTS.get(action, 60.0)
        if self.transport.multiplex:
            answer = self._through_session(lambda p: p.call(action, request, timeout), action, timeout)
            if answer is not None:
                return dict(answer)
        res = self.transport.run_python(self.reach.runner_source(), [action], input=json.dumps(request),
                                        timeout=timeout)
        if res.code == 124:
            raise self._timed_out(action, timeout)
        lines = res.out.strip().splitlines()
        try:
            answer = json.loads(lines[-1])
        except (ValueError, IndexError):
            if res.code == 127:
                raise BalancedError(f"python3 is not installed on {self.name} (or not on its PATH).",
                                    hint=f"install python3 there, then `git balanced ready {self.name}`.") from None
            raise BalancedError(f"The runner did not answer {action} on {self.name}: "
                                f"{(res.err or res.out).strip()[-500:]}",
                                hint=f"`git balanced ready {self.name}` checks that machine.") from None
        if not isinstance(answer, dict):
            raise BalancedError(f"The runner on {self.name} answered {action} with {answer!r}.",
                                hint="this is a bug: please report it.")
        return answer

    def warm(self) -> None:
        """Open a runner session there ahead of the starts it will serve; a failure is left to them."""
        if self.transport.multiplex:
            with contextlib.suppress(BalancedError):
                self._pool().warm(TIMEOUTS["start"])

    def _pool(self) -> sessions.Pool:
        return self.reach.pool(("ssh", self.alias, str(self.transport.config)), self._open_session)

    def _open_session(self) -> Any:
        return self.transport.open_python(self.reach.runner_source(), ["serve"])

    def _timed_out(self, action: str, timeout: float) -> MachineUnreachable:
        records.mark_timed_out(self.repo, self.name, f"it did not answer within {timeout:.0f} s")
        return MachineUnreachable(f"Machine {self.name} did not answer within {timeout:.0f} s ({action}).",
                                  hint=f"try `ssh {self.alias} true`; `git balanced machines` shows it.",
                                  timed_out=True)

    def answered(self, action: str, answer: dict[str, Any]) -> dict[str, Any]:
        """The answer, unless it is a start the runner refused: that raises, saying why."""
        if answer.get("error") and action == "start":
            raise BalancedError(f"The runner on {self.name} refused to start a worker: {answer['error']}",
                                hint=f"`git balanced ready {self.name}` checks that machine.")
        return answer

    # -- where things are there ----------------------------------------------------------------------
    def home(self) -> str:
        recorded = self._record.get("home")
        return str(recorded) if recorded else self.reach.home(self.transport, TIMEOUTS["status"])

    def repo_path(self) -> str:
        """This repository's copy there (the one `ready` found or made), as an absolute path."""
        return str(self._record.get("repo_path") or copy_path(self.home(), self.repo.name))

    def worktree_path(self, job: str) -> str:
        """`~/.balanced/worktrees/<repository>-<short hash of the copy's git folder>/<job>` there."""
        return f"{worktrees_folder(self.home(), self.repo_path(), self.repo.name)}/{job}"

    # -- branches both ways --------------------------------------------------------------------------
    def prepare_base(self, branch: str, base: str) -> None:
        """Push the base commit, and what an earlier attempt of this branch committed, into the copy."""
        if self.name not in records.ticked(self.repo):
            raise MachineNotReady(f"Machine {self.name} is not ticked for this repository.",
                                  hint=f"tick it: `git balanced tick {self.name}`.")
        if not self._record.get("ready"):
            raise MachineNotReady(f"Machine {self.name} is not ready: "
                                  f"{self._record.get('why') or '`git balanced ready` has not run'}.",
                                  hint=f"`git balanced ready {self.name}` prepares it.")
        owner = copies.identity(self.repo)
        if self._record.get("repository") != owner.id:  # readied before copies were keyed, or by another id
            raise MachineNotReady(f"Machine {self.name} has no copy known to be this repository's "
                                  f"(id {owner.short}).",
                                  hint=f"`git balanced ready {self.name}` finds or makes it.")
        earlier = earlier_work(self.repo, branch)
        self._later.wait()  # a cleanup on its way frees the branch this push may write
        self.reach.push_once((self.name, str(self.repo.common_dir), base),
                             lambda: self._push_base(branch, base, earlier), again=earlier is not None)

    def _push_base(self, branch: str, base: str, earlier: str | None) -> None:
        # Leased on the copy's owner mark, atomically: into this repository's copy, or nowhere.
        lease, mark = copies.owner_lease(self.repo, copies.identity(self.repo))
        url = self.transport.git_url(self.repo_path())
        receive = machine_program("receive-pack")
        res = self._git("push", partial(self.repo.push, url, [mark, f"+{base}:refs/balanced/base/{self.lead.branch}"],
                                        quiet=False, lease=lease, receive_pack=receive))
        if copies.lease_refused(res.out):
            why = f"its copy {self.repo_path()} is no longer this repository's"
            records.set_readiness(self.repo, self.name, {**self._record, "ready": False, "why": why})
            raise MachineNotReady(f"Machine {self.name} is not ready: {why}; nothing was pushed there.",
                                  hint=f"`git balanced ready {self.name}` finds or makes this repository's copy.")
        if earlier and res.code == 0:
            # Its objects, for the branch's own copy to borrow: the runner sets the branch there from the request
            # (`start_at`). Forced, whatever the machine's copy held; apart from the leased push, which a refused
            # branch would fail whole (a worktree of before branches had copies of their own may hold it).
            res = self._git("push", partial(self.repo.push, url, [f"+{earlier}:refs/heads/{branch}"], quiet=False,
                                            receive_pack=receive))
        rejected = [line for line in res.out.splitlines() if line.startswith("!")]
        base_refused = [line for line in rejected if "refs/balanced/base/" in line]
        if res.code != 0 and (base_refused or not rejected):
            raise BalancedError(f"Could not push the base {base[:7]} to {self.name}: "
                                f"{(res.err or res.out).strip()[-500:]}",
                                hint=f"`git balanced ready {self.name}` prepares the copy there again.")

    def fetch_back(self, branch: str) -> str | None:
        """One `git fetch` of the worker's branch from its own copy there into `refs/remotes/<machine>/<branch>`;
        the ref's name, or None when it did not come. BalancedError says why a fetch failed."""
        ref = f"refs/remotes/{self.name}/{branch}"
        res = self._git("fetch", partial(self.repo.fetch, self.transport.git_url(self.branch_repo(branch)),
                                         [f"+refs/heads/{branch}:{ref}"], fetch_head=False,
                                         upload_pack=machine_program("upload-pack"),
                                         negotiate=negotiation_tips(self.repo, self.lead.ref, ref)))
        if res.code != 0:
            raise BalancedError(f"Could not fetch {branch} back from {self.name}: {res.err.strip()[-500:]}",
                                hint=f"try `ssh {self.alias} true`; the engine tries again on its next pass.")
        return ref if self.repo.read_ref(ref) else None

    def branch_repo(self, branch: str) -> str:
        """The branch's own copy there (shipped/branchcopy.py), which the runner makes: its worker writes only
        that one, and the branch is fetched back from it alone."""
        return branchcopy.own_copy_path(self.repo_path(), branch)

    def fetch_back_many(self, branches: list[str]) -> dict[str, str | None]:
        """The branches of several finished workers, each with a `git fetch` from its own copy there (what
        another worker wrote in the shared copy, or in its own, never comes back under this branch's name),
        the fetches at once, as many as the machine's session slots (`_git` takes one each): each one's ref
        here, or None for one that failed (`fetch_back` of it says why). MachineUnreachable when ssh could
        not get there."""

        def one(branch: str) -> str | None:
            try:
                return self.fetch_back(branch)
            except MachineUnreachable:
                raise
            except BalancedError:
                return None

        if not branches:
            return {}
        with ThreadPoolExecutor(max_workers=min(len(branches), MAX_SESSIONS)) as pool:
            return dict(zip(branches, pool.map(one, branches), strict=True))

    def _git(self, verb: str, call: Callable[..., proc.Result]) -> proc.Result:
        """Run `call` (a Repo's fetch or push over ssh, given git's `env` and `timeout`) in one of the
        machine's session slots; MachineUnreachable when ssh could not get there."""
        env = self.transport.git_env()
        with self.transport.slot(GIT_TIMEOUT):  # git's ssh is a session like any other: it counts
            res = call(env=env, timeout=GIT_TIMEOUT)
        if res.code == 124 or (res.code != 0 and ssh_failed(res.err)):
            detail = res.err.strip().splitlines()[-1] if res.err.strip() else str(res.code)
            exc = MachineUnreachable(f"Machine {self.name} cannot be reached (git {verb}): {detail}",
                                     hint=f"try `ssh {self.alias} true`.", detail=detail,
                                     timed_out=res.code == 124 or "timed out" in res.err)
            if exc.timed_out:
                records.mark_timed_out(self.repo, self.name, "git could not reach it in time")
            raise exc
        return res
