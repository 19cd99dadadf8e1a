"""Short handles for workers: `e3` is the third piece of its plan, `e3.2` the second job on that piece (a retry, or
a move to another agent), `e3@build-box` says it runs on another machine. A handle is made from stored state
alone (the piece's place in its stored plan, and the job's place among its piece's jobs, which sort by id as
they were made), so it never shifts while its plan lives.

Two plans each have an `e1`: a bare `e1` then names the one in a live plan of the current lead; when several
live plans hold one, it is refused, naming each as `e1:PLAN` (PLAN: the last four characters of the plan's id,
or any start or end of it), which names one."""

from __future__ import annotations

import re

from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.state import cache
from git_balanced.state.declared import PlanView

LIVE_PLAN_STATES = ("created", "started")

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:  # for the checker alone: a Protocol's class is slow to make, and the board imports this
    from collections.abc import Callable, Mapping
    from typing import Any, NamedTuple, Protocol, TypeVar

    class Named(Protocol):
        """What a handle is made of: a job (state/views.Job) or its few fields (Who)."""

        @property
        def id(self) -> str: ...
        @property
        def plan(self) -> str: ...
        @property
        def piece(self) -> str: ...
        @property
        def machine(self) -> str: ...
        @property
        def lead(self) -> str: ...
        @property
        def state(self) -> str: ...

    N = TypeVar("N", bound=Named)
else:
    from git_balanced.typed import NamedTuple


class Who(NamedTuple):
    """A job's fields a handle needs, read from its folded state without typing the whole job (the board
    names a thousand of them)."""

    id: str
    plan: str
    piece: str
    machine: str
    lead: str
    state: str

    @classmethod
    def of(cls, jid: str, folded: Mapping[str, Any]) -> Who:
        f = folded["fields"]
        return cls(jid, str(f.get("plan") or ""), str(f.get("piece") or ""), str(f.get("machine") or ""),
                   str(f.get("lead") or ""), str(folded["state"] or ""))
_FORM = r"^e(\d+)(?:\.(\d+))?(?:@([A-Za-z0-9_.-]+))?(?::([0-9a-z]+))?$"  # compiled on first use (re's cache)
LOCAL = "local"


def looks_like(name: str) -> bool:
    """Whether `name` has a handle's form (`e3`, `e3.2`, `e3@box`, `e3:k2m4`)."""
    return re.match(_FORM, name.strip().lower()) is not None


def plan_tag(plan_id: str) -> str:
    """How a handle names its plan when it must: the id's last four characters (its random part)."""
    return plan_id[-4:]


def _plans(repo: Repo) -> dict[str, PlanView]:
    """Every plan, a done one read as its brief (its pieces' ids in order: all a handle needs of it)."""
    return {pid: PlanView(pid, st) for pid, st in cache.read_live(repo, "plans").items()}


def cores(jobs: Mapping[str, Named], plans: Mapping[str, PlanView]) -> dict[str, str]:
    """Each job's handle without its machine or plan (`e3`, `e3.2`), by job id."""
    by_piece: dict[tuple[str, str], list[str]] = {}
    for jid in sorted(jobs):
        j = jobs[jid]
        by_piece.setdefault((j.plan, j.piece), []).append(jid)
    order: dict[str, dict[str, int]] = {}
    for pid in {plan for plan, _ in by_piece}:  # only the plans these jobs are of: a done plan's pieces are not read
        p = plans.get(pid)
        order[pid] = {piece.id: i for i, piece in enumerate(p.pieces, 1)} if p is not None else {}
    out: dict[str, str] = {}
    for (plan, piece), ids in sorted(by_piece.items(), key=lambda kv: kv[1][0]):
        places = order.setdefault(plan, {})
        if piece not in places:  # a job whose plan is not stored (or not this piece): in the order it came
            places[piece] = max(places.values(), default=0) + 1
        for k, jid in enumerate(ids, 1):
            out[jid] = f"e{places[piece]}" + (f".{k}" if k > 1 else "")
    return out


def shown(core: str, job: Named, qualify: bool) -> str:
    """A handle as the board shows it: its machine when not this one, its plan when a bare one is ambiguous."""
    at = f"@{job.machine}" if job.machine and job.machine != LOCAL else ""
    return core + at + (f":{plan_tag(job.plan)}" if qualify else "")


def handles(repo: Repo | None, jobs: Mapping[str, Named], lead: str | None = None, only: set[str] | None = None,
            plans: Mapping[str, PlanView] | None = None, others: Mapping[str, list[Named]] | None = None,
            fixed: Mapping[str, tuple[str, Named]] | None = None,
            core: Mapping[str, str] | None = None) -> dict[str, str]:
    """Each job's handle as shown, by id: qualified by its plan only where a bare one would name another. With
    `only`, the handles of those jobs alone (each made from every job, as without it). `plans`: every plan, when
    read already; `others`: jobs not in `jobs` that hold a bare handle too, by it (a plan summed up: their handles
    are not made, but they are counted where a bare one could name them); `fixed`: jobs not in `jobs` whose bare
    handle is known (a plan summed up, by id: (bare handle, job)), named as the others are; `core`: `cores(jobs,
    plans)`, when made already."""
    if plans is None:
        assert repo is not None, "the plans, or the repository to read them from"
        plans = _plans(repo)
    core = dict(core) if core is not None else cores(jobs, plans)
    every: Mapping[str, Named] = jobs
    if fixed:
        every = {**jobs, **{jid: w for jid, (_, w) in fixed.items()}}
        core.update((jid, c) for jid, (c, _) in fixed.items())
    wanted = None if only is None else {core[jid] for jid in only if jid in core}
    groups: dict[str, list[Named]] = {}
    for jid, c in core.items():
        if wanted is None or c in wanted:
            groups.setdefault(c, []).append(every[jid])
    for c, js in (others or {}).items():
        if c in groups:
            groups[c].extend(js)
    out = {}
    for c, js in groups.items():
        chosen = _narrow(js, plans, lead)
        alone = chosen[0].id if len(chosen) == 1 else None  # the one job its bare handle names, if one
        for j in js:
            if only is None or j.id in only:
                out[j.id] = shown(c, j, qualify=j.id != alone)
    return out


def _narrow(js: list[N], plans: Mapping[str, PlanView], lead: str | None) -> list[N]:
    """Of the jobs that share a bare handle, those it names: all of one, else the current lead's, and of
    those, the ones in live plans."""
    if len(js) <= 1:
        return js
    mine = [j for j in js if j.lead == lead] if lead else js
    mine = mine or js
    if len(mine) == 1:
        return mine
    return [j for j in mine if j.plan in plans and plans[j.plan].state in LIVE_PLAN_STATES]


def find(repo: Repo, jobs: Mapping[str, N], name: str, lead: str | None = None) -> N:
    """The job a handle names; refused, naming the candidates, when none or several do."""
    m = re.match(_FORM, name.strip().lower())
    if m is None:
        raise BalancedError(f"{name!r} is not a worker's handle.", hint="a handle reads e3, e3.2 or e3@MACHINE.")
    piece_no, k, machine, plan = m.groups()
    core = f"e{int(piece_no)}" + (f".{int(k)}" if k and int(k) > 1 else "")
    plans = _plans(repo)
    named = cores(jobs, plans)
    hits = [jobs[jid] for jid, c in named.items() if c == core]
    if machine:
        hits = [j for j in hits if j.machine.lower() == machine]
    if plan:
        hits = [j for j in hits if j.plan.startswith(plan) or j.plan.endswith(plan)]
    if not hits:
        raise BalancedError(f"No worker has the handle {name}.",
                            hint="`git balanced board` shows each worker's handle (e1, e2, ...).")
    chosen = _narrow(hits, plans, lead) if len(hits) > 1 else hits
    if len(chosen) == 1:
        return chosen[0]
    listed = ", ".join(f"{shown(core, j, True)} ({j.piece}, {j.state}, job {j.id})" for j in (chosen or hits)[:10])
    raise BalancedError(f"{name} names workers of {len(chosen or hits)} plans: {listed}.",
                        hint=f"name one as {core}:PLAN, as listed, or by its job id.")


def of_repo(repo: Repo, lead: str | None = None, plans: set[str] | None = None,
            only: set[str] | None = None) -> dict[str, str]:
    """Every job's handle as shown, by id (only the jobs of `plans`, when given; only those of `only`, when
    given, though each is made from them all)."""
    jobs = {jid: w for jid, st in cache.read_live(repo, "jobs").items()  # a done job's brief names it
            if (w := Who.of(jid, st)) and (plans is None or w.plan in plans)}
    return handles(repo, jobs, lead, only)


def add_to_entries(repo: Repo, lead: str, items: list[dict[str, Any]],
                   named: dict[str, str] | None = None, known: Callable[[], Known] | None = None
                   ) -> list[dict[str, Any]]:
    """Inbox lines with the handle of the job each speaks of (`handle`); `named`, when given, keeps the handles
    found, so a follower names them again only when a line speaks of a job it has not named. `known`: what to
    make them from (every plan and job, the plans wholly done summed up with their detail), else read here."""
    named = {} if named is None else named
    if any(e.get("job") and e["job"] not in named for e in items):
        # every job: a handle is qualified when two live plans share it
        named.update(_of_known(known(), lead, None) if known else of_repo(repo, lead))
    return [{**e, "handle": named[e["job"]]} if e.get("job") in named else e for e in items]


def add_to_board(repo: Repo, data: dict[str, Any]) -> dict[str, Any]:
    """The board's data with each job's `handle` added to its rows (its jobs, and the jobs under Now). A folded
    board's brief rows (done workers it counts in one line) show no handle, so none is made for them."""
    rows = list(data.get("jobs", ())) + list(data.get("now", ()))
    only = {r["id"] for r in rows if "id" in r and not r.get("brief")} \
        if any(r.get("brief") for r in data.get("jobs", ())) or data.get("folded") else None
    known = data.pop("known", None)
    if isinstance(known, Known):
        named = _of_known(known, data.get("lead"), only)
    else:
        with repo.listing_once():  # the jobs and plans listed once
            named = of_repo(repo, data.get("lead"), {p["id"] for p in data.get("plans", ())}, only)
    put = dict.__setitem__  # a kept row (engine/kept.py) takes its handle unchanged: put in as in a plain dict
    for r in rows:
        if "id" in r and r["id"] in named:
            put(r, "handle", named[r["id"]])
    return data


class Known:
    """What the board read already, to make its handles from (engine/board.collect puts it in its data, and
    `add_to_board` takes it out): its lead's plans, their jobs' states (a done one's brief), and the summaries of
    the plans wholly done whose jobs are not among them (engine/folded.py: each job's bare handle, by its lead),
    with, where every job is shown, their detail (each job's id, bare handle, machine and lead)."""

    __slots__ = ("detail", "plans", "states", "summaries")

    def __init__(self, plans: Mapping[str, PlanView], states: Mapping[str, Mapping[str, Any]],
                 summaries: Mapping[str, Mapping[str, Any]], detail: Mapping[str, list[list[Any]]]) -> None:
        self.plans, self.states, self.summaries, self.detail = plans, states, summaries, detail


def _of_known(known: Known, lead: str | None, only: set[str] | None) -> dict[str, str]:
    """The handles `of_repo` makes (of the jobs `only`, when given), from what the board read: a summed-up plan's
    jobs by their detail, or, without it, standing in by their bare handles and leads alone, and only where a job
    of `only` has the same bare one."""
    jobs = {jid: Who.of(jid, st) for jid, st in known.states.items()}
    others: dict[str, list[Named]] = {}
    fixed: dict[str, tuple[str, Named]] = {}
    core = None
    made = Who._make  # from one tuple, without binding six arguments by name: 10,000 at --all
    for pid, rows in known.detail.items():
        for jid, c, machine, their_lead, _ in rows:
            fixed[jid] = (c, made((jid, pid, "", machine, their_lead, "")))
    if known.summaries and not known.detail:
        core = cores(jobs, known.plans)
        wanted = {core[jid] for jid in only or () if jid in core}
        for pid, s in known.summaries.items():
            for their_lead, held in s["cores"].items():
                for c in wanted.intersection(held) if wanted else ():
                    others.setdefault(c, []).append(Who("", pid, "", "", their_lead, ""))
    return handles(None, jobs, lead, only, known.plans, others, fixed, core)
