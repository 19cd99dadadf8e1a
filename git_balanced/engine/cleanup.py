"""Removing an ended worker's folders on the machine it ran on: its worktree, run folder and branch copy, never its
branch. The engine's workers.py and its sweeper (sweep.py) use it; the process an ending engine leaves its last
cleanups to imports this and nothing else of the engine's (no job reader, no event types)."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from git_balanced.errors import BalancedError
from git_balanced.faults import crashpoint
from git_balanced.lead import Lead
from git_balanced.machines.reach import workcopy
from git_balanced.machines.reach.hosts import Host, LocalHost
from git_balanced.shipped.messages import CleanupRequest, MessageError
from git_balanced.shipped.readonly import readonly_path
from git_balanced.shipped.runfiles import RUNS_DIR
from git_balanced.vocab import Action

SWEEPERS = 4  # landed workers of this machine cleaned up at once


class Worker(Protocol):
    """What a cleanup reads of a job (a Job has it, and so does a line of the sweeper's journal)."""

    @property
    def id(self) -> str: ...

    @property
    def machine(self) -> str: ...

    @property
    def runner_key(self) -> str: ...

    @property
    def branch(self) -> str: ...

    @property
    def writes(self) -> str | None: ...

    @property
    def base(self) -> str | None: ...


def host_for(lead: Lead, machine: str) -> Host:
    """The host a job's machine name stands for."""
    if machine == "local":
        return LocalHost(lead.repo)
    from git_balanced.machines.inventory.records import box_of
    from git_balanced.machines.reach.remote import RemoteHost

    spec = box_of(machine)
    if spec is not None:
        from git_balanced.machines.reach.boxhost import BoxHost

        return BoxHost(lead, machine, spec)

    return RemoteHost(lead, machine)


def reads_only(job: Worker) -> bool:
    """Whether the job's piece writes nothing (`writes: none`): a shared read-only checkout, a report, no branch."""
    return job.writes == "none"


def work_path(host: Host, job: Worker) -> str:
    """Where the job's worker works on its machine: its own worktree, or for a piece that writes nothing the
    shared read-only checkout of its base, beside the worktrees (shipped/readonly.py)."""
    wt = host.worktree_path(job.id)
    return readonly_path(wt.rsplit("/", 1)[0], str(job.base)) if reads_only(job) else wt


def cleanup(lead: Lead, job: Worker) -> None:
    """Remove a job's worktree and run folder (never its branch); quietly, as it is housekeeping."""
    cleanup_many(lead, [job])


def cleanup_many(lead: Lead, jobs: Sequence[Worker]) -> None:
    """`cleanup` for several jobs, with one `git worktree prune` per machine, after its last one. Here, where
    each job's worktree, run folder and copy are its own (mostly waiting on the disk), up to SWEEPERS at once."""
    machines: dict[str, list[Worker]] = {}
    for j in jobs:
        machines.setdefault(j.machine, []).append(j)
    for machine, js in machines.items():
        try:
            host = host_for(lead, machine)
            repo = host.repo_path()
        except BalancedError:
            continue
        local = host if isinstance(host, LocalHost) else None

        def one(i: int, job: Worker, host: Host = host, repo: str = repo, local: LocalHost | None = local,
                last: int = len(js) - 1) -> None:
            # Each branch has its own copy: here the lead removes it after the runner's cleanup; on an SSH
            # machine the runner removes it, after the worktree (`own_copy`).
            where = str(workcopy.for_branch(lead.repo, job.branch)) if local else repo
            try:
                if reads_only(job):  # its mark on the shared checkout goes, and the checkout with the last one
                    host.call(Action.CLEANUP, CleanupRequest(job=job.runner_key, repo=repo, worktree=work_path(
                        host, job), runs_dir=RUNS_DIR, prune=False, readonly=True).to_json())
                    return
                # Here the branch's copy goes after the worktree (`forget`): neither `worktree remove` nor a prune.
                asked = CleanupRequest(job=job.runner_key, repo=where, worktree=host.worktree_path(job.id),
                                       runs_dir=RUNS_DIR, prune=local is None and i == last,
                                       own_copy=None if local else True, branch=None if local else job.branch,
                                       copy_goes=True if local else None)
                host.call(Action.CLEANUP, asked.to_json())
                crashpoint("sweep-midway")  # a sweeper killed here leaves the copy: the next one removes it
                if local:
                    local.forget(job.branch)
            except (BalancedError, MessageError):
                pass

        own = [j for j in js if local is not None and not reads_only(j)]
        for i, job in enumerate(js):
            if job not in own:  # a machine's jobs, or readers of one shared checkout: one after another
                one(i, job)
        if own:
            with ThreadPoolExecutor(max_workers=min(SWEEPERS, len(own))) as pool:
                list(pool.map(one, range(len(own)), own))
