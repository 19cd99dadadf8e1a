"""`git balanced machines [add|rm]`, `tick` and `untick`: which machines there are, and which may work here."""

from __future__ import annotations

from typing import Any

from git_balanced import ui
from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.jobs import all_jobs
from git_balanced.machines import agents_probe, inventory, seats, sshconfig
from git_balanced.machines.inventory import LOCAL


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
    away = inventory.ineligible(repo) if repo else {}
    added = inventory.added()
    # What each machine that may work has of the agents: kept a few minutes, else asked (all at once).
    asked = [LOCAL] + [n for n in sorted(added) if n in ticks and ready.get(n, {}).get("ready") and n not in away]
    agents_probe.refresh(asked, agents_probe.AGENTS, {n: (None if n == LOCAL else str(added[n].get("host") or n))
                                                      for n in asked})
    facts = agents_probe.kept()

    def row(name: str, host: str | None, preference: str | None, is_added: bool) -> dict[str, Any]:
        address, refused = _where(host) if host else ("this machine", "")
        r = ready.get(name, {})
        is_ready = name == LOCAL or bool(r.get("ready"))
        why = refused or away.get(name, "") or ("" if is_ready else
                                                 r.get("why") or "`git balanced ready` has not run")
        return {"name": name, "host": host, "address": address, "added": is_added, "preference": preference,
                "ticked": (name in ticks) if repo else None, "ready": is_ready if repo else None,
                "why_not": why if repo or refused else "", "running": running.get(name, 0) if repo else None,
                "agents": r.get("agents"), "repo_path": r.get("repo_path"), "facts": facts.get(name)}

    out = [row(LOCAL, None, inventory.local_preference(), True)]
    out += [row(name, str(m.get("host") or name), str(m.get("preference", "normal")), True)
            for name, m in sorted(added.items())]
    known = set(added) | {str(m.get("host")) for m in added.values()}
    out += [row(alias, alias, None, False) for alias in sshconfig.aliases() if alias not in known]
    return out


def list_command(*, as_json: bool) -> int:
    """Print every machine: ticked, ready (and why not), running workers, preference."""
    table = rows()
    if as_json:
        ui.emit_json(table)
        return 0
    in_repo = table[0]["ticked"] is not None
    width = max(len("MACHINE"), *(len(r["name"]) for r in table))
    ui.say(f"{'MACHINE':<{width}}  TICKED  READY  RUNNING  PREFERENCE   ADDRESS")
    for r in table:
        if not r["added"]:
            ui.say(f"{r['name']:<{width}}  {'-':<6}  {'-':<5}  {'-':<7}  {'(not added)':<11}  "
                   f"{r['address'] or 'refused'}")
        else:
            ticked = _yes(r["ticked"]) if in_repo else "-"
            ready = _yes(r["ready"]) if in_repo else "-"
            running = str(r["running"]) if in_repo else "-"
            ui.say(f"{r['name']:<{width}}  {ticked:<6}  {ready:<5}  {running:<7}  {r['preference']:<11}  "
                   f"{r['address'] or 'refused'}")
        if r["why_not"] and (r["ticked"] or not r["address"]):
            ui.say(f"{'':<{width}}  {r['why_not']}")
        if r["added"] and r["facts"]:
            for line in facts_lines(r["facts"]):
                ui.say(f"{'':<{width}}  {line}")
    hints = []
    if any(not r["added"] for r in table):
        hints.append("`git balanced tick NAME` adds a host of your SSH config and ticks it")
    if in_repo and any(r["ticked"] and not r["ready"] for r in table):
        hints.append("`git balanced ready` prepares the ticked machines")
    if not in_repo:
        hints.append("run it inside a repository to see ticks and readiness")
    for h in hints:
        ui.note(f"hint: {h}.")
    return 0


def facts_lines(facts: dict[str, Any]) -> list[str]:
    """One line per agent (`Claude Code 2.1.332, signed in`), then git's and Node.js's versions."""
    lines = []
    for agent in agents_probe.AGENTS:
        f = (facts.get("agents") or {}).get(agent)
        if f is None:
            continue
        name = agents_probe.NAMES[agent]
        if not f.get("installed"):
            lines.append(f"{name}: not installed")
            continue
        state = ("signed in" + (f" as {f['account']}" if f.get("account") else "") if f.get("signed_in") else
                 f"not signed in: {f.get('sign_in_hint') or 'sign in there'}")
        old = f"; needs Node {f['node_needed']} or newer" if f.get("node_too_old") else ""
        lines.append(f"{name} {f.get('version') or '(version unknown)'}, {state}{old}")
    lines.append(f"git {facts.get('git') or 'not found'}" + (f" · Node {facts['node']}" if facts.get("node") else ""))
    return lines


def _yes(value: bool | None) -> str:
    return "yes" if value else "no"


def add_command(name: str, *, host: str | None, preference: str) -> int:
    """Add a machine (kept for you across repositories) and say where ssh would take it."""
    if name == LOCAL:
        inventory.add(name, host, preference)
        ui.say(f"This machine (local) is now {preference}" + (": it only coordinates, and takes only the pieces "
                                                              "a plan names to it." if preference == "manual-only"
                                                              else "."))
        return 0
    inventory.check_host(host or name)
    address = sshconfig.resolve(host or name).address  # refuses a host ssh would misread, with a hint
    inventory.add(name, host, preference)
    ui.say(f"Added {name} ({address}, {preference}).")
    ui.say(f"Tick it for a repository with `git balanced tick {name}`, then `git balanced ready {name}`.")
    return 0


def rm_command(name: str) -> int:
    """Forget an added machine; workers running there go on, and their jobs say where they ran."""
    inventory.remove(name)
    repo = _repo()
    running = seats.running_counts(all_jobs(repo).values()).get(name, 0) if repo else 0
    ui.say(f"Removed {name}." + (f" {running} workers placed there in this repository go on; the engine can no "
                                 "longer reach them." if running else ""))
    return 0


def tick_command(names: list[str], *, on: bool) -> int:
    """Tick (or untick) machines for this repository; a host of the SSH config is added first."""
    repo = Repo.discover()
    known = {LOCAL, *inventory.added()}
    if on:
        offered = set(sshconfig.aliases())
        for name in names:
            if name not in known and name in offered:
                address = sshconfig.resolve(name).address  # refuses a host ssh would misread
                inventory.add(name, None, "normal")
                ui.say(f"Added {name} from your SSH config ({address}, normal).")
    now = inventory.set_ticks(repo, names, on)
    ready = inventory.readiness(repo)
    ui.say(f"Ticked for this repository: {', '.join(sorted(now)) or 'nothing (pieces wait for a ticked machine)'}.")
    unready = [n for n in names if on and n != LOCAL and not ready.get(n, {}).get("ready")]
    if unready:
        ui.say(f"Prepare {'it' if len(unready) == 1 else 'them'} with `git balanced ready {' '.join(unready)}`.")
    return 0
