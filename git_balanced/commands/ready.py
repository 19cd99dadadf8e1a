"""`git balanced ready`: prepare ticked machines."""

from __future__ import annotations

from git_balanced import ui
from git_balanced.errors import BalancedError
from git_balanced.lead import Lead, open_lead, settings_at
from git_balanced.machines.inventory import records as inventory
from git_balanced.machines.inventory.records import LOCAL
from git_balanced.machines.placing import accounts
from git_balanced.machines.prepare.ready import Options, prepare, wanted_agents
from git_balanced.machines.prepare.signin import FILES


def ready_command(names: list[str], *, yes: bool, share: str | None = None, replace: bool = False) -> int:
    """Prepare each ticked machine (or those named); exit 1 when any of them is not ready."""
    if share is not None and share not in FILES:
        raise BalancedError(f"There is no sign-in to share for {share!r}.", hint=f"name one of {', '.join(FILES)}.")
    if replace and share is None:
        raise BalancedError("--replace only goes with --share-sign-in.",
                            hint="`git balanced ready NAME --share-sign-in claude --replace`.")
    options = Options(yes=yes, share=share, replace=replace)
    lead = open_lead()
    known = inventory.known()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise BalancedError(f"No machine named {', '.join(unknown)}.",
                            hint=f"add it first: `git balanced machines add {unknown[0]}` (or `git balanced tick "
                                 f"{unknown[0]}` for a host of your SSH config).")
    ticked = inventory.ticked(lead.repo)
    chosen = list(dict.fromkeys(names)) or sorted(n for n in ticked if n in known)
    chosen.sort(key=lambda n: (n != LOCAL, n))
    if not chosen:
        raise BalancedError("No machine is ticked for this repository.", hint="tick one: `git balanced tick NAME`.")
    agent = settings_at(lead.repo, lead.branch).balanced.agent
    results = []
    width = max(len(n) for n in chosen)
    for name in chosen:
        found = prepare(lead, name, yes=yes, agent=agent, options=options)
        results.append(found)
        note = "" if name in ticked else " (not ticked: `git balanced tick " + name + "`)"
        if found.ready:
            ui.say(f"{name:<{width}}  ready · {' · '.join(found.words)}{note}")
        else:
            ui.say(f"{name:<{width}}  not ready: {found.why}{note}")
            if found.hint:
                ui.say(f"{'':<{width}}  hint: {found.hint}")
        for line in found.notes + _no_room(lead, name):
            ui.say(f"{'':<{width}}  {line}")
    good = [f for f in results if f.ready]
    bad = [f for f in results if not f.ready]
    line = f"Balanced: ready on {len(good)} machine{'s' if len(good) != 1 else ''}"
    if bad:
        line += "; not ready: " + "; ".join(f"{f.name} ({f.why})" for f in bad)
    ui.say(line)
    return 1 if bad else 0


def _no_room(lead: Lead, machine: str) -> list[str]:
    """The agents whose account there takes no new workers (past the reserve, or on extra usage), and why."""
    reserve = settings_at(lead.repo, lead.branch).balanced.reserve
    out = []
    for agent in wanted_agents(lead):
        r = accounts.refusal(lead.repo, agent, machine, reserve)
        if r is not None:
            out.append(f"{accounts.agent_name(agent)} takes no new workers here, as {r.words}")
    return out
