"""Jobs: one attempt at one piece, and the plans they come from. Their events, and reading them typed: `Job`
and `StoredPlan` (state/views.py) made from the folded dicts of state/, once per change."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import fields as dataclass_fields
from typing import TYPE_CHECKING, Any, TypeVar

from git_balanced import handles, process
from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.models import JobId
from git_balanced.state import cache, health, refs
from git_balanced.state.events import Event, Malformed, new_id, node_id, write_event_commit
from git_balanced.state.fold import JOB_RANK, fold
from git_balanced.state.views import _FOLD_KEYS, Unreadable

# Re-exported: the types live in state/views.py, where the fold's checks (state/shapes.py) read their fields.
from git_balanced.state.views import CARRIED as CARRIED
from git_balanced.state.views import FILE_OPTIONS as FILE_OPTIONS
from git_balanced.state.views import OPTIONS as OPTIONS
from git_balanced.state.views import Job as Job
from git_balanced.state.views import PieceOptions as PieceOptions
from git_balanced.state.views import StoredPiece as StoredPiece
from git_balanced.state.views import StoredPlan as StoredPlan
from git_balanced.state.views import latest_by_piece as latest_by_piece
from git_balanced.vocab import LIVE as LIVE  # re-exported for older callers
from git_balanced.vocab import JobState

if TYPE_CHECKING:  # the events' types are imported where a job is placed: a reader (plan, board) makes none
    from git_balanced.job_events import Claimed, TakenOver


class UnreadableFields(BalancedError):
    """A chain of well-formed events whose fields do not make a job (or a plan) of this version."""

    def __init__(self, message: str, *, why: str, hint: str) -> None:
        super().__init__(message, hint=hint)
        self.why = why


class Typed:
    """The jobs and plans this process typed, by id, with the folded state each was made from: the cache hands
    back the very same dict while a ref is unchanged, so each is typed once per change, not once per read (an
    engine reads every job several times a pass)."""

    def __init__(self) -> None:
        self.jobs: dict[str, tuple[dict[str, Any], Job]] = {}
        self.plans: dict[str, tuple[dict[str, Any], StoredPlan]] = {}


T = TypeVar("T")


def _typed_once(memo: dict[str, tuple[dict[str, Any], T]], key: str, folded: dict[str, Any],
                make: Callable[[str, dict[str, Any]], T]) -> T:
    seen = memo.get(key)
    if seen is not None and seen[0] is folded:
        return seen[1]
    made = make(key, folded)
    memo[key] = (folded, made)
    return made


def _typed(kind: str, name: str, folded: dict[str, Any]) -> Any:
    """`Job.of` or `StoredPlan.of`; fields this version cannot read (a stored piece without its branch...) are
    refused as UnreadableFields, naming them."""
    made = Job if kind == "job" else StoredPlan
    try:
        return made.of(name, folded)
    except (Unreadable, TypeError, ValueError, AttributeError) as exc:
        raise UnreadableFields(f"The {kind} {name} has a field this version cannot read ({exc}).",
                               why=f"a field this version cannot read: {exc}",
                               hint=f"`git log refs/balanced/{kind}s/{name}` shows what wrote it; a newer "
                                    "git balanced may have: update this one.") from None


def _job(job_id: str, folded: dict[str, Any]) -> Job:
    return _typed_once(process.part(Typed).jobs, job_id, folded, lambda k, f: _typed("job", k, f))


def _typed_all(repo: Repo, kind: str, folded: dict[str, dict[str, Any]],
               make: Callable[[str, dict[str, Any]], T]) -> dict[str, T]:
    """Each of `folded` typed; one whose fields do not type is malformed like any other (named once and set
    aside), so that one bad ref never stops the readers of every other."""
    out: dict[str, T] = {}
    for name, st in folded.items():
        try:
            out[name] = make(name, st)
        except UnreadableFields as exc:
            ref = f"refs/balanced/{kind}/{name}"
            health.found(repo, ref, repo.read_ref(ref) or "", exc.why)
    return out


def all_jobs(repo: Repo) -> dict[str, Job]:
    """Every job, folded (one ref listing; the cache folds only what changed)."""
    return _typed_all(repo, "jobs", cache.read_all(repo, "jobs"), _job)


def reread(repo: Repo, before: dict[str, Job], mark: int) -> dict[str, Job]:
    """`before` (every job, as `all_jobs` gave them) with the jobs this process wrote since `mark` (a
    `refs.write_mark()`) read again, and those alone: what changed by this process's hand, without listing
    every ref."""
    names = refs.written_since(repo, mark, "refs/balanced/jobs/")
    if not names:
        return before
    out = dict(before)
    states = cache.read_written(repo, "jobs", names)
    typed = _typed_all(repo, "jobs", {jid: st for jid, st in states.items() if st is not None}, _job)
    for jid in states:
        if jid in typed:
            out[jid] = typed[jid]
        else:
            out.pop(jid, None)
    return out


def one(repo: Repo, job_id: str) -> Job | None:
    st = cache.read_one(repo, "jobs", job_id)
    return None if st is None else _typed("job", job_id, st)


def again(repo: Repo, job_id: str) -> Job | None:
    """One job read again, as a follower of it does each second: its ref's tip, and its fold from the cache while
    that tip is the one the cache holds (folded, and the cache saved, once it moved); None when it is gone."""
    st = cache.read_written(repo, "jobs", [job_id])[job_id]
    return None if st is None else _job(job_id, st)


def _plan(plan_id: str, folded: dict[str, Any]) -> StoredPlan:
    return _typed_once(process.part(Typed).plans, plan_id, folded, lambda k, f: _typed("plan", k, f))


def all_plans(repo: Repo) -> dict[str, StoredPlan]:
    """Every plan, folded (typed once per change, as jobs are)."""
    return _typed_all(repo, "plans", cache.read_all(repo, "plans"), _plan)


def one_plan(repo: Repo, plan_id: str) -> StoredPlan | None:
    st = cache.read_one(repo, "plans", plan_id)
    return None if st is None else _typed("plan", plan_id, st)


def place(repo: Repo, fields: dict[str, Any]) -> str:
    """Create a job (queued) and return its id; the event comes before any effect. A field a job does not
    have is refused here, before it is stored."""
    from git_balanced.job_events import Placed, record

    # What the fold sets (its id, state, times) is not a job's to place with.
    unknown = sorted(set(fields) - ({f.name for f in dataclass_fields(Job)} - _FOLD_KEYS))
    if unknown:
        raise TypeError(f"a job has no field {', '.join(unknown)}")
    jid = new_id()
    fields = {**fields, "job": jid, "placed_at": time.time(), "run_no": 1}
    subject = f"{fields.get('piece')}: placed on {fields.get('machine')} (attempt {fields.get('attempt', 1)})"
    record(repo, jid, Placed(piece_fields=fields), subject)
    return jid


def mine(repo: Repo, job: Job) -> bool:
    """Whether this clone's engine owns the job: it claimed it, or nobody has (a job placed and not yet
    started, or one written before claims named their node)."""
    return not job.node or job.node == node_id(repo)


def claim(repo: Repo, job_id: str, ev: Claimed | TakenOver, subject: str, *, owner: str | None = None) -> str | None:
    """Claim a job for this clone, compare-and-swap: the event goes on only while the job's chain, as it is at
    that moment, is still `queued` and unclaimed (or, for a takeover, still owned by `owner`). Returns the
    claim's commit, or None when another engine claimed it first."""
    me = node_id(repo)
    ref = refs.ref_for("jobs", job_id)
    wanted = [owner] if owner else ["", me]

    def build(tip: str | None) -> str | None:
        if tip is None:
            return None
        try:
            folded = fold(refs.read_chain(repo, tip), JOB_RANK, owners=True)
        except Malformed:
            return None  # not a job any more: its next reader sets it aside and says why
        if folded["fields"].get("node", "") not in wanted or (owner is None and folded["state"] != JobState.QUEUED):
            return None
        body = {**ev.data(), "node": me, "claimed_at": time.time()}
        if owner:
            body["taken_from"] = owner
        made = Event(event=ev.event_name(), data=body, state=ev.event_state(), lamport=refs.lamport_of(repo, tip) + 1,
                     node=me, time=time.time())
        return write_event_commit(repo, made, subject, [tip])

    return refs.update_with_retry(repo, ref, build, f"balanced: {ev.event_name()}")


def by_machine(jobs: Iterable[Job]) -> dict[str, list[Job]]:
    """Jobs grouped by the machine they run on, in the order given."""
    out: dict[str, list[Job]] = {}
    for j in jobs:
        out.setdefault(j.machine, []).append(j)
    return out


def newest_on(jobs: dict[str, Job], branch: str, states: tuple[str, ...] | None = None) -> Job | None:
    """The newest attempt on `branch` (or `refs/heads/<branch>`), among the jobs in `states` when given."""
    branch = branch.removeprefix("refs/heads/")
    on_branch = [j for j in jobs.values() if j.branch == branch and (states is None or j.state in states)]
    return max(on_branch, key=lambda j: (j.attempt, j.created)) if on_branch else None


def resolve(jobs: dict[str, Job], name: str, repo: Repo | None = None, lead: str | None = None) -> Job:
    """A job by id, by branch (the newest attempt on it), by its handle (`e3`, `e3@box`: handles.py, given the
    `repo` its plans are in) or by a unique prefix of its id; an unknown name, or one that several ids start with,
    is refused, naming the candidates."""
    found = jobs.get(name) or newest_on(jobs, name)
    if found is None and repo is not None and handles.looks_like(name):
        return handles.find(repo, jobs, name, lead)
    return found or by_prefix(jobs, name)


def by_prefix(jobs: dict[str, Job], name: str, *, or_branch: bool = False) -> Job:
    """The one job whose id starts with `name`; refused when none does or more than one does. `or_branch`:
    the name could have been a branch too, and the refusal says so."""
    start = JobId.prefix(name)  # an id copied in capitals names the same job
    hits = sorted((j for j in jobs.values() if start and j.id.startswith(start)), key=lambda j: j.id)
    if len(hits) == 1:
        return hits[0]
    if not hits:
        what, where = ("job or local branch", " and `git branch` for branches") if or_branch else ("job", "")
        raise BalancedError(f"There is no {what} named {name!r}.",
                            hint=f"see `git balanced board --json` for job ids{where}.")
    shown = ", ".join(f"{j.id} ({j.piece}, {j.state})" for j in hits[:10]) + (", ..." if len(hits) > 10 else "")
    raise BalancedError(f"{name!r} is the start of {len(hits)} job ids: {shown}.",
                        hint="give more of the id, enough to name one job.")


def used_branches(repo: Repo, jobs: Iterable[Job] = ()) -> set[str]:
    """Every branch name that belongs to some work already: a branch here, one fetched back from a machine
    (`refs/remotes/<machine>/<branch>`), any stored plan's piece, any of `jobs`. A new lineage takes none."""
    names = {p.branch for plan in all_plans(repo).values() for p in plan.pieces} | {j.branch for j in jobs}
    for ref in repo.list_refs("refs/heads/"):
        names.add(ref.removeprefix("refs/heads/"))
    for ref in repo.list_refs("refs/remotes/"):
        parts = ref.split("/", 3)
        if len(parts) == 4:
            names.add(parts[3])
    return names


def unused_branch(wanted: str, taken: set[str], tag: str) -> str:
    """`wanted`, or (when some other work holds it) a name made from it with `tag`, that nothing holds."""
    if wanted not in taken:
        return wanted
    head, _, tail = wanted.rpartition("/")
    for n in range(1, 1000):
        name = f"{head}/{tag}-{tail}" if n == 1 else f"{head}/{tag}{n}-{tail}"
        if name not in taken:
            return name
    raise BalancedError(f"Every branch name made from {wanted} is taken.", hint="delete old `balanced/` branches.")
