"""The machines as a table: `local`, the added ones, and the SSH config's hosts not added yet, each with its
ticks, readiness and running workers (`git balanced machines` and the lead's `machines` tool)."""

from __future__ import annotations

from typing import Any

from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.jobs import all_jobs
from git_balanced.machines.inventory import held
from git_balanced.machines.inventory import records as inventory
from git_balanced.machines.inventory.records import LOCAL
from git_balanced.machines.placing import check_seats, seats
from git_balanced.machines.prepare import agents_probe
from git_balanced.machines.reach import probe, sshconfig


def _repo() -> Repo | None:
    try:
        return Repo.discover()
    except BalancedError:
        return None  # outside a repository, ticks and readiness have no meaning


def _where(host: str) -> tuple[str, str]:
    """`user@host:port` as ssh resolves it, or ("", why not) when ssh refuses the host."""
    try:
        return sshconfig.resolve(host).address, ""
    except BalancedError as exc:
        return "", exc.message


def rows() -> list[dict[str, Any]]:
    """One row per machine: local, the added ones, then the SSH config's hosts not added yet."""
    repo = _repo()
    ticks = inventory.ticked(repo) if repo else set()
    ready = inventory.readiness(repo) if repo else {}
    running = seats.running_counts(all_jobs(repo).values()) if repo else {}
    added = inventory.added()
    if repo:  # a held machine (SSH refused to log in) is asked again: one that answers now is taken back
        probe.unanswering(repo, [name for name in held.held(repo) if name in added])
    away = inventory.ineligible(repo) if repo else {}
    # What each machine that may work has of the agents: kept a few minutes, else asked (all at once).
    asked = [LOCAL] + [n for n in sorted(added) if n in ticks and ready.get(n, {}).get("ready") and n not in away]
    agents_probe.refresh(asked, agents_probe.AGENTS)
    facts = agents_probe.kept()
    checks = check_seats.asked(repo, asked) if repo else {}  # each machine's check seats: in use of its budget

    def row(name: str, host: str | None, preference: str | None, is_added: bool) -> dict[str, Any]:
        spec = inventory.box_of(name) if is_added and name != LOCAL else None
        address, refused = (spec.words(), "") if spec else _where(host) if host else ("this machine", "")
        r = ready.get(name, {})
        is_ready = name == LOCAL or bool(r.get("ready"))
        why = refused or away.get(name, "") or ("" if is_ready else
                                                 r.get("why") or "`git balanced ready` has not run")
        return {"name": name, "host": host, "address": address, "added": is_added, "preference": preference,
                "ticked": (name in ticks) if repo else None, "ready": is_ready if repo else None,
                "why_not": why if repo or refused else "", "running": running.get(name, 0) if repo else None,
                "agents": r.get("agents"), "repo_path": r.get("repo_path"), "facts": facts.get(name),
                "check_seats": checks.get(name)}

    out = [row(LOCAL, None, inventory.local_preference(), True)]
    out += [row(name, str(m.get("host") or name), str(m.get("preference", "normal")), True)
            for name, m in sorted(added.items())]
    known = set(added) | {str(m.get("host")) for m in added.values()}
    out += [row(alias, alias, None, False) for alias in sshconfig.aliases() if alias not in known]
    return out
