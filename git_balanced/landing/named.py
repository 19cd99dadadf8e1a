"""What `land` names: job ids (or unique prefixes), worker branches or any local branch, as candidates for
the landing queue (`git balanced land` and the lead's `land` tool)."""

from __future__ import annotations

from git_balanced import handles
from git_balanced import jobs as J
from git_balanced.errors import BalancedError
from git_balanced.landing.candidates import job_candidate
from git_balanced.landing.queue import Candidate
from git_balanced.lead import Lead
from git_balanced.models import BranchName
from git_balanced.vocab import LANDABLE, JobState


def resolve(lead: Lead, names: list[str], take_all: bool, yes: bool = False) -> list[Candidate]:
    """Candidates from job ids (or unique prefixes of them), worker branches or any local branch; `--all`:
    every finished worker. `yes` approves the protected paths of the ones named, never of `--all`'s."""
    jobs = J.all_jobs(lead.repo)
    out: list[Candidate] = []
    if take_all:
        for _, j in sorted(jobs.items()):
            if j.state == JobState.FINISHED and J.mine(lead.repo, j) and (c := job_candidate(lead, j)):
                out.append(c)
    for name in names:
        branch = name.removeprefix("refs/heads/")
        job = jobs.get(name) or J.newest_on(jobs, branch, tuple(LANDABLE))
        # Only a name git could give a branch is looked up as one; any other can only be a job's id.
        tip = lead.repo.read_ref(f"refs/heads/{branch}") if job is None and BranchName.is_one(branch) else None
        if tip is not None:
            c = Candidate(branch=branch, tip=tip)
        else:
            job = job or (J.resolve(jobs, name, lead.repo, lead.branch) if handles.looks_like(name)
                          else J.by_prefix(jobs, name, or_branch=True))
            _owned_here(lead, job)
            c = job_candidate(lead, job)
        if c is None:
            raise BalancedError(f"Job {name} has no branch to land yet.", hint="see `git balanced board`.")
        if c.branch == lead.branch:
            raise BalancedError(f"{c.branch} is the lead's branch itself.", hint="name another branch to land.")
        c.approved = yes
        same = [x for x in out if x.branch == c.branch]
        if same:
            same[0].approved = yes
        else:
            out.append(c)
    return out


def _owned_here(lead: Lead, job: J.Job) -> None:
    """A job another clone's engine owns is landed there, not here (its landing is recorded by its owner)."""
    if J.mine(lead.repo, job) or job.state == JobState.LANDED:
        return
    raise BalancedError(f"Job {job.id} ({job.piece}) belongs to the engine on node {job.node}, another clone.",
                        hint="land it on that clone; this one takes it over only once that engine has been "
                             "silent for `takeover_after` (see `git balanced board`).")
