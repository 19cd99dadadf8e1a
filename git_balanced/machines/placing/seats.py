"""Seats: the machines as placement sees them, with their load. `seats` reads what is recorded; `probed` and
`with_agents` ask the machines over SSH, and say so by their names."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import replace

from git_balanced.git import Repo
from git_balanced.jobs import Job, by_machine
from git_balanced.lead import Lead
from git_balanced.machines.inventory import held
from git_balanced.machines.inventory.placement import Seat
from git_balanced.machines.inventory.records import LOCAL, added, ineligible, local_preference, readiness, ticked
from git_balanced.machines.prepare import agents_probe
from git_balanced.vocab import JobState


def seats(lead: Lead, running: dict[str, int] | None = None) -> list[Seat]:
    """Every machine as placement sees it from what is recorded, no machine asked: local always ready, others as
    `ready` left them; one that timed out lately is skipped until its 30 seconds are over."""
    repo = lead.repo
    ticks = ticked(repo)
    ready = readiness(repo)
    if running is None:
        running = live_counts(repo)
    machines = added()
    away = {name: why for name, why in ineligible(repo).items() if name in machines}
    out = [Seat(LOCAL, local_preference(), running.get(LOCAL, 0), ready=True, reachable=True,
                ticked=LOCAL in ticks, setup_done=bool(ready.get(LOCAL, {}).get("setup_done")))]
    for name, m in sorted(machines.items()):
        r = ready.get(name, {})
        why = away.get(name) or r.get("why", "") or ("" if r.get("ready") else "`git balanced ready` has not run")
        out.append(Seat(name, m.get("preference", "normal"), running.get(name, 0), ready=bool(r.get("ready")),
                        reachable=name not in away, ticked=name in ticks,
                        setup_done=bool(r.get("setup_done")), why_not=why))
    return out


def probed(repo: Repo, seen: Iterable[Seat]) -> list[Seat]:
    """The seats after asking each ticked, ready SSH machine among them whether it answers now (all at once,
    over SSH): one that does not is unreachable, with why. A held one (SSH refused to log in) is asked too, and
    taken back when it answers. A new list."""
    seen = list(seen)
    on_hold = held.held(repo)
    ask = [s.name for s in seen if s.name != LOCAL and s.ticked and s.ready and (s.reachable or s.name in on_hold)]
    if not ask:  # only this machine: nothing to ask, and SSH's modules are not imported
        return seen
    from git_balanced.machines.reach import probe

    away = probe.unanswering(repo, ask)
    back = {name for name in on_hold if name in ask and name not in away}
    return [replace(s, reachable=False, why_not=away[s.name]) if s.name in away else
            replace(s, reachable=True, why_not="") if s.name in back else s for s in seen]


def with_agents(out: list[Seat], agents: Collection[str]) -> list[Seat]:
    """The seats with what each ticked, ready machine that answers lacks of `agents`: facts kept a few minutes,
    else asked of the machine over SSH. A new list."""
    agents = [a for a in agents if a in agents_probe.AGENTS]
    if not agents:
        return out
    ask = [s.name for s in out if s.ticked and s.ready and s.reachable]
    known = agents_probe.refresh(ask, agents)
    done = []
    for s in out:
        facts = known.get(s.name)
        if facts is None:
            done.append(s)
            continue
        lacks = {a: agents_probe.missing_words(a, facts.get(a)) for a in agents if a in facts}
        done.append(replace(s, lacks={a: why for a, why in lacks.items() if why}))
    return done


def live_counts(repo: Repo) -> dict[str, int]:
    """Queued and running jobs, per machine, as running_counts counts them, read with `cache.read_live`: the done
    jobs are not parsed (their briefs say they are done), so it costs what is live."""
    from git_balanced.state import cache

    out: dict[str, int] = {}
    for st in cache.read_live(repo, "jobs").values():
        if st.get("state") in (JobState.QUEUED, JobState.RUNNING):
            machine = (st.get("fields") or {}).get("machine") or Job.machine
            out[machine] = out.get(machine, 0) + 1
    return out


def running_counts(jobs: Iterable[Job]) -> dict[str, int]:
    """Queued and running jobs, per machine."""
    return {m: len(js) for m, js in
            by_machine(j for j in jobs if j.state in (JobState.QUEUED, JobState.RUNNING)).items()}
