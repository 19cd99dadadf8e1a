"""Jobs: one attempt at one piece, and the plans they come from. Their events, and the typed views the engine
and the board take of them (state/ folds dicts; here they become named fields)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any, ClassVar, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.job_events import Claimed, JobEvent, Placed, TakenOver, record
from git_balanced.state import cache, health, refs
from git_balanced.state.events import Event, Malformed, new_id, node_id, write_event_commit
from git_balanced.state.fold import JOB_RANK, fold
from git_balanced.state.views import latest_by_piece as latest_by_piece  # re-exported: its home is light
from git_balanced.vocab import DONE as DONE  # the sets re-exported for older callers
from git_balanced.vocab import LIVE as LIVE
from git_balanced.vocab import JobState

# What a new job of a piece takes from the one before it, when the engine or you try it again, or when it
# moves to another agent; each sets on top what its reason changes (the attempt, the base, the agent...).
CARRIED = ("plan", "piece", "task", "title", "plan_task", "agent", "model", "run", "paths", "budget_usd",
           "machine", "why", "branch", "base", "lead", "after", "attempt", "plan_first")


class UnreadableFields(BalancedError):
    """A chain of well-formed events whose fields do not make a job (or a plan) of this version."""

    def __init__(self, message: str, *, why: str, hint: str) -> None:
        super().__init__(message, hint=hint)
        self.why = why


class Folded(BaseModel):
    """A chain of events folded, with named fields. What this version does not know by name (written by
    another version and shared through `sync`) stays in `extra`, so it is never lost on the way out."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: ClassVar[str] = "thing"
    first_state: ClassVar[str] = ""

    id: str
    state: str
    created: float = 0.0
    updated: float = 0.0
    extra: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def of(cls, name: str, folded: dict[str, Any]) -> Self:
        """The typed view of one folded state (`state/fold.py`); an `id` in the events is the ref's name."""
        own = cls.model_fields
        fields = folded["fields"]
        values = {k: v for k, v in fields.items() if k in own and k not in _FOLD_KEYS}
        extra = {k: v for k, v in fields.items() if k not in values and not (k == "id" and v == name)}
        values.update(id=name, state=folded["state"] or cls.first_state, created=folded["created"] or 0.0,
                      updated=folded["updated"] or 0.0, extra=extra)
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            bad = ", ".join(sorted({str(e["loc"][0]) for e in exc.errors() if e["loc"]}))
            raise UnreadableFields(f"The {cls.kind} {name} has a field this version cannot read ({bad}).",
                                   why=f"a field this version cannot read: {bad}",
                                   hint=f"`git log refs/balanced/{cls.kind}s/{name}` shows what wrote it; a newer "
                                        "git balanced may have: update this one.") from None

    def as_fields(self) -> dict[str, Any]:
        """The fields as its events wrote them: the ones they set, and the ones this version does not know."""
        named = self.model_dump(include=self.model_fields_set - set(_FOLD_KEYS))
        return {**named, **self.extra}


_FOLD_KEYS = ("id", "state", "created", "updated", "extra")


class Job(Folded):
    """One attempt at one piece, as its events (`refs/balanced/jobs/<id>`) left it."""

    kind: ClassVar[str] = "job"
    first_state: ClassVar[str] = JobState.QUEUED

    # placed: the piece, where it runs, and from what
    job: str = ""
    plan: str = ""
    plan_task: str = ""
    piece: str = ""
    task: str = ""
    title: str = ""
    agent: str = "shell"
    model: str | None = None
    run: str | None = None
    paths: tuple[str, ...] = ()
    plan_first: bool = False
    budget_usd: float | None = None
    machine: str = "local"
    why: str = ""
    branch: str = ""
    base: str | None = None
    attempt: int = 1
    lead: str = ""
    after: tuple[str, ...] = ()
    placed_at: float | None = None
    run_no: int = 1
    previous: str | None = None
    retry_reason: str = ""
    not_before: float = 0.0
    moved_from: str | None = None
    # claimed and started: the node (clone) whose engine owns it, and the nodes whose claim came second
    node: str = ""
    claimed_at: float | None = None
    lost_claims: tuple[str, ...] = ()
    taken_from: str = ""
    pid: int | None = None
    worktree: str = ""
    started_at: float | None = None
    # finished, or how it failed
    exit_code: int | None = None
    head: str | None = None
    commits: int = 0
    cost_usd: float | None = None
    outcome: str = ""
    summary: str = ""
    seconds: float | None = None
    dirty: bool = False
    tokens: dict[str, Any] = Field(default_factory=dict)
    windows: tuple[dict[str, Any], ...] = ()
    failure: str = ""
    reason: str = ""
    budget_stopped: bool = False
    host_fetch: bool = False
    fetched_ref: str | None = None
    tail: str = ""
    verdict_paths: tuple[str, ...] = ()  # what the landing queue named: conflicting or protected paths
    in_the_way: tuple[str, ...] = ()  # the lead's own files its landing would overwrite, while they are there
    in_the_way_why: str = ""
    # paused for a plan's usage limit, moved, carried on
    reset_at: float | None = None
    resume_at: float | None = None
    reset_known: bool = False
    resume_note: str = ""
    spent_before: float = 0.0
    moved_to: str | None = None
    # decided: tried again, given up, landed
    decided: bool = False
    next: str | None = None
    final: str = ""
    landed: str | None = None
    landed_in: str = ""
    # what the lead was told once, and questions
    told_no_check: bool = False
    told_dirty: bool = False
    told_waiting: bool = False
    told_reserve: str | None = None
    waits_for: str = ""
    asked: str | None = None
    asked_text: str = ""
    answered: str | None = None
    answered_by: str | None = None
    dismissed: bool = False

    @property
    def runner_key(self) -> str:
        return self.id if self.run_no == 1 else f"{self.id}-r{self.run_no}"

    @property
    def ever_asked(self) -> bool:
        """Whether its worker asked its lead anything: `asked` is cleared once a question is answered, but set."""
        return "asked" in self.model_fields_set

    def carried(self) -> dict[str, Any]:
        """The fields a new job of the same piece starts from (CARRIED), as this job has them."""
        return {k: v for k, v in self.as_fields().items() if k in CARRIED}


class StoredPiece(BaseModel):
    """A piece as its plan was stored: the plan file's piece, with its branch and where it was placed."""

    model_config = ConfigDict(frozen=True, extra="allow")

    id: str
    task: str
    size: float = 1.0
    after: tuple[str, ...] = ()
    machine: str | None = None  # the machine the plan names, if it names one
    agent: str = "shell"
    model: str | None = None
    run: str | None = None
    paths: tuple[str, ...] = ()
    plan_first: bool = False
    budget_usd: float | None = None
    branch: str
    placed: str  # where placement put it when the plan was stored
    why: str = ""
    after_words: str = ""


class StoredPlan(Folded):
    """A plan, as its events (`refs/balanced/plans/<id>`) left it."""

    kind: ClassVar[str] = "plan"
    first_state: ClassVar[str] = "created"

    task: str = ""
    budget_usd: float | None = None
    lead: str = ""
    pieces: tuple[StoredPiece, ...] = ()
    source: str = ""
    started_by: str | None = None
    node: str = ""  # the clone whose engine places its pieces
    moves: dict[str, str] = Field(default_factory=dict)  # piece -> why it moved to another agent
    summary: str = ""

    def piece(self, piece_id: str) -> StoredPiece | None:
        return next((p for p in self.pieces if p.id == piece_id), None)


# Typed jobs and plans by id, with the folded state each was made from: the cache hands back the very same dict
# while a ref is unchanged, so each is typed once per change, not once per read (an engine reads every pass).
T = TypeVar("T")
_TYPED: dict[str, tuple[dict[str, Any], Job]] = {}
_TYPED_PLANS: dict[str, tuple[dict[str, Any], StoredPlan]] = {}


def _typed_once(memo: dict[str, tuple[dict[str, Any], T]], key: str, folded: dict[str, Any],
                make: Callable[[str, dict[str, Any]], T]) -> T:
    seen = memo.get(key)
    if seen is not None and seen[0] is folded:
        return seen[1]
    made = make(key, folded)
    memo[key] = (folded, made)
    return made


def _job(job_id: str, folded: dict[str, Any]) -> Job:
    return _typed_once(_TYPED, job_id, folded, Job.of)


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
    return None if st is None else Job.of(job_id, st)


def _plan(plan_id: str, folded: dict[str, Any]) -> StoredPlan:
    return _typed_once(_TYPED_PLANS, plan_id, folded, StoredPlan.of)


def all_plans(repo: Repo) -> dict[str, StoredPlan]:
    """Every plan, folded (typed once per change, as jobs are)."""
    return _typed_all(repo, "plans", cache.read_all(repo, "plans"), _plan)


def one_plan(repo: Repo, plan_id: str) -> StoredPlan | None:
    st = cache.read_one(repo, "plans", plan_id)
    return None if st is None else StoredPlan.of(plan_id, st)


def event(repo: Repo, job_id: str, ev: JobEvent, subject: str) -> None:
    """Record one event on a job's chain (job_events.record, here for the callers that hold `jobs`)."""
    record(repo, job_id, ev, subject)


def place(repo: Repo, fields: dict[str, Any]) -> str:
    """Create a job (queued) and return its id; the event comes before any effect. A field a job does not
    have is refused here, before it is stored."""
    unknown = sorted(set(fields) - set(Job.model_fields) - set(_FOLD_KEYS))
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


def resolve(jobs: dict[str, Job], name: str) -> Job:
    """A job by id, by branch (the newest attempt on it) or by a unique prefix of its id; an unknown name, or
    one that several ids start with, is refused, naming the candidates."""
    return jobs.get(name) or newest_on(jobs, name) or by_prefix(jobs, name)


def by_prefix(jobs: dict[str, Job], name: str, *, or_branch: bool = False) -> Job:
    """The one job whose id starts with `name`; refused when none does or more than one does. `or_branch`:
    the name could have been a branch too, and the refusal says so."""
    hits = sorted((j for j in jobs.values() if name and j.id.startswith(name)), key=lambda j: j.id)
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
