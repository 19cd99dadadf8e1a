"""`git balanced lead on|off`: make this repository's sessions of an agent leads, or stop that."""

from __future__ import annotations

from typing import Any

from git_balanced import ui
from git_balanced.kit.project import AGENTS, lead_off, lead_on
from git_balanced.lead import open_checkout, open_lead
from git_balanced.vocab import LeadState

NAMES = {"claude": "Claude Code", "codex": "Codex", "pi": "Pi"}
NEXT = {
    "claude": "Start `claude` here: it asks once to trust the project's MCP server `balanced`; the skill "
              "`balanced-lead` teaches it the job, and its hooks hand it its inbox.",
    "codex": "Codex reads .codex/ only in a project you trusted: start `codex` here and trust it (or run "
             "`codex exec --trust` once). AGENTS.md teaches it the job; its hooks hand it its inbox.",
    "pi": "Start `pi` here and trust the project when it asks (`pi --approve` for one run): then it loads "
          ".pi/extensions/balanced-lead.ts (the lead's tools and hooks) and .pi/APPEND_SYSTEM.md (the job).",
}


def on_command(agent: str) -> int:
    """Write the agent's lead files, keeping what they held."""
    repo = open_checkout()
    done = lead_on(repo, agent)
    ui.table([(what, str(path)) for path, what in done], indent=2, least=(12,))
    ui.say(f"{NAMES[agent]}'s sessions in this repository are leads. {NEXT[agent]}")
    ui.note("Commit these files to give the repository's other clones the same lead (workers start from your "
            "last commit either way); `git balanced lead off` takes away exactly what this added.")
    return 0


def off_command(agent: str | None) -> int:
    """Take away what `lead on` added, for one agent or all."""
    repo = open_checkout()
    done = [(a, path, what) for a in ([agent] if agent else list(AGENTS)) for path, what in lead_off(repo, a)]
    ui.table([(what, str(path)) for _, path, what in done], indent=2, least=(12,))
    found = [NAMES[a] for a in AGENTS if any(d[0] == a for d in done)]
    names = ", ".join(found[:-1]) + " and " + found[-1] if len(found) > 1 else "".join(found)
    ui.say(f"The sessions of {names} here are no longer leads." if done else
           f"No lead files of {NAMES[agent] if agent else 'any agent'} were here.")
    return 0


def plugin_command(dest: str) -> int:
    """Write the lead's plugin for Claude Code and Codex, and its Pi package, in a local marketplace folder at
    `dest`."""
    from pathlib import Path

    from git_balanced.kit.plugins import MARKETPLACE, PLUGIN, write_plugins

    where = Path(dest).resolve()
    write_plugins(where)
    ui.say(f"Wrote the plugin {PLUGIN} and its marketplace {MARKETPLACE} in {where}. Install it once, and "
           "every repository's sessions are leads:")
    ui.say(f"  claude plugin marketplace add {where} && claude plugin install {PLUGIN}@{MARKETPLACE}")
    ui.say(f"  codex plugin marketplace add {where} && codex plugin add {PLUGIN}@{MARKETPLACE}")
    ui.say(f"  pi install {where / 'plugins' / PLUGIN}")
    return 0


def start_command(agent: str, task: str, model: str | None, started_by: str | None = None) -> int:
    """Start the headless lead of this branch, and an engine for its workers."""
    from git_balanced.engine.background import start_detached
    from git_balanced.kit import headless

    lead = open_lead()
    if started_by == "chief":  # the chief runs: what this lead passes on goes to it from the first
        from git_balanced.channel.presence import mark_chief_seen

        mark_chief_seen(lead.repo)
    rec = headless.start(lead, agent, task, model=model, started_by=started_by)
    pid, _ = start_detached(lead)
    ui.say(f"The lead ({NAMES[agent]}) runs in the background (pid {rec['pid']}) on {lead.branch}, with an engine "
           f"(pid {pid}). Its first turn is the task; then each batch of news in its inbox is its next turn.")
    ui.say("`git balanced lead status` shows it; `git balanced board` shows its work; `git balanced lead stop` "
           "ends it.")
    return 0


def status_command(*, as_json: bool) -> int:
    """The headless lead of this branch: its session, turns, spend, and what it waits on."""
    from git_balanced.kit import headless

    lead = open_lead()
    rec = headless.read(lead)
    if rec is None:
        if as_json:
            ui.emit_json(None)
        else:
            ui.say(f"No headless lead was started for {lead.branch}. "
                   '`git balanced lead start --agent claude "TASK"` starts one.')
        return 0
    from git_balanced.engine.board import collect

    running = headless.alive(rec)
    plans = [p for p in collect(lead)["plans"] if p["lead_usd"] or p["id"] in (rec.get("plan_cost") or {})]
    data: dict[str, Any] = {**rec, "running": running, "lead": lead.branch, "plans": plans,
                            "workers_usd": round(sum(p["workers_usd"] for p in plans), 6)}
    if not running and rec["state"] not in (LeadState.STOPPED,):
        data["state"] = "ended"
    if as_json:
        ui.emit_json(data)
        return 0
    by = ", started by the chief" if rec.get("started_by") == "chief" else ""
    ui.say(f"Lead of {lead.branch}{by}: {NAMES[rec['agent']]}, {data['state']}"
           + (f" (pid {rec['pid']})" if running else ""))
    each = [f"  plan      {p['id']}: ${p['spent_usd']:.2f}"
            + (f" of its ${p['budget_usd']:.2f}" if p.get("budget_usd") else "")
            + f" (lead ${p['lead_usd']:.2f}, workers ${p['workers_usd']:.2f}) · {p['task'][:50]}" for p in plans]
    for line in ui.session_lines(rec, running, told="task", spent=f", its workers ${data['workers_usd']:.2f}",
                                 between=each):
        ui.say(line)
    return 0


def stop_command() -> int:
    """End the headless lead of this branch."""
    from git_balanced.kit import headless

    lead = open_lead()
    rec = headless.stop(lead)
    ui.say(f"Stopped the lead of {lead.branch} (pid {rec['pid']}) after {rec['turns']} turns. The engine goes on: "
           "`git balanced engine --stop` stops it.")
    return 0


def run_command() -> int:
    """The headless lead's driver (what `lead start` runs in the background)."""
    from git_balanced.kit import headless

    return headless.drive(open_lead())
