"""Plans: `plan FILE`, `plans`, `start [PLAN]` and `worker TASK`, stored under `refs/balanced/plans/<id>`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from git_balanced.channel.inbox import post
from git_balanced.errors import BalancedError
from git_balanced.jobs import all_plans, unused_branch, used_branches
from git_balanced.lead import Lead, settings_at
from git_balanced.state import refs
from git_balanced.state.events import new_id, node_id

if TYPE_CHECKING:
    from git_balanced.machines.inventory.placement import Seat

LIVE_PLANS = ("created", "started")


def _branch_for(piece: str, plan_id: str, taken: set[str]) -> str:
    """`balanced/<piece>`, or with the plan's short id when any other work holds that name (a live plan, an
    ended one, a branch left here or fetched back): a branch belongs to one piece's attempts, never two."""
    name = unused_branch(f"balanced/{piece}", taken, plan_id[-6:])
    taken.add(name)
    return name


def _left_behind(lead: Lead, piece: str, branch: str) -> str | None:
    """What the lead hears when an earlier plan's `balanced/<piece>` holds commits that never landed: it
    stays where it is, and this plan's piece works on `branch`."""
    old = f"balanced/{piece}"
    tip = lead.repo.read_ref(f"refs/heads/{old}")
    if branch == old or tip is None:
        return None
    n = lead.repo.count_commits(lead.ref, tip)
    if not n:
        return None
    return (f"{old} keeps {n} commit{'s' if n != 1 else ''} of an earlier plan that never landed; it stays "
            f"there, and this plan's {piece} works on {branch}, from the tip of {lead.branch}")


def never_placed(seats: Sequence[Seat], agent: str, machine: str | None) -> str | None:
    """Why no machine can ever take a piece of `agent` (its plan naming `machine`, or not): every machine it
    may go to answered, and each lacks the agent (not installed, not signed in). None when one has it, or when
    one has not answered yet (it may have it), or when none is ticked (ticking one is what to do then)."""
    mine = [s for s in seats if s.name == machine] if machine else \
        [s for s in seats if s.ticked and s.preference != "manual-only"]
    if not mine or any(not (s.ticked and s.ready and s.reachable) or not s.cannot_run(agent) for s in mine):
        return None
    return "; ".join(f"{s.name}: {s.cannot_run(agent)}" for s in mine)


def _refuse_never(pieces: Sequence[tuple[str, str, str | None]], seats: Sequence[Seat]) -> None:
    """Refuse the plan when a piece (id, agent, machine) can never be taken, saying why and what to do."""
    never = [(pid, agent, why) for pid, agent, machine in pieces if (why := never_placed(seats, agent, machine))]
    if not never:
        return
    said = "\n".join(f"  {pid} ({agent}): {why}" for pid, agent, why in never)
    raise BalancedError(
        f"No machine can ever take {'these pieces' if len(never) > 1 else 'this piece'} as things are, so the "
        f"plan was not stored:\n{said}",
        hint="install and sign in the agent there (`git balanced ready --yes` installs what the settings and "
             "stored plans use; `git balanced ready` says how to sign in), or give the piece `agent: shell` "
             "and a `run:` line; `git balanced plan FILE --wait` stores it anyway, waiting until a machine can.")


def store(lead: Lead, text: str, source: str, budget: float | None, *, wait: bool = True
          ) -> tuple[str, dict[str, Any]]:
    """Validate a plan file, place its pieces, and record it; returns (id, the stored plan). With `wait`
    False, a plan with a piece no machine can ever take is refused instead (`plan` without --wait)."""
    from git_balanced.machines.inventory.records import known
    from git_balanced.machines.placing.where import Want, place
    from git_balanced.plans.draft import describe_after, draft_with_shares, read_plan

    if lead.repo.rev_parse(lead.ref) is None:
        raise BalancedError(f"The lead's branch {lead.branch} has no commits yet, so workers have nothing to "
                            "start from.", hint="make a first commit, then store the plan.")
    settings = settings_at(lead.repo, lead.branch)
    plan = draft_with_shares(read_plan(text, source, known_machines=known()), budget)  # no pydantic
    placed = place(lead, [Want(p.agent or settings.balanced.agent, p.machine) for p in plan.pieces],
                   reserve=settings.balanced.reserve)
    if not wait:
        _refuse_never([(p.id, p.agent or settings.balanced.agent, p.machine) for p in plan.pieces], placed.seats)
    plan_id = new_id()
    taken = used_branches(lead.repo)
    pieces = []
    for p, where in zip(plan.pieces, placed.each, strict=True):
        pieces.append({  # every option as the plan file gave it (PieceOptions), the agent the one it runs with
            "id": p.id, "task": p.task, "size": p.size, "after": list(p.after), "machine": p.machine,
            **p.options(), "agent": p.agent or settings.balanced.agent,
            "branch": _branch_for(p.id, plan_id, taken), "placed": where.machine,
            "why": where.why, "after_words": describe_after(p)})
        note = _left_behind(lead, p.id, str(pieces[-1]["branch"]))
        if note:
            pieces[-1]["branch_note"] = note
    data = {"id": plan_id, "task": plan.task, "budget_usd": plan.budget, "lead": lead.branch,
            "pieces": pieces, "source": source}
    refs.append(lead.repo, refs.ref_for("plans", plan_id), "created",
                f"Plan: {plan.task} ({len(pieces)} pieces)", data, state="created")
    for stored in pieces:
        if stored.get("branch_note"):
            post(lead.repo, lead.branch, str(stored["branch_note"]), kind="kept", plan=plan_id,
                 branch=stored["branch"])
    return plan_id, data


def start_plan(lead: Lead, plan_id: str | None) -> str:
    """Mark a plan started (the engine then starts its ready pieces); the newest plan by default."""
    plans = all_plans(lead.repo)
    if not plans:
        raise BalancedError("There is no plan to start.", hint="store one with `git balanced plan FILE`.")
    if plan_id is None:
        plan_id = max((p for p in plans if plans[p].state in LIVE_PLANS), default=None)
        if plan_id is None:
            raise BalancedError("Every plan has ended.", hint="store a new one with `git balanced plan FILE`.")
    hits = [p for p in plans if p.startswith(plan_id)]
    if len(hits) != 1:
        raise BalancedError(f"There is no single plan {plan_id!r}.", hint="see `git balanced plans`.")
    plan_id = hits[0]
    state = plans[plan_id].state
    if state not in LIVE_PLANS:
        raise BalancedError(f"Plan {plan_id} is {state}: there is nothing left to start.",
                            hint="see `git balanced board`; `git balanced retry JOB` tries a piece again.")
    if state == "created":
        refs.append(lead.repo, refs.ref_for("plans", plan_id), "started",
                    f"Plan started: {plans[plan_id].task}", {"started_by": "lead", "node": node_id(lead.repo)},
                    state="started")
    lead.wake_engine()  # an engine asleep in the background looks now, not in half a minute
    return plan_id


def slug(text: str) -> str:
    words = re.findall(r"[a-z0-9]+", text.lower())[:5]
    return "-".join(words)[:40].strip("-") or "task"
