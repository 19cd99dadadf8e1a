"""Starting a job's worker through the runner, and reading how it ended."""

from __future__ import annotations

import contextlib
import shlex
import time
from collections.abc import Collection, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

from git_balanced import fence
from git_balanced import jobs as jobs_mod
from git_balanced.agents import modes
from git_balanced.agents.base import Outcome
from git_balanced.agents.shell import commit_message
from git_balanced.bundled import template_text
from git_balanced.engine.budget import start_budget
from git_balanced.engine.cleanup import host_for, reads_only, work_path
from git_balanced.errors import BalancedError
from git_balanced.job_events import Started, record
from git_balanced.jobs import Job
from git_balanced.lead import Lead
from git_balanced.machines.placing import check_seats
from git_balanced.machines.reach.hosts import Host, LocalHost, earlier_work
from git_balanced.machines.reach.transport import MachineUnreachable
from git_balanced.shipped.launch import SEATS_FILE
from git_balanced.shipped.messages import (
    AnswerRequest,
    ForwardedRequest,
    LogRequest,
    Result,
    StartRequest,
    StatusRequest,
    StopRequest,
)
from git_balanced.shipped.runfiles import RUNS_DIR
from git_balanced.shipped.seats import SEAT_ENV_BUDGET, SEAT_ENV_WHO, seat_budget
from git_balanced.state.events import node_id
from git_balanced.vocab import Action, RunState

PARALLEL_STARTS = 12  # machines started at once; each machine's SSH sessions are capped by its transport


def rules_for(job: Job, check: str | None, budget: float | None) -> str:
    """The worker's instructions, from templates/worker.md (reader.md for a piece that writes nothing); `budget`
    is what it starts with."""
    budget_line = f"- Your budget is ${budget:.2f}; you are stopped when it is spent.\n" if budget else ""
    if reads_only(job):
        return template_text("reader.md").format(plan_task=job.plan_task, piece=job.piece, task=job.task,
                                                 base=str(job.base)[:12], budget_line=budget_line)
    text = template_text("worker.md")
    check_line = check_words(job.check, check)
    paths = job.paths
    paths_line = f"- Write only under: {', '.join(paths)}. Other paths belong to other pieces.\n" if paths else ""
    return text.format(plan_task=job.plan_task, piece=job.piece, task=job.task,
                       branch=job.branch, check_line=check_line, paths_line=paths_line, budget_line=budget_line)


def check_words(own: str | None, check: str | None) -> str:
    """The instructions' line on checks: the piece's own check if it names one, else the repository's, each run
    through `git balanced seat` (one of its machine's check seats); '' with neither."""
    if own:
        lands = f" Your branch lands only if the repository's check (`{check}`) passes on it." if check else ""
        return (f"- Before you finish, run your piece's check in one of this machine's check seats: `git balanced "
                f"seat {shlex.quote(own)}` (it waits for a free seat, and says who holds them). Say in your summary "
                f"whether it passed.{lands}\n")
    if check:
        return (f"- Before you finish, run the check in one of this machine's check seats: `git balanced seat "
                f"{shlex.quote(check)}` (it waits for a free seat, and says who holds them). Your branch lands only "
                "if it passes.\n")
    return ""


def build_request(lead: Lead, job: Job, host: Host, setup: str | None, check: str | None,
                  edit_without_asking: bool, others: Collection[Job]) -> StartRequest:
    """The runner's `start` request for a job; `others` are the jobs whose paths its guard names."""
    from git_balanced import agents
    from git_balanced.agents import wiring as agent_hooks
    from git_balanced.lead import settings_at

    adapter = agents.get(job.agent)
    lead_settings = settings_at(lead.repo, lead.branch)
    wt = work_path(host, job)
    run_dir = f"{RUNS_DIR}/{job.runner_key}"
    # A worker on this machine sees the lead's repository read-only where the fence works (machines/reach/hosts.py):
    # then it asks, and its hooks decide, through its runner's files, relayed by the engine as from elsewhere.
    local = host.name == "local" and not fence.available()
    kwargs: dict[str, Any] = {}
    if adapter.name == "shell":
        kwargs["run"] = job.run
    if adapter.name == "claude":  # its hooks: the guard, and commands routed to the lead
        kwargs["settings_json"] = agent_hooks.claude_settings(agent_hooks.balanced_argv(local))
        kwargs["plan_first"] = job.plan_first
    task = job.task
    if job.resume_note:
        task = f"{task}\n\n{job.resume_note}"
    budget = start_budget(lead, job, others)  # what is left of its share, after its lead's spend too
    level = "read-only" if reads_only(job) else modes.for_worker(lead.repo, lead.branch)
    run = adapter.build(task=task, rules=rules_for(job, check, budget), model=job.model,
                        budget_usd=budget, worktree=wt, run_dir=run_dir,
                        edit_without_asking=edit_without_asking, level=level, **kwargs)
    run = agent_hooks.with_hooks(adapter.name, run, local)
    remote = not isinstance(host, LocalHost)
    if not remote:  # the budget this machine's checks go by, for the board (which reads no settings)
        check_seats.remember(lead.repo, check_seats.LOCAL, seat_budget(lead_settings.balanced.check_seats))
    # No git balanced there (or no writing the lead), or a plan's permit tool (bin/permit.py) that asks as it
    # does: the runner's own script asks, and judges.
    asks = not local or job.plan_first
    if reads_only(job):
        return _reader_request(lead, job, host, run, wt, asks, local, adapter.name)
    return StartRequest(
        job=job.runner_key, repo=_repo_of(host, job), worktree=wt, branch=job.branch, base=str(job.base),
        setup=setup, argv=run.argv, env={**run.env, **agent_hooks.worker_env(lead, job, wt, local),
                                         SEAT_ENV_BUDGET: str(lead_settings.balanced.check_seats),
                                         SEAT_ENV_WHO: f"the worker of {job.piece} (job {job.id})"},
        files={**(run.files or {}), SEATS_FILE: check_seats.source()},  # its checks' seats (shipped/seats.py)
        meter=run.meter, commit_message=commit_message(job.piece, task), commit_leftovers=True,
        runs_dir=RUNS_DIR,
        # What it may write and read of the user's: its own things only (shipped/pen.py), and of the lead's
        # environment only what its agent needs and the settings name (shipped/workenv.py).
        worker={"agent": adapter.name, "env": list(lead_settings.worktree.env), "fence": not fence.switched_off()},
        # Where its branch starts, from the lead's own record, never from a ref found in the copy.
        start_at=earlier_work(lead.repo, job.branch) or str(job.base),
        own_copy=True if remote else None,  # there the runner makes the branch's own copy of the machine's copy
        ask=True if asks else None, ask_timeout=float(lead_settings.balanced.ask_timeout) if asks else None,
        hook=agent_hooks.hook_rules() if asks else None,
        # The runner makes it the worktree's pre-commit hook.
        guard=agent_hooks.guard_request(lead, job, others) or None,
    )


def _reader_request(lead: Lead, job: Job, host: Host, run: Any, wt: str, asks: bool, local: bool,
                    agent: str) -> StartRequest:
    """The `start` request of a piece that writes nothing: the shared read-only checkout of its base, made from the
    lead's repository here or the machine's copy there; no setup, branch, guard or commit; its hooks refuse every
    edit (it is held to `read-only`, whatever its lead's mode)."""
    from git_balanced.agents import wiring as agent_hooks
    from git_balanced.lead import settings_at

    lead_settings = settings_at(lead.repo, lead.branch)
    env = {**run.env, **agent_hooks.worker_env(lead, job, wt, local), "GIT_BALANCED_WORKER_MODE": "read-only"}
    return StartRequest(
        job=job.runner_key, repo=str(lead.repo.root) if isinstance(host, LocalHost) else host.repo_path(),
        worktree=wt, branch=job.branch, base=str(job.base), argv=run.argv, env=env, files=run.files,
        meter=run.meter, runs_dir=RUNS_DIR, readonly=True,
        worker={"agent": agent, "env": list(lead_settings.worktree.env), "fence": not fence.switched_off()},
        ask=True if asks else None, ask_timeout=float(lead_settings.balanced.ask_timeout) if asks else None,
        hook=agent_hooks.hook_rules() if asks else None)


def _repo_of(host: Host, job: Job) -> str:
    """The repository the job's worktree belongs to there: on this machine its branch's own worker copy."""
    return host.branch_repo(job.branch) if isinstance(host, LocalHost) else host.repo_path()


def record_started(lead: Lead, job: Job, pid: int | None, worktree: str) -> None:
    record(lead.repo, job.id,
           Started(pid=pid, worktree=worktree, started_at=time.time(), node=node_id(lead.repo)),
           f"{job.piece}: started on {job.machine} (attempt {job.attempt}, {job.agent}"
           f"{', ' + job.model if job.model else ''})")


def start(lead: Lead, job: Job, setup: str | None, check: str | None, edit_without_asking: bool,
          others: Collection[Job]) -> None:
    """Start a queued job's worker; if a crash left it started already, only record that."""
    [(_, started)] = launch_many(lead, [job], setup, check, edit_without_asking, others)
    if isinstance(started, BalancedError):
        raise started
    record_started(lead, job, *started)


def start_many(lead: Lead, jobs: list[Job], setup: str | None, check: str | None,
               edit_without_asking: bool, others: Collection[Job]) -> Iterator[tuple[Job, BalancedError | None]]:
    """Start several jobs' workers, the machines at once and each machine's in one round trip; yields each
    job once its start is recorded, machine by machine as they answer, with the error that kept it from
    starting (or None). `others` are the jobs whose paths their guards name."""
    if not jobs:
        return
    by_machine = jobs_mod.by_machine(jobs)
    with ThreadPoolExecutor(max_workers=min(2 * len(by_machine), PARALLEL_STARTS)) as pool:
        for machine in by_machine:  # each machine's runner session opens while its base is pushed, not after
            pool.submit(_warm, lead, machine)
        futures = [pool.submit(launch_many, lead, js, setup, check, edit_without_asking, others)
                   for js in by_machine.values()]
        for fut in as_completed(futures):  # a machine's starts are recorded while the others still go on
            for job, started in fut.result():
                if isinstance(started, BalancedError):
                    yield job, started
                    continue
                record_started(lead, job, *started)  # events are written here, by one thread
                yield job, None


def launch_many(lead: Lead, jobs: list[Job], setup: str | None, check: str | None, edit_without_asking: bool,
                others: Collection[Job]) -> list[tuple[Job, tuple[int | None, str] | BalancedError]]:
    """Push the bases of one machine's jobs there and start their runners with one request each, sent
    together: for each job, (pid, worktree) or the error that kept it from starting. Records nothing. No
    status call first: a push and a start are both safe to repeat (the runner answers a second start with
    the pid of the first), and on another machine every call is a round trip."""
    try:
        host = host_for(lead, jobs[0].machine)
    except BalancedError as exc:
        return [(j, exc) for j in jobs]
    out: list[tuple[Job, tuple[int | None, str] | BalancedError]] = []
    ready: list[tuple[Job, dict[str, Any]]] = []
    for i, j in enumerate(jobs):
        try:
            if not reads_only(j) or not isinstance(host, LocalHost):  # here a reader's checkout needs no copy
                host.prepare_base(j.branch, str(j.base))
            ready.append((j, build_request(lead, j, host, setup, check, edit_without_asking, others).to_json()))
        except MachineUnreachable as exc:  # the same for the rest: not asked again, one timeout at most
            return out + [(k, exc) for k, _ in ready] + [(k, exc) for k in jobs[i:]]
        except BalancedError as exc:
            out.append((j, exc))
    if not ready:
        return out
    try:
        answers = host.call_many(Action.START, [r for _, r in ready])
    except BalancedError as exc:
        return out + [(j, exc) for j, _ in ready]
    for (j, _), answer in zip(ready, answers, strict=True):
        try:
            host.answered("start", answer)
            out.append((j, (answer.get("pid"), work_path(host, j))))
        except BalancedError as exc:
            out.append((j, exc))
    return out


def _warm(lead: Lead, machine: str) -> None:
    with contextlib.suppress(BalancedError):  # a machine that fails here fails its starts, which say why
        host_for(lead, machine).warm()


def statuses(lead: Lead, running: list[Job]) -> dict[str, dict[str, Any]]:
    """Every running job's runner state: one call per machine."""
    out: dict[str, dict[str, Any]] = {}
    for machine, js in jobs_mod.by_machine(running).items():
        try:
            host = host_for(lead, machine)
            asked = StatusRequest(jobs=[j.runner_key for j in js], runs_dir=RUNS_DIR)
            answer = host.call(Action.STATUS, asked.to_json())["jobs"]
        except BalancedError as exc:
            # What ssh said, without "Machine X cannot be reached (...)": the engine names the machine itself.
            error = exc.detail if isinstance(exc, MachineUnreachable) and exc.detail else exc.message
            for j in js:
                out[j.id] = {"state": RunState.UNREACHABLE, "error": error}
            continue
        for j in js:
            out[j.id] = answer.get(j.runner_key, {"state": RunState.MISSING})
    return out


def _settle(lead: Lead, job: Job, action: str, request: ForwardedRequest | AnswerRequest) -> None:
    answer = host_for(lead, job.machine).call(action, request.to_json())
    if answer.get("error"):
        raise BalancedError(f"The runner on {job.machine} refused {action} for {job.piece}: {answer['error']}",
                            hint="`git balanced board` shows the job; the engine tries again on its next pass.")


def mark_forwarded(lead: Lead, job: Job, ns: list[int]) -> None:
    """Tell a job's runner that its questions `ns` reached the lead, so its status hands them over once."""
    if ns:
        _settle(lead, job, Action.FORWARDED, ForwardedRequest(job=job.runner_key, ns=ns, runs_dir=RUNS_DIR))


def deliver_answer(lead: Lead, job: Job, n: int, text: str, decision: str | None, qid: str | None = None) -> None:
    """Leave the lead's answer to a job's question `n` (the lead's `qid`) where its runner's script waits."""
    _settle(lead, job, Action.ANSWER, AnswerRequest(job=job.runner_key, n=n, runs_dir=RUNS_DIR, text=text,
                                               decision=decision, qid=qid))


def read_log(lead: Lead, job: Job) -> str:
    host = host_for(lead, job.machine)
    answer = host.call(Action.LOG, LogRequest(job=job.runner_key, runs_dir=RUNS_DIR, offset=0,
                                              limit=4 << 20).to_json())
    return str(answer.get("data", ""))


def outcome_of(lead: Lead, job: Job, result: Result) -> Outcome:
    """The agent's outcome, read from its log by its adapter."""
    from git_balanced import agents

    adapter = agents.get(job.agent)
    return adapter.outcome(read_log(lead, job), result.exit_code)


def stop(lead: Lead, job: Job) -> dict[str, Any]:
    host = host_for(lead, job.machine)
    return host.call(Action.STOP, StopRequest(job=job.runner_key, runs_dir=RUNS_DIR, wait=5.0).to_json())


