"""`git balanced land`: finished workers or named branches, through the landing queue."""

from __future__ import annotations

from collections import Counter
from typing import Any

from git_balanced import ui
from git_balanced.landing.candidates import record
from git_balanced.landing.named import resolve
from git_balanced.landing.queue import Queue, Verdict
from git_balanced.lead import Lead, open_lead


def show(v: Verdict, lead: Lead) -> None:
    if v.status == "landed":
        ui.say(f"landed    {v.branch} → {lead.branch} as {(v.commit or '')[:7]}")
    elif v.status == "already":
        ui.say(f"already   {v.branch}: {v.reason}")
    else:
        ui.say(f"{v.status.replace('_', ' '):<9} {v.branch}: {ui.plain(v.reason, lines=False)}")
        if v.tail:
            ui.say(ui.tail(v.tail, 8))


def machine_words(ran: list[dict[str, Any]], dropped: dict[str, str]) -> list[str]:
    """What the idle machines did for this landing, in words: their checks were hints only."""
    out = []
    if ran:
        each = Counter(str(r["machine"]) for r in ran)
        out.append(f"{len(ran)} more on idle machines as hints ({', '.join(f'{m}: {n}' for m, n in each.items())}); "
                   "the branch moved only on this machine's own checks.")
    out += [f"{m} was dropped from this landing: {why}." for m, why in dropped.items()]
    return out


def land_command(names: list[str], *, take_all: bool, include_protected: bool, as_json: bool) -> int:
    """Land what is named (`include_protected`: `--yes`, you looked at their protected paths) or finished."""
    lead = open_lead()
    cands = resolve(lead, names, take_all, yes=include_protected)
    if not cands:
        if as_json:
            ui.emit_json({"verdicts": [], "check_runs": 0})
        else:
            ui.say("Nothing to land." if take_all else "Name branches or jobs to land, or use --all.")
        return 0
    q = Queue(lead)
    verdicts = q.run(cands)
    record(lead, verdicts)
    if as_json:
        ui.emit_json({"verdicts": [v.as_dict() for v in verdicts], "check_runs": q.check_runs,
                      "checks_stopped": q.checks_stopped, "rounds": q.rounds, "machine_checks": q.machine_checks,
                      "machines_dropped": q.machines_dropped})
    else:
        for v in verdicts:
            show(v, lead)
        if q.check_runs:
            ui.note(f"{q.check_runs} check run{'s' if q.check_runs != 1 else ''} in {q.rounds} "
                    f"round{'s' if q.rounds != 1 else ''}.")
        for line in machine_words(q.machine_checks, q.machines_dropped):
            ui.note(line)
    return 0 if all(v.status in ("landed", "already") for v in verdicts) else 1
