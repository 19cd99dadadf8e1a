"""The engine: a reconcile loop over the state in refs. Each pass starts ready pieces, watches workers,
lands what finished, and decides retries. Every decision is an event recorded before its effect, so a killed
engine, started again, carries on where the refs say it was."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from git_balanced import jobs as J
from git_balanced import proc, trust, ui
from git_balanced.engine import budget, limits, workers
from git_balanced.engine.attempts import KEEP, Next, next_attempt
from git_balanced.engine.context import Context
from git_balanced.engine.owners import Owners
from git_balanced.engine.sweep import Sweeper
from git_balanced.engine.watch import Watcher
from git_balanced.errors import BalancedError, DiskFull, LandingBusy, disk_full
from git_balanced.faults import crashpoint
from git_balanced.files import clear_debris, short_of_room
from git_balanced.job_events import Failed, GaveUp, Noted, Retried, WaitsForLand
from git_balanced.jobs import Job, StoredPlan
from git_balanced.lead import Lead, settings_at
from git_balanced.machines.reach.transport import MachineUnreachable
from git_balanced.state import refs
from git_balanced.vocab import ENDED_BADLY, ENDED_WELL, LIVE, Failure, JobState

if TYPE_CHECKING:
    from git_balanced.landing.aside import Aside
    from git_balanced.landing.queue import Candidate, Verdict

Latest = dict[tuple[str, str], Job]


class Engine:
    """The lead's engine: one pass after another, each with a Context of its own; a Watcher for its workers."""

    def __init__(self, lead: Lead, *, land_aside: bool = False) -> None:
        self.lead = lead
        self.repo = lead.repo
        self.watcher = Watcher(lead)
        self.sweeper = Sweeper(lead)  # landed workers' worktrees, removed off the pass
        self.owners = Owners(lead)
        self.told: set[str] = set()
        self.full: DiskFull | None = None  # the last pass ran out of room: `--until-idle` ends on it, exit 1
        self.says_full = True  # said on stderr, once; not when the caller ends on it and says it itself
        self.waiting_for_machine: set[str] = set()
        self.landing_waits = ""  # why no landing could run this pass (your changes overlap, the check...)
        self.seen: set[str] = set()  # the plans this run saw started: what its exit code speaks of
        self.running: list[Job] = []  # the running jobs (of any lead) as the last pass left them
        self._everyone: dict[str, Job] | None = None  # every job as this pass read it last
        self._jobs: dict[str, Job] | None = None  # the lead's plans' jobs among them
        self._mark = 0  # this process's writes up to that read (refs.write_mark)
        self.spent_plans: set[str] = set()  # the plans whose budget is spent, as this pass found them
        self.started = time.time()  # temporary object files older than this are no failed write of this engine
        self.land_aside = land_aside  # landings run in a thread beside the passes (landing/aside.py)
        self.landing: Aside | None = None  # the one running, if any

    def say_once(self, ctx: Context, text: str) -> None:
        """Tell the lead something that stays true for a while, once per engine run (and on stderr)."""
        if text not in self.told:
            self.told.add(text)
            ctx.say(text)
            print(f"[balanced] {ui.plain(text)}", file=sys.stderr, flush=True)

    def allowed(self, ctx: Context) -> bool:
        """Whether the setup and check may run; if not, the lead hears what to run, and nothing starts."""
        cmds = ctx.cmds
        if not (cmds.setup or cmds.check):
            return True
        try:
            trust.bind_run(self.repo, os.getpid())  # a `deny --for-now` said before this run began is for it
            trust.ensure_allowed(self.repo, cmds)
        except BalancedError as exc:
            first = exc.message.splitlines()[0].rstrip(":.")
            self.say_once(ctx, f"Nothing starts: {first[0].lower() + first[1:]}. Hint: {exc.hint}")
            return False
        return True

    # -- one pass ------------------------------------------------------------------------------------------
    def pass_once(self) -> bool:
        """One reconcile pass; True while anything is live or can still move.

        Each phase works on the jobs as the phases before it left them: every job is read at the start (one
        ref listing, for plans, jobs, questions and schedules alike), and after a phase wrote events, the jobs it
        wrote are read again (and those alone)."""
        self.full = None
        try:
            with self.repo.listing_once(), self.repo.batch():  # the pass's ref swaps: one fsync at its end
                return self._pass()
        except (OSError, BalancedError) as exc:  # a full disk: said once, and the next pass tries again
            full = disk_full(exc, str(self.repo.common_dir))
            if full is None:
                raise
            self.full = full
            if self.says_full and full.message not in self.told:
                self.told.add(full.message)
                print(f"[balanced] {full.message} Hint: {full.hint}", file=sys.stderr, flush=True)
            return True
        finally:
            # A git command that ran out of room leaves its temporary object file, whoever caught its failure; by
            # the end of a pass every git this engine started has ended.
            if short_of_room(self.repo.common_dir):
                clear_debris(self.repo.common_dir / "objects", self.started)

    def _pass(self) -> bool:
        ctx = Context(self.lead, settings_at(self.repo, self.lead.branch))
        self.owners.beat(ctx)
        plans = {pid: p for pid, p in J.all_plans(self.repo).items() if p.lead == self.lead.branch}
        self.seen.update(pid for pid, p in plans.items() if p.state == "started")
        self._everyone = None
        everyone, jobs = self._read(plans)
        # Another clone's jobs are its own (after `sync` they are here too): only watched, landed or tried again
        # by this engine once it took them over, when their engine went silent.
        self.owners.release_lost(ctx, jobs.values())
        if self.owners.take_over(ctx, jobs.values()):
            everyone, jobs = self._read(plans)
        mine = {jid: j for jid, j in jobs.items() if self.owners.mine(j)}
        wrote = self.watcher.watch(ctx, [j for j in mine.values() if j.state == JobState.RUNNING])
        self.sweeper.mark(self.watcher.take_reported())  # a reader's shared checkout is let go, off the pass
        wrote = limits.resume(ctx, [j for j in mine.values() if j.state == JobState.PAUSED], jobs.values()) or wrote
        if wrote:
            everyone, jobs = self._read(plans)
        self.spent_plans = budget.stop_spent(ctx, plans, jobs.values(), self.owners.mine, workers.stop)
        if self.spent_plans:
            everyone, jobs = self._read(plans)
        # What was placed before starts before the landing, so its workers run while the landing checks; what
        # this pass places starts after it.
        early = [j for j in jobs.values() if j.state == JobState.QUEUED]
        self._start(ctx, plans, early, jobs)
        if early:
            everyone, jobs = self._read(plans)
        if self._land(ctx, [j for j in jobs.values() if j.state == JobState.FINISHED and self.owners.mine(j)]):
            everyone, jobs = self._read(plans)
        if self._decide(ctx, plans, J.latest_by_piece(jobs), everyone):
            everyone, jobs = self._read(plans)
        movable, placed = self._place(ctx, plans, J.latest_by_piece(jobs))
        if placed:
            _, jobs = self._read(plans)
        tried = {j.id for j in early}
        self._start(ctx, plans, [j for j in jobs.values() if j.state == JobState.QUEUED and j.id not in tried], jobs,
                    again=True)
        self._finish_plans(ctx, plans, J.latest_by_piece(jobs))
        self._tick_others(ctx)
        self._tell_repairs(ctx)
        # A piece that waits for the machine its plan names cannot move until you tick or ready it, nor one
        # that waits for you to land it or to clear the way in your checkout.
        live = any(j.state in LIVE and j.id not in self.waiting_for_machine
                   and self.owners.mine(j)
                   and not (j.state == JobState.FINISHED and self.waits_for_you(ctx, j)) for j in jobs.values())
        # What runs now, as the starts left it: how long the loop sleeps, and what it waits on meanwhile.
        self.running = [j for j in self._read(plans)[0].values() if j.state == JobState.RUNNING]
        return live or movable

    def jobs_now(self) -> dict[str, Job]:
        """Every job as the last pass read it, with what this process wrote since read again (all of them when
        no pass read any)."""
        if self._everyone is None:
            return J.all_jobs(self.repo)
        return J.reread(self.repo, self._everyone, self._mark)

    def _read(self, plans: dict[str, StoredPlan]) -> tuple[dict[str, Job], dict[str, Job]]:
        """Every job of the repository, and those of the lead's plans: all of them at a pass's start, then
        the pass's own writes on top."""
        if self._everyone is None:
            everyone = J.all_jobs(self.repo)
        else:
            everyone = J.reread(self.repo, self._everyone, self._mark)
        self._mark = refs.write_mark()
        if everyone is not self._everyone or self._jobs is None:
            self._jobs = {jid: j for jid, j in everyone.items() if j.plan in plans}
        self._everyone = everyone
        return everyone, self._jobs

    def _tick_others(self, ctx: Context) -> None:
        """Give schedules and questions their turn: due schedules fire, unanswered questions come to you."""
        from git_balanced.channel import schedules
        from git_balanced.engine import relay

        schedules.engine_tick(self.lead, ctx.settings)
        relay.engine_tick(self.lead, ctx.settings)
        if ctx.settings.pr.fix:  # pull requests are looked at only then: the forge's code is not imported before
            from git_balanced.forge import watch as prs

            prs.engine_tick(self.lead, ctx.settings)

    def _tell_repairs(self, ctx: Context) -> None:
        """Tell the lead, once each, of the stale locks removed and the malformed refs skipped."""
        from git_balanced.state import health

        while self.repo.cleared:
            path, age = self.repo.cleared.pop(0)
            ctx.say(f"Removed a stale lock, {path}: {int(age)} seconds old, left by a git process that ended.",
                    lock=path)
        for broken in health.untold(self.repo, health.seen(self.repo)):
            ctx.say(broken.words(), ref=broken.ref)

    # -- landing -------------------------------------------------------------------------------------------
    def waits_for_you(self, ctx: Context, j: Job) -> str:
        """Why a finished job cannot land until you act (empty when it can): with no check set it waits for
        `land`; your own files may be in its way; or no landing could run."""
        if not ctx.cmds.check:
            return f"it waits for `git balanced land {j.id}`, as no check is set"
        if self.landing is not None and j.id in self.landing.jobs:
            return ""  # a landing beside the pass has it: it waits for that, not for you
        return j.in_the_way_why or self.landing_waits

    def _land(self, ctx: Context, finished: list[Job]) -> bool:
        """Land what finished, through the queue; True when a job's events say something new."""
        if not finished and self.landing is None:
            return False
        if not ctx.cmds.check:
            wrote = False
            for j in finished:
                if not j.told_no_check:
                    ctx.record(j.id, WaitsForLand(), f"{j.piece}: waits for `git balanced land`",
                               say=f"{j.piece} finished; with no check set, it waits for `git balanced land {j.id}`",
                               job=j.id)
                    wrote = True
            return wrote
        from git_balanced.landing.candidates import job_candidate, record
        from git_balanced.landing.queue import Queue

        cands = [c for j in finished if (c := job_candidate(self.lead, j))]
        crashpoint("engine-before-land")
        try:
            # Beside the pass, a landing is started now and its verdicts taken by a later pass.
            ended = self._aside(cands) if self.land_aside else Queue(self.lead).run(cands)
        except BalancedError as exc:  # your changes overlap, or the check is not approved: landing waits
            self.landing_waits = f"landing waits: {exc.message}" + (f" ({exc.hint})" if exc.hint else "")
            self.say_once(ctx, self.landing_waits[0].upper() + self.landing_waits[1:])
            if isinstance(exc, LandingBusy):  # a git command of yours holds the branch: gone in a moment
                self.landing_waits = ""
            return False
        if ended is None:  # none ended this pass
            return False
        verdicts = ended
        self.landing_waits = ""
        by_id = {j.id: j for j in finished}
        # A piece still in the way of the same files was told so already: once, not every pass.
        verdicts = [v for v in verdicts if not (v.status == "in_the_way" and v.job in by_id
                                                and by_id[v.job].in_the_way == tuple(v.paths))]
        record(self.lead, verdicts)
        for v in verdicts:
            if v.status == "in_the_way":
                print(f"[balanced] {v.branch} waits: {ui.plain(v.reason)}", file=sys.stderr, flush=True)
        self.sweeper.mark([by_id[v.job] for v in verdicts if v.status in ("landed", "already") and v.job in by_id])
        return bool(verdicts)

    def _aside(self, cands: list[Candidate]) -> list[Verdict] | None:
        """The verdicts of the landing running beside the passes once it ended (None while none did); the
        candidates it did not take start the next one at once."""
        from git_balanced.landing.aside import Aside

        running = self.landing
        if running is not None and not running.done():
            return None
        self.landing = None
        verdicts = running.verdicts() if running is not None else None
        rest = [c for c in cands if running is None or c.job not in running.jobs]
        if rest:
            self.landing = Aside(self.lead, rest)
        return verdicts

    def end_landing(self) -> bool:
        """Wait for the landing beside the passes to end (a stop asked ends its checks at once); True when a
        stop ended it. What it landed meanwhile is recorded by the next landing (candidates.record)."""
        running, self.landing = self.landing, None
        if running is None:
            return False
        try:
            running.verdicts()
        except proc.Stopped:
            return True
        except BalancedError:
            pass
        return False

    # -- retries -------------------------------------------------------------------------------------------
    def _decide(self, ctx: Context, plans: dict[str, StoredPlan], latest: Latest, everyone: dict[str, Job]) -> bool:
        """Try again each piece whose newest attempt failed, or give it up; True when any was decided."""
        failed = sorted(((key, j) for key, j in latest.items()
                         if j.state in ENDED_BADLY and not j.decided and self.owners.mine(j)), key=lambda kj: kj[0])
        if not failed:
            return False
        from git_balanced.engine.board import failure_tail  # here: a run where nothing fails never needs them
        from git_balanced.engine.retry import SAME_AGAIN, Attempt, decide, same_again, waits_for_a_move

        attempts = ctx.settings.balanced.attempts
        wrote = False
        tip = self.repo.rev_parse(self.lead.ref)
        for (_plan, piece), j in failed:
            failure = j.failure or j.state
            if j.budget_stopped:
                failure = Failure.BUDGET
            if j.state == JobState.STOPPED and failure != Failure.BUDGET:
                failure = Failure.STOPPED
            stronger = ctx.settings.stronger_model(j.model, j.agent) if j.model else None
            a = Attempt(failure=failure, attempt=j.attempt, attempts=attempts, agent=j.agent, model=j.model,
                        stronger=stronger, job=j.id, lead_branch=self.lead.branch, left=limits.budget_left(j),
                        base_moved=tip != j.base)
            # Only a failure the same base would repeat waits; only then is the lead's other live work looked for.
            others_live = same_again(a) and any(o.state in LIVE and o.id != j.id for o in latest.values())
            if waits_for_a_move(a, others_live):
                if not j.waits_for:  # told once
                    wrote = True
                    ctx.record(j.id, Noted(waits_for=f"{self.lead.branch} to move, as {SAME_AGAIN}"),
                               f"{piece}: waits for {self.lead.branch} to move",
                               say=f"{piece} failed ({j.reason or failure}). It is tried again once "
                                   f"{self.lead.branch} moves, as other work of its plans may land first"
                                   + failure_tail(j), job=j.id)
                continue
            wrote = True
            d = decide(a)
            shown = "" if j.waits_for else failure_tail(j)  # the failing test, for a failed check (told once)
            if not d.retry:
                ctx.record(j.id, GaveUp(final=d.words), f"{piece}: not tried again",
                           say=f"{piece} did not land. {d.words}{shown}", job=j.id)
                continue
            nxt = Next(retry_reason=d.words, base=tip,
                       model=d.model if d.model is not None else KEEP,
                       budget_usd=d.budget_usd if d.budget_usd is not None else KEEP,
                       not_before=time.time() + d.delay if d.delay else KEEP)
            if d.fresh_branch:  # one that no other work holds
                nxt = replace(nxt, branch=J.unused_branch(f"{j.branch}-{j.attempt + 1}",
                                                          J.used_branches(self.repo, everyone.values()), j.id[-6:]))
            if d.other_machine:
                machine, why = self._other_machine(ctx, j, plans, everyone)
                nxt = replace(nxt, machine=machine, why=why)
            new = next_attempt(self.lead, j, nxt)
            where = f", {nxt.why}" if d.other_machine else ""  # the lead hears where it went
            ctx.record(j.id, Retried(next=new), f"{piece}: tried again as {new}",
                       say=f"{piece} failed ({j.reason or failure}). {d.words}{where}{shown}", job=new)
        return wrote

    def _other_machine(self, ctx: Context, j: Job, plans: dict[str, StoredPlan],
                       everyone: dict[str, Job]) -> tuple[str, str]:
        from git_balanced.machines.placing.seats import running_counts
        from git_balanced.machines.placing.where import Want, place

        named = _named_machine(j, plans)
        if named:  # an explicit machine never falls back: the piece waits for it
            return named, f"{named}: named by the plan, so the piece waits for it"
        p = place(self.lead, [Want(j.agent, not_on=j.machine)], reserve=ctx.settings.balanced.reserve,
                  running=running_counts(everyone.values())).one
        return p.machine, p.why

    # -- starting ------------------------------------------------------------------------------------------
    def _place(self, ctx: Context, plans: dict[str, StoredPlan], latest: Latest) -> tuple[bool, bool]:
        """Create jobs for pieces whose `after` have landed: (some piece may still start later, some job was
        placed)."""
        movable = placed = False
        tip = self.repo.rev_parse(self.lead.ref)
        for plan_id, plan in sorted(plans.items()):
            if plan.state != "started" or not self._places(ctx, plan):
                continue
            landed = {p for (pid, p), j in latest.items() if pid == plan_id and j.state in ENDED_WELL}
            dead = {p for (pid, p), j in latest.items() if pid == plan_id and j.decided and j.state != JobState.RETRIED}
            stuck = self._stuck(ctx, plan, latest)
            for piece in plan.pieces:
                if (plan_id, piece.id) in latest:
                    continue
                if any(a in dead for a in piece.after):
                    continue
                if not all(a in landed for a in piece.after):
                    # It may start later only if what it waits for can land without you.
                    movable = movable or not any(a in stuck for a in piece.after)
                    continue
                if not self.allowed(ctx):
                    return False, placed
                branch = self._own_branch(ctx, plan_id, piece.id, piece.branch)
                J.place(self.repo, {  # the piece's options as stored (PieceOptions), its model the one it runs
                    "plan": plan_id, "plan_task": plan.task, "piece": piece.id, "task": piece.task,
                    "title": piece.task.splitlines()[0][:80], **piece.options(),
                    "model": piece.model or ctx.default_model(piece.agent),
                    "machine": piece.placed, "why": piece.why, "branch": branch, "base": tip,
                    "attempt": 1, "lead": self.lead.branch, "after": list(piece.after)})
                movable = placed = True
        return movable, placed

    def _stuck(self, ctx: Context, plan: StoredPlan, latest: Latest) -> set[str]:
        """The plan's pieces that cannot land until you act (held for you, waiting for you or for the machine
        the plan names), and the pieces not started yet that come after one of them."""
        return _and_after(plan, latest, {p for (pid, p), j in latest.items() if pid == plan.id and (
            j.state == JobState.HELD or j.id in self.waiting_for_machine
            or (j.state == JobState.FINISHED and self.waits_for_you(ctx, j)))})

    def _places(self, ctx: Context, plan: StoredPlan) -> bool:
        """Whether this clone places the plan's pieces: the clone that started it does, or, once its engine
        went silent, any other (so two clones never place the same piece twice)."""
        from git_balanced.state import nodes

        if not plan.node or plan.node == self.owners.me:
            return True
        return nodes.silent_since(self.repo, plan.node, float(ctx.settings.balanced.takeover_after)) is not None

    def _own_branch(self, ctx: Context, plan_id: str, piece: str, branch: str) -> str:
        """The branch a piece's first attempt works on: its stored one, unless work of another lineage holds
        it by now (a branch made after the plan was stored): then one of its own, and that one is kept."""
        from git_balanced.machines.reach.hosts import earlier_work

        if not earlier_work(self.repo, branch):
            return branch
        everyone = J.all_jobs(self.repo) if self._everyone is None else J.reread(self.repo, self._everyone,
                                                                                  self._mark)
        own = J.unused_branch(branch, J.used_branches(self.repo, everyone.values()), plan_id[-6:])
        ctx.say(f"{piece}: {branch} holds work of another plan, which stays there; {piece} works on {own}",
                plan=plan_id)
        return own

    def _start(self, ctx: Context, plans: dict[str, StoredPlan], queued: list[Job], jobs: dict[str, Job], *,
               again: bool = False) -> None:
        """Start what may start of `queued`, up to the cap; `again`: the pass's second call, for what it placed."""
        if not again:
            self.waiting_for_machine.clear()  # found again this pass, for as long as it lasts
        running = sum(1 for j in jobs.values() if j.state == JobState.RUNNING and self.owners.mine(j))
        cap = ctx.settings.balanced.cap
        batch: list[Job] = []
        dirty: list[bool] = []  # asked of git once a pass, and only when a piece is about to start
        waits: dict[str, str] = {}  # what each piece that waited waited for: the lead hears when it starts
        for j in sorted(queued, key=lambda x: x.created):
            if running >= cap:
                break
            if time.time() < j.not_before or j.plan in self.spent_plans:  # the next pass ends the latter
                continue
            go = limits.startable(ctx, j, _named_machine(j, plans))
            waited = j.waits_for or (", ".join(j.after) + " landed" if j.after else "")
            if go.job is None:
                if go.idle:  # it waits for a machine that can run its agent: nothing to do until then
                    self.waiting_for_machine.add(j.id)
                continue
            j = go.job
            if not self.allowed(ctx):
                break
            if not self.owners.claim(j, ctx):  # another engine (here or in another clone) starts it
                continue
            if j.lead and not j.told_dirty:
                if not dirty:
                    dirty.append(self.repo.current_branch() == self.lead.branch and bool(self.repo.status_paths()))
                if dirty[0]:
                    ctx.record(j.id, Noted(told_dirty=True), "lead has uncommitted changes",
                               say=f"{j.piece}: you have uncommitted changes; its worker starts from your last commit "
                               "and won't get them", job=j.id)
            batch.append(j)
            if waited:
                waits[j.id] = waited
            running += 1
        # All at once: on other machines each start is a push and a call, and the machines answer in parallel.
        cmds = ctx.cmds
        for j, exc in workers.start_many(self.lead, batch, cmds.setup, cmds.check,
                                         ctx.settings.balanced.workers_edit_without_asking, jobs.values()):
            if isinstance(exc, MachineUnreachable):
                self._unreachable_at_start(ctx, j, exc, plans)
            elif exc is not None:
                ctx.record(j.id, Failed(failure=Failure.CRASHED, reason=f"it could not start: {exc.message}",
                                        event="failed"), f"{j.piece}: could not start",
                           say=f"{j.piece} could not start on {j.machine}: {exc.message}", job=j.id)
            else:
                if j.id in waits:
                    ctx.say(f"{j.piece} started on {j.machine}; it waited: {waits[j.id]}", job=j.id, kind="started")
                crashpoint("engine-after-start")

    def _unreachable_at_start(self, ctx: Context, j: Job, exc: BalancedError, plans: dict[str, StoredPlan]) -> None:
        """A piece named to its machine waits for it; any other goes to another machine (as a lost one)."""
        if _named_machine(j, plans):
            self.waiting_for_machine.add(j.id)
            if not j.told_waiting:
                ctx.record(j.id, Noted(told_waiting=True), f"{j.piece}: waits for {j.machine}",
                           say=f"{j.piece} waits for {j.machine}, the machine its plan names: {exc.message}", job=j.id)
            return
        ctx.record(j.id, Failed(failure=Failure.LOST, reason=f"{j.machine} could not be reached: {exc.message}",
                                ended=JobState.LOST), f"{j.piece}: {j.machine} could not be reached to start it",
                   say=f"{j.piece} could not start on {j.machine}, which cannot be reached: {exc.message}", job=j.id)

    def _finish_plans(self, ctx: Context, plans: dict[str, StoredPlan], latest: Latest) -> None:
        for plan_id, plan in plans.items():
            if plan.state != "started":
                continue
            states = [latest.get((plan_id, p.id)) for p in plan.pieces]
            landed = sum(1 for j in states if j and j.state == JobState.LANDED)
            reported = sum(1 for j in states if j and j.state == JobState.REPORTED)
            ended = sum(1 for j in states if j and j.decided and j.state not in (JobState.RETRIED, JobState.REPORTED))
            blocked = _blocked(plan, latest)
            if landed + reported + ended + blocked < len(plan.pieces):
                continue
            words = f"{landed} landed" + (f", {reported} reported" if reported else "") + \
                (f", {ended} failed" if ended else "") + \
                (f", {blocked} never started" if blocked else "")
            refs.append(self.repo, refs.ref_for("plans", plan_id), "done", f"Plan done: {words}",
                        {"summary": words}, state="done")
            ctx.say(f"Plan {plan.task!r} is done: {words}", plan=plan_id)


def _named_machine(j: Job, plans: dict[str, StoredPlan]) -> str | None:
    """The machine the plan names for this piece, if it names one."""
    plan = plans.get(j.plan)
    piece = plan.piece(j.piece) if plan else None
    return piece.machine if piece else None


def _blocked(plan: StoredPlan, latest: Latest) -> int:
    """How many of the plan's pieces never start, as a piece they wait for failed for good."""
    dead = {p for (pid, p), j in latest.items() if pid == plan.id and j.decided and j.state != JobState.RETRIED}
    return len(_and_after(plan, latest, dead) - dead)


def _and_after(plan: StoredPlan, latest: Latest, pieces: set[str]) -> set[str]:
    """`pieces`, and the plan's pieces not started yet that come after one of them, however far down."""
    found = set(pieces)
    while more := {p.id for p in plan.pieces if p.id not in found and (plan.id, p.id) not in latest
                   and any(a in found for a in p.after)}:
        found |= more
    return found
