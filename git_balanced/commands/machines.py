"""`git balanced machines [add|rm]`, `tick` and `untick`: which machines there are, and which may work here."""

from __future__ import annotations

from typing import Any

from git_balanced import ui
from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.jobs import all_jobs
from git_balanced.machines.inventory import boxes
from git_balanced.machines.inventory import records as inventory
from git_balanced.machines.inventory.records import LOCAL
from git_balanced.machines.placing import check_seats, seats
from git_balanced.machines.placing.table import _repo, rows
from git_balanced.machines.prepare import agents_probe
from git_balanced.machines.reach import copies, sshconfig, workcopy
from git_balanced.shipped.seats import seat_holder_words


def list_command(*, as_json: bool) -> int:
    """Print every machine: ticked, ready (and why not), running workers, preference."""
    table = rows()
    if as_json:
        ui.emit_json(_with_copies(table))
        return 0
    in_repo = table[0]["ticked"] is not None
    lines: list[tuple[str, ...] | ui.Under] = []
    for r in table:
        if not r["added"]:
            lines.append((r["name"], "-", "-", "-", "(not added)", r["address"] or "refused"))
        else:
            ticked = _yes(r["ticked"]) if in_repo else "-"
            ready = _yes(r["ready"]) if in_repo else "-"
            running = str(r["running"]) if in_repo else "-"
            lines.append((r["name"], ticked, ready, running, r["preference"], r["address"] or "refused"))
        if r["why_not"] and (r["ticked"] or not r["address"]):
            lines.append(ui.Under(r["why_not"]))
        if r["added"] and r["facts"]:
            lines += [ui.Under(line) for line in facts_lines(r["facts"])]
        if r.get("check_seats"):
            lines += [ui.Under(line) for line in check_seat_lines(r["check_seats"])]
    ui.table(lines, head=("MACHINE", "TICKED", "READY", "RUNNING", "PREFERENCE", "ADDRESS"), least=(0, 0, 0, 0, 11))
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


def check_seat_lines(s: dict[str, Any]) -> list[str]:
    """A machine's check seats under its row: in use of its budget, then who holds each."""
    return [f"check seats: {check_seats.words(s)}"] + \
        [f"  seat {int(h.get('seat', 0)) + 1}: {seat_holder_words(h)}" for h in s.get("holders") or []]


def _with_copies(table: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row with `repository`: the id of the repository its copy (`repo_path`) serves, as `ready` found it
    there (local: this repository's worker copy)."""
    repo = _repo()
    if repo is None:
        return table
    ready = inventory.readiness(repo)
    try:
        mine: str | None = copies.identity(repo).id
    except BalancedError:  # no commit yet: no identity, and no copy anywhere
        mine = None
    for r in table:
        if r["name"] == LOCAL:
            r["repo_path"], r["repository"] = str(workcopy.path(repo)), mine
        else:
            r["repository"] = ready.get(r["name"], {}).get("repository")
    return table


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


_BOX_ONLY = {"engine": "podman", "on": None, "network": "none", "pass_env": (), "cpus": None, "memory": None,
             "engine_args": (), "engine_env": (), "namespace": None, "context": None}


def add_command(name: str, *, host: str | None, preference: str, **box: Any) -> int:
    """Add a machine (kept for you across repositories) and say where ssh would take it."""
    given = [k for k, v in box.items() if k in _BOX_ONLY and v not in (_BOX_ONLY[k], None, ())]
    if given:
        flag = "--" + given[0].replace("_", "-")
        raise BalancedError(f"{flag} only goes with --container or --kubernetes.",
                            hint=f"`git balanced machines add {name} --container IMAGE {flag} ...`.")
    if name == LOCAL:
        inventory.add(name, host, preference)
        ui.say(f"This machine (local) is now {preference}" + (": it only coordinates, and takes only the pieces "
                                                              "a plan names to it." if preference == "manual-only"
                                                              else "."))
        return 0
    where = inventory.check_host(host or name)
    address = sshconfig.resolve(where).address  # refuses a host ssh would misread, with a hint
    inventory.add(name, where, preference)
    ui.say(f"Added {name} ({address}, {preference}).")
    ui.say(f"Tick it for a repository with `git balanced tick {name}`, then `git balanced ready {name}`.")
    return 0


def add_box_command(name: str, *, host: str | None, preference: str, container: str | None,
                    kubernetes: str | None, engine: str, on: str | None, network: str, cpus: str | None,
                    memory: str | None, engine_args: tuple[str, ...], engine_env: tuple[str, ...],
                    pass_env: tuple[str, ...],
                    namespace: str | None, context: str | None) -> int:
    """Add a machine that makes a fresh container (or pod) of an image for each job."""
    if container and kubernetes:
        raise BalancedError("Give --container or --kubernetes, not both.",
                            hint=f"`git balanced machines add {name} --container IMAGE`.")
    if host:
        raise BalancedError("--host is for SSH machines; a container's engine runs here or on --on MACHINE.",
                            hint=f"`git balanced machines add {name} --container IMAGE --on MACHINE`.")
    kind = boxes.KUBERNETES if kubernetes else boxes.CONTAINER
    wrong = [f for f, v in (("--namespace", namespace), ("--context", context)) if v and kind == boxes.CONTAINER]
    wrong += [f for f, v in (("--on", on), ("--engine-arg", engine_args), ("--engine-env", engine_env),
                             ("--pass-env", pass_env), ("--network", network != "none"))
              if v and kind == boxes.KUBERNETES]
    if wrong:
        raise BalancedError(f"{wrong[0]} does not go with --{kind}.",
                            hint="a pod's network and secrets are the cluster's (a NetworkPolicy, a Secret); see "
                                 "docs/machines.md." if kind == boxes.KUBERNETES else
                            "see `git balanced machines add --help`.")
    env = {}
    for item in engine_env:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise BalancedError(f"--engine-env {item!r} is not KEY=VALUE.",
                                hint="e.g. --engine-env CONTAINERS_CONF=/etc/balanced/containers.conf.")
        env[key] = value
    spec = boxes.BoxSpec(kind=kind, image=str(container or kubernetes), engine=engine, on=on, network=network,
                         cpus=cpus, memory=memory, engine_args=tuple(engine_args), engine_env=env,
                         pass_env=tuple(pass_env), namespace=namespace, context=context)
    inventory.add_box(name, spec, preference)
    ui.say(f"Added {name}: {spec.words()}, {preference}.")
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
    known = inventory.known()
    if on:
        offered = set(sshconfig.aliases())
        for name in names:
            if name not in known and name in offered:
                found = sshconfig.resolve(name)  # refuses a host ssh would misread
                inventory.add(found.alias, None, "normal")
                ui.say(f"Added {name} from your SSH config ({found.address}, normal).")
    now = inventory.set_ticks(repo, names, on)
    ready = inventory.readiness(repo)
    ui.say(f"Ticked for this repository: {', '.join(sorted(now)) or 'nothing (pieces wait for a ticked machine)'}.")
    unready = [n for n in names if on and n != LOCAL and not ready.get(n, {}).get("ready")]
    if unready:
        ui.say(f"Prepare {'it' if len(unready) == 1 else 'them'} with `git balanced ready {' '.join(unready)}`.")
    return 0
