"""`ready` for a box machine (container or pod): its engine answers, its image is there, and a throwaway box
of the image has git, python3 and the agents this repository uses; the boxes of jobs that ended are removed.

Nothing is installed in a box: what is missing is said, with the command that makes an image that has it.
"""

from __future__ import annotations

import shlex
from typing import Any

from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.jobs import all_jobs
from git_balanced.lead import Lead
from git_balanced.machines.inventory.boxes import BoxSpec
from git_balanced.machines.prepare import agents_probe
from git_balanced.machines.prepare.leftovers import Leftover
from git_balanced.machines.reach import copies
from git_balanced.machines.reach.boxdoor import LABEL, Found, Shell
from git_balanced.machines.reach.boxhost import box_labels, door_for
from git_balanced.vocab import LIVE


class BoxNotReady(BalancedError):
    """What a box machine lacks, and the command that gives it."""


def check(lead: Lead, machine: str, spec: BoxSpec, agents: list[str]) -> dict[str, Any]:
    """What `ready` records for a box machine: its facts when it is ready; BoxNotReady says what is missing."""
    door = door_for(machine, spec)
    for wrong, argv in door.kind.checks():
        res = door.run(argv, timeout=60)
        if not res.ok:
            fix = (f"`git balanced image build --tag {spec.image}` makes one" if "image" in wrong
                   else f"see what `{shlex.join(argv)}` says")
            said = (res.err or res.out).strip()[-200:]
            raise BoxNotReady(wrong + (f": {said}" if said else ""),
                              hint=f"{fix}; then `git balanced ready {machine}`.")
    facts = agents_probe.probe(Shell(door), agents, timeout=120)
    if facts.get("error"):
        raise BoxNotReady(f"a box of {spec.image} could not run python3: {facts['error']}",
                          hint=f"`git balanced image build` makes an image with git and python3; "
                               f"then `git balanced ready {machine}`.")
    lacks = [w for w, ok in (("git", facts.get("git")), ("python3", facts.get("python"))) if not ok]
    lacks += [agents_probe.NAMES.get(a, a) for a in agents
              if not (facts["agents"].get(a) or {}).get("installed")]
    if lacks:
        agent = next((a for a in agents if agents_probe.NAMES.get(a, a) in lacks), None)
        raise BoxNotReady(f"the image {spec.image} lacks {', '.join(lacks)}",
                          hint=f"`git balanced image build{' --agent ' + agent if agent else ''}` makes one "
                               f"with them; then `git balanced ready {machine}`.")
    agents_probe.keep(machine, facts)
    return {"kind": spec.kind, "image": spec.image, "git": facts.get("git"), "python": facts.get("python"),
            "repo_path": f"/root/{lead.repo.name}", "repository": copies.identity(lead.repo).id}


def leftovers(repo: Repo, machine: str, spec: BoxSpec) -> list[Found]:
    """This repository's boxes on the machine whose job is no longer live (ended, or unknown here)."""
    door = door_for(machine, spec)
    live = {j.runner_key for j in all_jobs(repo).values() if j.state in LIVE and j.machine == machine}
    return [f for f in door.boxes(box_labels(copies.identity(repo).short))
            if f.labels.get(f"{LABEL}.job") not in live]


def remove(machine: str, spec: BoxSpec, found: list[Found]) -> None:
    """Remove these boxes."""
    if found:
        door = door_for(machine, spec)
        door.must(door.kind.remove([f.name for f in found]), f"remove {len(found)} boxes", timeout=180)


def as_leftovers(repo: Repo, machines: list[tuple[str, BoxSpec]]) -> tuple[list[Leftover], list[str]]:
    """The boxes of jobs that ended on each box machine, as the doctor lists them (kind `box`, with the command
    that removes each), and the machines that could not be asked, with why."""
    out, unreached = [], []
    for machine, spec in machines:
        door = door_for(machine, spec)
        try:
            found = leftovers(repo, machine, spec)
        except BalancedError as exc:
            unreached.append(f"{machine}: {exc.message}")
            continue
        for f in found:
            remove_cmd = shlex.join(door.kind.remove([f.name]))
            if spec.on:
                remove_cmd = f"ssh {door.on.name if door.on else spec.on} {remove_cmd}"
            out.append(Leftover("box", f.name, f"the box of job {f.labels.get(LABEL + '.job', '?')}, which ended",
                                remove_cmd, machine=machine))
    return out, unreached
