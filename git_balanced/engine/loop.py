"""The engine: a reconcile loop over the state in refs. Each pass starts ready pieces, watches workers,
lands what finished, and decides retries. Every decision is an event recorded before its effect, so a killed
engine, started again, carries on where the refs say it was."""

from __future__ import annotations

import sys
import time
from typing import Any

from git_balanced import jobs as J
from git_balanced import trust
from git_balanced.channel.inbox import post
from git_balanced.engine import limits, workers
from git_balanced.engine.retry import decide
from git_balanced.engine.watch import Watching
from git_balanced.errors import BalancedError
from git_balanced.faults import crashpoint
from git_balanced.jobs import Job
from git_balanced.lead import Lead, commands_of, settings_at
from git_balanced.machines.transport import MachineUnreachable
from git_balanced.state import cache, refs

FAILED = ("failed", "stopped", "lost")


class Engine(Watching):
    def __init__(self, lead: Lead) -> None:
        self.lead = lead
        self.repo = lead.repo
        # When each machine was first found out of reach, kept on disk so that `engine --once`, run again
        # and again (from cron, say), still counts the time toward `lost_after`.
        self._since_path = self.repo.state_dir / "out-of-reach.json"
        self.unreachable_since: dict[str, float] = self._load_since()
        self.told: set[str] = set()
        self.waiting_for_machine: set[str] = set()
        self._fetched: dict[str, str | None] = {}

    def say(self, text: str, **data: Any) -> None:
        post(self.repo, self.lead.branch, text, **data)

    def say_once(self, text: str) -> None:
        """Tell the lead something that stays true for a while, once per engine run (and on stderr)."""
        if text not in self.told:
            self.told.add(text)
            self.say(text)
            print(f"[balanced] {text}", file=sys.stderr, flush=True)

    def allowed(self) -> bool:
        """Whether the setup and check may run; if not, the lead hears what to run, and nothing starts."""
        if not (self.cmds.setup or self.cmds.check):
            return True
        try:
            trust.ensure_allowed(self.repo, self.cmds)
        except BalancedError as exc:
            first = exc.message.splitlines()[0].rstrip(":.")
            self.say_once(f"Nothing starts: {first[0].lower() + first[1:]}. Hint: {exc.hint}")
            return False
        return True

    # -- one pass ------------------------------------------------------------------------------------------
    def pass_once(self) -> bool:
        """One reconcile pass; True while anything is live or can still move."""
        settings = settings_at(self.repo, self.lead.branch)
        self.settings = settings
        self.cmds = commands_of(settings)
        plans = {pid: p for pid, p in cache.read_all(self.repo, "plans").items()
                 if p["fields"].get("lead") == self.lead.branch}
        jobs = {jid: j for jid, j in J.all_jobs(self.repo).items() if j.plan in plans}
        self._watch([j for j in jobs.values() if j.state == "running"])
        self._resume([j for j in jobs.values() if j.state == "paused"])
        jobs = {jid: j for jid, j in J.all_jobs(self.repo).items() if j.plan in plans}
        self._land([j for j in jobs.values() if j.state == "finished"])
        jobs = {jid: j for jid, j in J.all_jobs(self.repo).items() if j.plan in plans}
        latest = J.latest_by_piece(jobs)
        self._decide(plans, latest)
        jobs = {jid: j for jid, j in J.all_jobs(self.repo).items() if j.plan in plans}
        latest = J.latest_by_piece(jobs)
        movable = self._place(plans, latest)
        jobs = {jid: j for jid, j in J.all_jobs(self.repo).items() if j.plan in plans}
        self._start([j for j in jobs.values() if j.state == "queued"], jobs)
        self._finish_plans(plans, J.latest_by_piece(jobs))
        self._tick_others()
        # A piece that waits for the machine its plan names cannot move until you tick or ready it.
        live = any(j.state in ("queued", "running", "paused", "finished") and j.id not in self.waiting_for_machine
                   for j in jobs.values())
        return live or movable

    def _tick_others(self) -> None:
        """Give schedules and questions their turn: due schedules fire, unanswered questions come to you."""
        from git_balanced.channel import schedules
        from git_balanced.engine import relay

        schedules.engine_tick(self.lead, self.settings)
        relay.engine_tick(self.lead, self.settings)

    # -- watching ------------------------------------------------------------------------------------------
    def _pause(self, j: Job, outcome: Any, data: dict[str, Any]) -> None:
        limits.pause(self, j, outcome, data)

    def _resume(self, paused: list[Job]) -> None:
        limits.resume(self, paused)

    # -- landing -------------------------------------------------------------------------------------------
    def _land(self, finished: list[Job]) -> None:
        if not finished:
            return
        if not self.cmds.check:
            for j in finished:
                if not j.f.get("told_no_check"):
                    J.event(self.repo, j.id, "waiting", f"{j.piece}: waits for `git balanced land`",
                            {"told_no_check": True})
                    self.say(f"{j.piece} finished; with no check set, it waits for `git balanced land {j.id}`",
                             job=j.id)
            return
        from git_balanced.landing.candidates import job_candidate, record
        from git_balanced.landing.queue import Queue

        cands = [c for j in finished if (c := job_candidate(self.lead, j))]
        crashpoint("engine-before-land")
        try:
            q = Queue(self.lead)
            verdicts = q.run(cands)
        except BalancedError as exc:  # your changes overlap, or the check is not approved: landing waits
            self.say_once(f"Landing waits: {exc.message}" + (f" ({exc.hint})" if exc.hint else ""))
            return
        record(self.lead, verdicts)
        for v in verdicts:
            if v.status in ("landed", "already") and v.job:
                job = J.one(self.repo, v.job)
                if job:
                    workers.cleanup(self.lead, job)

    # -- retries -------------------------------------------------------------------------------------------
    def _decide(self, plans: dict[str, Any], latest: dict[tuple[str, str], Job]) -> None:
        attempts = self.settings.balanced.attempts
        for (_plan, piece), j in sorted(latest.items()):
            if j.state not in FAILED or j.f.get("decided"):
                continue
            failure = str(j.f.get("failure") or j.state)
            if j.f.get("budget_stopped"):
                failure = "budget"
            if j.state == "stopped" and failure not in ("budget",):
                failure = "stopped"
            agent = str(j.f.get("agent", "shell"))
            model = j.f.get("model")
            stronger = self.settings.stronger_model(model, agent) if model else None
            d = decide(failure, j.attempt, attempts, agent, model, stronger, j.id, self.lead.branch,
                       limits.budget_left(j))
            if not d.retry:
                J.event(self.repo, j.id, "gave-up", f"{piece}: not tried again", {"decided": True,
                                                                                   "final": d.words})
                self.say(f"{piece} did not land. {d.words}", job=j.id)
                continue
            fields = {k: v for k, v in j.f.items() if k in (
                "plan", "piece", "task", "plan_task", "agent", "model", "run", "paths", "budget_usd", "machine",
                "why", "branch", "lead", "after")}
            fields.update(attempt=j.attempt + 1, previous=j.id, retry_reason=d.words)
            for key in ("model", "budget_usd"):
                if key in d.changes:
                    fields[key] = d.changes[key]
            if d.changes.get("not_before_delay"):
                fields["not_before"] = time.time() + d.changes["not_before_delay"]
            fields["base"] = self.repo.rev_parse(self.lead.ref)
            if d.changes.get("fresh_branch"):
                fields["branch"] = f"{str(j.f.get('branch'))}-{j.attempt + 1}"
            if d.changes.get("other_machine"):
                fields["machine"], fields["why"] = self._other_machine(j)
            workers.cleanup(self.lead, j)
            new = J.place(self.repo, fields)
            J.event(self.repo, j.id, "retried", f"{piece}: tried again as {new}", {"decided": True, "next": new},
                    state="retried")
            where = f", {fields['why']}" if d.changes.get("other_machine") else ""  # the lead hears where it went
            self.say(f"{piece} failed ({j.f.get('reason') or failure}). {d.words}{where}", job=new)

    def _other_machine(self, j: Job) -> tuple[str, str]:
        from git_balanced.machines.placement import place
        from git_balanced.machines.seats import seats

        named = self._named_machine(j)
        if named:  # an explicit machine never falls back: the piece waits for it
            return named, f"{named}: named by the plan, so the piece waits for it"
        others = [s for s in seats(self.lead) if s.name != j.machine]
        p = place(others, cap=self.settings.balanced.cap)
        return p.machine, p.why

    def _named_machine(self, j: Job) -> str | None:
        """The machine the plan names for this piece, if it names one."""
        plan = cache.read_one(self.repo, "plans", j.plan)
        pieces = plan["fields"].get("pieces", []) if plan else []
        return next((p.get("machine") for p in pieces if p.get("id") == j.piece), None)

    # -- starting ------------------------------------------------------------------------------------------
    def _place(self, plans: dict[str, Any], latest: dict[tuple[str, str], Job]) -> bool:
        """Create jobs for pieces whose `after` have landed; True if some piece may still start later."""
        movable = False
        tip = self.repo.rev_parse(self.lead.ref)
        for plan_id, plan in sorted(plans.items()):
            if plan["state"] != "started":
                continue
            f = plan["fields"]
            landed = {p for (pid, p), j in latest.items() if pid == plan_id and j.state == "landed"}
            dead = {p for (pid, p), j in latest.items() if pid == plan_id and j.f.get("decided")
                    and j.state != "retried"}
            for piece in f["pieces"]:
                if (plan_id, piece["id"]) in latest:
                    continue
                if any(a in dead for a in piece["after"]):
                    continue
                if not all(a in landed for a in piece["after"]):
                    movable = True
                    continue
                if not self.allowed():
                    return False
                J.place(self.repo, {
                    "plan": plan_id, "plan_task": f["task"], "piece": piece["id"], "task": piece["task"],
                    "title": piece["task"].splitlines()[0][:80], "agent": piece["agent"],
                    "model": piece.get("model") or self._default_model(piece["agent"]), "run": piece.get("run"),
                    "paths": piece.get("paths", []), "budget_usd": piece.get("budget_usd"),
                    "machine": piece["placed"], "why": piece["why"], "branch": piece["branch"], "base": tip,
                    "attempt": 1, "lead": self.lead.branch, "after": piece["after"]})
                movable = True
        return movable

    def _default_model(self, agent: str) -> str | None:
        if agent == self.settings.balanced.agent and self.settings.balanced.model:
            return self.settings.balanced.model
        ladder = self.settings.ladder(agent) if agent != "shell" else ()
        return ladder[0] if ladder else None

    def _start(self, queued: list[Job], jobs: dict[str, Job]) -> None:
        self.waiting_for_machine.clear()  # found again this pass, for as long as it lasts
        running = sum(1 for j in jobs.values() if j.state == "running")
        cap = self.settings.balanced.cap
        batch: list[Job] = []
        dirty: list[bool] = []  # asked of git once a pass, and only when a piece is about to start
        for j in sorted(queued, key=lambda x: x.created):
            if running >= cap:
                break
            if time.time() < float(j.f.get("not_before", 0)) or limits.waits_for_room(self, j):
                continue
            if not self.allowed():
                break
            if j.f.get("lead") and not j.f.get("told_dirty"):
                if not dirty:
                    dirty.append(self.repo.current_branch() == self.lead.branch and bool(self.repo.status_paths()))
                if dirty[0]:
                    J.event(self.repo, j.id, "noted", "lead has uncommitted changes", {"told_dirty": True})
                    self.say(f"{j.piece}: you have uncommitted changes; its worker starts from your last commit "
                             "and won't get them", job=j.id)
            batch.append(j)
            running += 1
        # All at once: on other machines each start is a push and a call, and the machines answer in parallel.
        for j, exc in workers.start_many(self.lead, batch, self.cmds.setup, self.cmds.check,
                                         self.settings.balanced.workers_edit_without_asking):
            if isinstance(exc, MachineUnreachable):
                self._unreachable_at_start(j, exc)
            elif exc is not None:
                J.event(self.repo, j.id, "failed", f"{j.piece}: could not start",
                        {"failure": "crashed", "reason": f"it could not start: {exc.message}"}, state="failed")
                self.say(f"{j.piece} could not start on {j.machine}: {exc.message}", job=j.id)
            else:
                crashpoint("engine-after-start")

    def _unreachable_at_start(self, j: Job, exc: BalancedError) -> None:
        """A piece named to its machine waits for it; any other goes to another machine (as a lost one)."""
        if self._named_machine(j):
            self.waiting_for_machine.add(j.id)
            if not j.f.get("told_waiting"):
                J.event(self.repo, j.id, "noted", f"{j.piece}: waits for {j.machine}", {"told_waiting": True})
                self.say(f"{j.piece} waits for {j.machine}, the machine its plan names: {exc.message}", job=j.id)
            return
        J.event(self.repo, j.id, "lost", f"{j.piece}: {j.machine} could not be reached to start it",
                {"failure": "lost", "reason": f"{j.machine} could not be reached: {exc.message}"}, state="lost")
        self.say(f"{j.piece} could not start on {j.machine}, which cannot be reached: {exc.message}", job=j.id)

    def _finish_plans(self, plans: dict[str, Any], latest: dict[tuple[str, str], Job]) -> None:
        for plan_id, plan in plans.items():
            if plan["state"] != "started":
                continue
            pieces = [p["id"] for p in plan["fields"]["pieces"]]
            states = [latest.get((plan_id, p)) for p in pieces]
            landed = sum(1 for j in states if j and j.state == "landed")
            ended = sum(1 for j in states if j and j.f.get("decided") and j.state != "retried")
            blocked = self._blocked(plan, latest)
            if landed + ended + blocked < len(pieces):
                continue
            words = f"{landed} landed" + (f", {ended} failed" if ended else "") + \
                (f", {blocked} never started" if blocked else "")
            refs.append(self.repo, refs.ref_for("plans", plan_id), "done", f"Plan done: {words}",
                        {"summary": words}, state="done")
            self.say(f"Plan {plan['fields']['task']!r} is done: {words}", plan=plan_id)

    def _blocked(self, plan: dict[str, Any], latest: dict[tuple[str, str], Job]) -> int:
        plan_id = plan["fields"]["id"]
        dead = {p for (pid, p), j in latest.items() if pid == plan_id and j.f.get("decided") and j.state != "retried"}
        count, changed = 0, True
        blocked: set[str] = set()
        while changed:
            changed = False
            for p in plan["fields"]["pieces"]:
                if p["id"] in blocked or (plan_id, p["id"]) in latest:
                    continue
                if any(a in dead or a in blocked for a in p["after"]):
                    blocked.add(p["id"])
                    changed = True
        count = len(blocked)
        return count
