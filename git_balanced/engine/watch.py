"""Watching workers: one status call per machine, how each run ended, and machines out of reach.

The Engine (loop.py) holds one Watcher for its life: it keeps, across passes, since when each machine has
been out of reach, and within a pass, the branches it fetched back."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from git_balanced import jobs as J
from git_balanced.agents.subagents import waited_words
from git_balanced.channel.inbox import post
from git_balanced.channel.told import key_of
from git_balanced.engine import limits, relay, workers
from git_balanced.engine.context import Context
from git_balanced.errors import BalancedError
from git_balanced.files import write_json
from git_balanced.job_events import Failed, Finished, Reported
from git_balanced.jobs import Job
from git_balanced.lead import Lead
from git_balanced.machines.inventory import held
from git_balanced.machines.inventory import records as inventory
from git_balanced.machines.placing import accounts
from git_balanced.machines.prepare import agents_probe
from git_balanced.machines.reach import auth
from git_balanced.shipped.messages import MessageError, Reason, Result
from git_balanced.vocab import Failure, JobState, RunState


class Watcher:
    """The running workers of one lead, looked at once a pass."""

    def __init__(self, lead: Lead) -> None:
        self.lead = lead
        self.repo = lead.repo
        # When each machine was first found out of reach, kept on disk so that `engine --once`, run again
        # and again (from cron, say), still counts the time toward `lost_after`.
        self._since_path = self.repo.state_dir / "out-of-reach.json"
        self.unreachable_since: dict[str, float] = self._load_since()
        self._fetched: dict[str, str | None] = {}  # by job id: the branches _prefetch brought back this pass
        self.reported: list[Job] = []  # workers that reported (`writes: none`): their checkouts are let go

    def take_reported(self) -> list[Job]:
        """The jobs that reported since the last ask, for their cleanup: nothing of theirs lands."""
        out, self.reported = self.reported, []
        return out

    def watch(self, ctx: Context, running: list[Job]) -> bool:
        """Look at the running workers once; True when one of them ended (and its job says so now)."""
        if not running:
            self._tell_holds()
            return False
        states = workers.statuses(self.lead, running)
        before = dict(self.unreachable_since)
        for j in running:  # a machine that answered is no longer on its way to being lost, nor held
            if states.get(j.id, {}).get("state") != RunState.UNREACHABLE:
                self.unreachable_since.pop(j.machine, None)
                held.release(self.repo, j.machine)
        if before != self.unreachable_since:
            self._save_since()
        self._prefetch([j for j in running if states.get(j.id, {}).get("state") == RunState.FINISHED], states)
        ended = False
        for j in running:
            st = states.get(j.id, {"state": RunState.MISSING})
            if st["state"] == RunState.FINISHED:
                try:
                    self._finished(ctx, j, Result.read(st["result"]))
                    ended = True
                except MessageError as exc:  # a result no runner writes: its run is over all the same
                    self._unreadable(ctx, j, str(exc))
                    ended = True
                except BalancedError as exc:  # its log or its branch could not be read back: next pass
                    ended = self._unreachable(ctx, j, exc.message) or ended
            elif st["state"] == RunState.DEAD or (st["state"] == RunState.MISSING
                                                  and time.time() - (j.started_at or 0.0) > 60):
                ctx.record(j.id, Failed(failure=Failure.CRASHED, reason="its runner died before it finished",
                                        event="failed"), f"{j.piece}: its runner died",
                           say=f"{j.piece}: its worker on {j.machine} died before it finished", job=j.id)
                ended = True
            elif st["state"] == RunState.UNREACHABLE:
                ended = self._unreachable(ctx, j, st.get("error", "")) or ended
        # Workers elsewhere, and fenced ones here, cannot write the lead: their questions and answers ride on this
        # pass (a worker here that asks the lead directly leaves nothing in its runner's files to relay).
        relay.relay(self.lead, [(j, states[j.id]) for j in running
                                if states.get(j.id, {}).get("state") == RunState.RUNNING])
        self._tell_holds()
        return ended

    def _tell_holds(self) -> None:
        """The lead hears once of each machine held (SSH refused to log in), with what fixes it, and once when
        it answers again: keyed by the machine and the hold's start, so a pass run again says nothing twice."""
        for m, h in held.held(self.repo).items():
            post(self.repo, self.lead.branch, held.words(m, h), kind="machine-held", machine=m, fix=h.get("fix"),
                 key=f"held:{m}:{h.get('since')}", again=True)
        for m, c in held.cleared(self.repo).items():
            post(self.repo, self.lead.branch, f"{m} answers again: it is no longer held, and takes new pieces",
                 kind="machine-held", machine=m, key=f"cleared:{m}:{c.get('since')}", again=True)

    def _load_since(self) -> dict[str, float]:
        try:
            data = json.loads(self._since_path.read_text())
            return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}
        except (FileNotFoundError, ValueError, TypeError):
            return {}

    def _save_since(self) -> None:
        write_json(self._since_path, self.unreachable_since)

    def _unreachable(self, ctx: Context, j: Job, error: str) -> bool:
        """Count the time its machine is out of reach; True once that is long enough to call the job lost. A
        machine SSH refuses to log in to is held instead: its worker still runs there, and is never lost for it."""
        no = auth.refused(_alias(j.machine), error) if auth.kind_of(error) else None
        if no is not None:
            held.hold(self.repo, j.machine, no.kind, no.detail, no.fix, no.words)
            if self.unreachable_since.pop(j.machine, None) is not None:
                self._save_since()
            return False
        if j.machine not in self.unreachable_since:
            self.unreachable_since[j.machine] = time.time()
            self._save_since()
        first = self.unreachable_since[j.machine]
        if time.time() - first < float(ctx.settings.balanced.lost_after):
            return False
        ctx.record(j.id, Failed(failure=Failure.LOST, reason=f"{j.machine} could not be reached: {error}",
                                ended=JobState.LOST), f"{j.piece}: {j.machine} is lost",
                   say=f"{j.piece}: {j.machine} could not be reached for a while, so its worker counts as lost",
                   job=j.id)
        return True

    def _unreadable(self, ctx: Context, j: Job, why: str) -> None:
        """A finished run whose result.json does not read as a Result: it failed, as one that crashed."""
        ctx.record(j.id, Failed(failure=Failure.CRASHED, reason=f"its runner's result could not be read: {why}",
                                event="failed"), f"{j.piece}: its runner's result could not be read",
                   say=f"{j.piece}: its worker on {j.machine} ended with a result that could not be read: {why}",
                   job=j.id)

    def _finished(self, ctx: Context, j: Job, result: Result) -> None:
        """Record how a finished run ended: from the reason code its runner set, and its agent's outcome."""
        outcome = workers.outcome_of(self.lead, j, result)
        accounts.record(self.repo, j.agent, j.machine, outcome.windows)
        cost = outcome.cost_usd if outcome.cost_usd is not None else result.cost_usd
        if j.spent_before:  # what its runs cost before a pause
            cost = float(cost or 0) + j.spent_before
        commits = result.commits
        data = {"exit_code": result.exit_code, "head": result.head, "commits": commits,
                "cost_usd": cost, "outcome": outcome.kind, "summary": outcome.summary,
                "seconds": result.seconds, "dirty": result.dirty, "tokens": outcome.tokens,
                "windows": outcome.windows}
        if result.checks:  # what its worker's own checks said, for its row and the lead
            data["checks"] = result.checks
        cost_words = f", ${cost:.2f}" if cost else ""
        if outcome.subagents.get("ran"):  # the lead hears how its worker's own helpers went
            n, bad = outcome.subagents["ran"], outcome.subagents.get("failed", 0)
            data["subagents"] = outcome.subagents
            # Told before the event that records how the run ended, keyed by the job's tip: a pass run again
            # after a crash between the two tells it once.
            post(self.repo, self.lead.branch, f"{j.piece}: its worker ran {n} subagent{'s' if n != 1 else ''}"
                 + (f", {bad} of which failed" if bad else ", none failed") + waited_words(outcome.subagents),
                 key=key_of(self.repo, j.id, "subagents"), again=True, job=j.id)

        def fail(failure: Failure, reason: str, state: JobState = JobState.FAILED) -> None:
            ctx.record(j.id, Failed(failure=failure, reason=reason, ended=state, ran=data), f"{j.piece}: {reason}",
                       say=f"{j.piece} {reason.removeprefix('it ')}" if failure == Failure.NO_COMMITS
                       else f"{j.piece} did not finish: {reason}", job=j.id)

        how = result.reason
        if ctx.cmds.setup and how not in (Reason.SETUP_FAILED, Reason.CRASHED, Reason.NOT_INSTALLED):
            inventory.mark_setup_done(self.repo, j.machine)
        if how == Reason.SETUP_FAILED:
            fail(Failure.SETUP_FAILED, f"its setup failed (exit {result.setup_exit_code})")
        elif how in (Reason.CRASHED, Reason.NOT_INSTALLED):
            if how == Reason.NOT_INSTALLED:  # what was known of that machine's agents is wrong: ask it again
                agents_probe.forget(j.machine, j.agent)
            fail(Failure(how), str(result.error or f"its runner ended with {how}"))
        elif how == Reason.STOPPED:
            fail(Failure.STOPPED, "it was stopped", state=JobState.STOPPED)
        elif outcome.kind == Failure.USAGE_LIMIT:
            limits.pause(ctx, j, outcome, data, self.fetch_back)
        elif outcome.kind == Failure.BUDGET or how == Reason.BUDGET:
            if commits:
                self.fetch_back(j, data)
                ctx.record(j.id, Finished(ran=data, budget_stopped=True, host_fetch=True),
                           f"{j.piece}: stopped at its budget with {commits} commits",
                           say=f"{j.piece} was stopped at its budget{cost_words}; what it committed goes to the check",
                           job=j.id)
            else:
                fail(Failure.BUDGET, f"stopped at its budget{cost_words}", state=JobState.STOPPED)
        elif how in (Reason.GUARD, Reason.FAILED):  # the commit of what it left was refused
            fail(Failure(how), f"its commit was refused: {result.commit_error}")
        elif outcome.kind == Reason.SUCCESS and workers.reads_only(j):  # its report is its result: nothing lands
            ctx.record(j.id, Reported(ran=data), f"{j.piece}: reported{cost_words}",
                       say=f"{j.piece} finished and reported ({j.id}){cost_words}: "
                           f"{outcome.summary or 'its report is empty'}", job=j.id)
            self.reported.append(j)
        elif outcome.kind == Reason.SUCCESS and commits:
            self.fetch_back(j, data)
            ctx.record(j.id, Finished(ran=data),
                       f"{j.piece}: finished with {commits} commit{'s' if commits != 1 else ''}{cost_words}",
                       say=own_check_failed(j, result.checks or []), job=j.id)
        elif outcome.kind == Reason.SUCCESS:
            fail(Failure.NO_COMMITS, "it finished without committing anything")
        else:
            fail(Failure(outcome.kind), outcome.summary or f"its agent ended with {outcome.kind}")

    def _prefetch(self, finished: list[Job], states: dict[str, dict[str, Any]]) -> None:
        """The branches of the workers that finished with commits: one `git fetch` per branch, from its own copy
        on its machine, the machines at once and on each as many at once as its session slots allow. A branch
        that did not come (or all of a machine that could not be reached) is fetched again alone, and says
        why then. A local branch is fetched whatever the outcome, so a failed attempt's work is kept here."""
        self._fetched = {}
        by_machine = J.by_machine(j for j in finished if _commits(states[j.id]))

        def fetch(machine: str, jobs: list[Job]) -> dict[str, str | None]:
            try:
                host = workers.host_for(self.lead, machine)
                got = host.fetch_back_many([j.branch for j in jobs])
            except BalancedError:
                return {}
            return {j.id: got[j.branch] for j in jobs}

        if by_machine:
            with ThreadPoolExecutor(max_workers=len(by_machine)) as pool:
                for got in pool.map(lambda kv: fetch(*kv), by_machine.items()):
                    self._fetched.update(got)

    def fetch_back(self, j: Job, data: dict[str, Any]) -> None:
        """Bring a finished worker's branch back from its machine (once a pass), and say where in `data`."""
        ref = self._fetched.get(j.id) or workers.host_for(self.lead, j.machine).fetch_back(j.branch)
        if ref and j.machine != "local":  # a local branch comes back to its own name, where landing looks
            data["fetched_ref"] = ref


def _alias(machine: str) -> str:
    """The SSH host a machine is reached as; its name when it is no longer added."""
    try:
        return str(inventory.host_alias(machine))
    except BalancedError:
        return machine


def own_check_failed(j: Job, checks: list[dict[str, Any]]) -> str | None:
    """What the lead hears when a worker finished though its own check failed (the piece's `check`, else the last
    it ran through `git balanced seat`); None otherwise."""
    ran = [c for c in checks if not j.check or c.get("command") == j.check] or checks
    if not ran or int(ran[-1].get("exit_code", 0)) == 0:
        return None
    return (f"{j.piece} finished, but its own check `{ran[-1].get('command')}` failed (exit "
            f"{ran[-1].get('exit_code')}); its branch goes to the repository's check (`git balanced show {j.id}`)")


def _commits(status: dict[str, Any]) -> int:
    """The commits a finished run's result counts; 0 for a result that cannot be read (its run fails for that)."""
    try:
        return Result.read(status.get("result")).commits
    except MessageError:
        return 0
