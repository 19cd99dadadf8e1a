"""A headless lead: `git balanced lead start --agent A TASK` runs the lead agent itself, non-interactively,
with the lead's tools, and drives its turns by its inbox.

The first turn is the task. After each turn the driver looks at the lead's inbox: what came meanwhile (a
landing, a failure, a worker's question, a schedule firing, your answer) is handed to the lead, all of it
at once, as its next turn on the same session (Claude Code `--resume`, Pi `--session`, Codex `exec
resume`). With nothing new no turn runs and nothing is spent. A turn refused for the plan's usage limit
pauses the lead until the limit resets, then it goes on, told to carry on.

The driver is one process per lead's branch (`lead run`, started detached by `lead start`); what it does is
kept in `.git/balanced/lead/<branch>.json`, and each turn's output in `turns.log` beside it.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

from git_balanced import knobs, proc
from git_balanced.agents import get, lead_model, lead_session, modes
from git_balanced.channel import presence
from git_balanced.errors import BalancedError
from git_balanced.files import json_objects, write_atomic
from git_balanced.kit.project import ARGV, instructions, pi_extension
from git_balanced.lead import Lead
from git_balanced.machines.placing import accounts
from git_balanced.vocab import LeadState

AGENTS = ("claude", "codex", "pi")
CARRY_ON = "[balanced] Your plan's usage limit has reset: carry on where you left off."
HEADLESS_ENV = presence.HEADLESS_ENV  # tells the lead's own hooks and tools that the driver hands it its news


def folder(lead: Lead) -> Path:
    return presence.lead_dir(lead.repo, lead.branch)


def read(lead: Lead) -> dict[str, Any] | None:
    """The headless lead's record, or None when none was started on this branch."""
    try:
        return json.loads((folder(lead) / "lead.json").read_text())
    except FileNotFoundError:
        return None


def _save(lead: Lead, rec: dict[str, Any]) -> None:
    write_atomic(folder(lead) / "lead.json", json.dumps(rec, indent=2) + "\n")


def alive(rec: dict[str, Any] | None) -> bool:
    """Whether the record's driver process still runs."""
    return presence.driver_alive(rec)


def start(lead: Lead, agent: str, task: str, *, model: str | None = None,
          started_by: str | None = None) -> dict[str, Any]:
    """Start the headless lead of this branch on TASK; refuses while one runs. `started_by` is `chief` for a lead
    the chief started (the board and Now say so)."""
    if agent not in AGENTS:
        raise BalancedError(f"There is no headless lead for the agent {agent!r}.", hint="one of: claude, codex, pi.")
    if not task.strip():
        raise BalancedError("TASK is empty: say what the lead should get done.",
                            hint='git balanced lead start --agent claude "Add order history"')
    old = read(lead)
    if old is not None and alive(old):
        raise BalancedError(f"A headless lead runs for {lead.branch} already (pid {old['pid']}, {old['agent']}).",
                            hint="`git balanced lead status` shows it; `git balanced lead stop` ends it.")
    d = folder(lead)
    write_atomic(d / "instructions.md", instructions())
    write_atomic(d / "mcp.json", json.dumps({"mcpServers": {"balanced": {
        "command": ARGV[0], "args": [*ARGV[1:], "mcp"]}}}) + "\n")
    if agent == "pi":
        write_atomic(d / "balanced-lead.ts", pi_extension())
    rec = {"agent": agent, "task": task, "model": model, "session": None, "pid": None, "state": "starting", "turns": 0,
           "cost_usd": 0.0, "started_at": time.time(), "last_turn_at": None, "last_words": "", "reset_at": None,
           "waits_on": "its first turn", **({"started_by": started_by} if started_by else {})}
    _save(lead, rec)
    # proc.ours: `-P`, so a `git_balanced/` in the checkout is not what runs
    rec.update(presence.driver(proc.spawn_ours("git_balanced.cli", ["lead", "run"], cwd=lead.repo.root,
                                               log=d / "driver.log")))
    _save(lead, rec)
    return rec


def stop(lead: Lead) -> dict[str, Any]:
    """End the headless lead of this branch (its driver and the turn it is in)."""
    rec = read(lead)
    if not alive(rec):
        raise BalancedError(f"No headless lead runs for {lead.branch}.",
                            hint='start one with `git balanced lead start --agent claude "TASK"`.')
    assert rec is not None
    os.killpg(int(rec["pid"]), signal.SIGTERM)  # its own session: the driver and the agent of its turn
    end = time.monotonic() + 10
    while alive(rec) and time.monotonic() < end:
        time.sleep(0.1)
        _reap(int(rec["pid"]))
    rec = read(lead) or rec
    rec.update(state=LeadState.STOPPED, waits_on=None)
    _save(lead, rec)
    return rec


def _reap(pid: int) -> None:
    """Collect the driver when this process started it (a test's), so it does not linger as a zombie."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


# -- the driver ---------------------------------------------------------------------------------------------
def turn_argv(agent: str, message: str, session: str | None, d: Path, model: str | None = None,
              server: tuple[str, ...] = ("mcp",), own_hooks: bool = False) -> list[str]:
    """The agent's command line for one turn of the lead (resuming its session after the first); `server` is
    what follows `git balanced` to start its MCP server (`mcp --chief` for the chief), and a `settings.json` in
    `d` is Claude Code's hook settings. With `own_hooks`, Codex runs the hooks of `.codex/hooks.json` in its
    folder, which git balanced wrote there itself (the chief's), without the person's review of them."""
    rules = (d / "instructions.md").read_text()
    if agent == "claude":
        argv = ["claude", "-p", message, "--output-format", "stream-json", "--verbose",
                "--mcp-config", str(d / "mcp.json"), "--strict-mcp-config", "--allowedTools", "mcp__balanced__*",
                "--append-system-prompt", rules]
        argv += ["--settings", str(d / "settings.json")] if (d / "settings.json").exists() else []
        return argv + (["--model", model] if model else []) + (["--resume", session] if session else [])
    if agent == "pi":
        argv = ["pi", "--mode", "json", "-e", str(d / "balanced-lead.ts"), "--append-system-prompt", rules]
        argv += (["--model", model] if model else []) + (["--session", session] if session else [])
        return argv + [" " + message if message.startswith(("@", "-")) else message]
    table = [f'mcp_servers.balanced.command="{ARGV[0]}"', "-c",
              "mcp_servers.balanced.args=" + json.dumps([*ARGV[1:], *server]), "-c",
              'mcp_servers.balanced.default_tools_approval_mode="approve"', "-c",  # as `lead on` writes it
              f'mcp_servers.balanced.env={{{HEADLESS_ENV}="1"}}']  # Codex hands its servers a few variables only
    # Approvals off, whatever the person's own Codex config says: no one is there to approve, and the server's
    # approval mode above lets the tools that change something through (Codex refuses them otherwise).
    opts = ["--json", "--skip-git-repo-check", "-c", 'approval_policy="never"', "-c", *table]
    opts += ["-m", model] if model else []
    opts += ["--trust", "--dangerously-bypass-hook-trust"] if own_hooks else []
    if session:
        return ["codex", "exec", "resume", *opts, session, message]
    return ["codex", "exec", *opts, "-c", "developer_instructions=" + json.dumps(rules), message]


def session_of(agent: str, log_text: str) -> str | None:
    """The session id a turn's event stream names."""
    for e in json_objects(log_text):
        sid = (e.get("session_id") if agent == "claude" else e.get("id") if agent == "pi" and
               e.get("type") == "session" else e.get("thread_id") if e.get("type") == "thread.started" else None)
        if sid:
            return str(sid)
    return None


def turn_env() -> dict[str, str]:
    """The environment of a headless turn (the chief's too)."""
    return _env()


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env[HEADLESS_ENV] = "1"
    # The lead's eighteen tools are few: Claude Code need not hide them behind its ToolSearch, and a turn
    # must not ask the model before the server is up.
    env.setdefault("ENABLE_TOOL_SEARCH", "false")
    env.update({k: v for k, v in MCP_WAIT.items() if k not in env})
    return env


# How Claude Code's `-p` waits for its MCP servers (2.1.x): with MCP_CONNECTION_NONBLOCKING=false it waits for
# them before it asks the model, but only MCP_CONNECT_TIMEOUT_MS (5 s unless set), then asks without the tools
# of a server still starting; MCP_TIMEOUT (30 s) is how long one server may take to connect at all. A loaded
# machine starts `git balanced mcp` in more than 5 s: both are set, so the first turn has the tools.
MCP_WAIT = {"MCP_CONNECTION_NONBLOCKING": "false", "MCP_CONNECT_TIMEOUT_MS": "120000", "MCP_TIMEOUT": "120000"}


def run_turn(lead: Lead, rec: dict[str, Any], message: str) -> dict[str, Any]:
    """Run one turn to its end; the record updated with its session, cost and last words."""
    d = folder(lead)
    began = time.time()
    since = float(rec.get("last_turn_ended_at") or began)  # the news this turn is handed came since then
    rec.update(state="in a turn", waits_on=None, last_turn_at=began)
    _save(lead, rec)
    argv = turn_argv(rec["agent"], message, rec.get("session"), d, rec.get("model"))
    ran = proc.run(argv, cwd=lead.repo.root, env=_env())
    code, out, err = ran.code, ran.out, ran.err
    with open(d / "turns.log", "a", encoding="utf-8") as log:
        log.write(f"--- turn {rec['turns'] + 1}: {message[:200]}\n{out}{err}")
    outcome = get(rec["agent"]).outcome(out + err, code)
    resumed = bool(rec.get("session"))
    rec["session"] = rec.get("session") or session_of(rec["agent"], out)
    rec["turns"] += 1
    cost = float(outcome.cost_usd or 0)
    if rec["agent"] in ("claude", "codex") and outcome.cost_usd is not None:
        # Claude Code reports a resumed session's cost so far, not the turn's, and Codex its tokens so far
        # (`exec resume`'s turn.completed counts the whole thread); Pi each reply's own. The turn is what it added.
        cost, rec["session_cost_usd"] = max(0.0, cost - float(rec.get("session_cost_usd") or 0) * resumed), cost
    rec["cost_usd"] = round(float(rec.get("cost_usd") or 0) + cost, 6)
    charge_plans(lead, rec, cost, min(since, began))
    rec["last_turn_ended_at"] = time.time()
    rec["last_words"] = outcome.summary
    rec["last_kind"] = outcome.kind
    rec["reset_at"] = outcome.reset_at if outcome.kind == "usage_limit" else None
    _save(lead, rec)
    # Its workers of the same agent start on its model (agents/lead_model.py).
    modes.remember_model(lead.repo, lead.branch, rec["agent"], rec.get("model") or lead_model.of_stream(
        rec["agent"], out), rec.get("session"), lead_session.owner_of(os.getpid()))  # this driver is its session
    return rec


def charge_plans(lead: Lead, rec: dict[str, Any], cost: float, began: float) -> None:
    """Share a turn's cost among the plans it worked for (those live when it began, or changed since the turn
    before ended: their news is what it was handed), so each plan's spend counts its lead's turns."""
    from git_balanced.jobs import all_plans

    if cost <= 0:
        return
    mine = sorted(pid for pid, p in all_plans(lead.repo).items() if p.lead == lead.branch and
                  (p.state in ("created", "started") or p.updated >= began))
    shares = rec.setdefault("plan_cost", {})
    for pid in mine:
        shares[pid] = round(float(shares.get(pid) or 0) + cost / len(mine), 6)


def poll_every() -> float:
    """Seconds between two looks at the inbox while the lead waits for news: knobs.LEAD_POLL (tests look more often:
    a look is a read of the inbox's ref; a person has no reason to)."""
    return knobs.seconds(knobs.LEAD_POLL)


def drive(lead: Lead, *, poll: float | None = None) -> int:
    """The driver's loop: the task, then each batch of news as a turn, until stopped; its inbox looked at every
    `poll` seconds (poll_every())."""
    from git_balanced.hooks.agent import lead_news

    poll = poll_every() if poll is None else poll

    rec = read(lead)
    if rec is None:
        raise BalancedError(f"No headless lead was started for {lead.branch}.",
                            hint='`git balanced lead start --agent claude "TASK"` starts one.')
    stopping = [False]
    signal.signal(signal.SIGTERM, lambda *_: stopping.__setitem__(0, True))
    message: str | None = rec["task"]
    while not stopping[0]:
        if message is not None:
            rec = run_turn(lead, rec, message)
            message = None
            if rec.get("last_kind") == "usage_limit":
                # As a worker waits: a minute past the reset, or an hour when the agent did not say when.
                until = float(rec.get("reset_at") or time.time() + accounts.unknown_reset()) + \
                    accounts.resume_margin()
                rec.update(state=LeadState.PAUSED, waits_on=f"its plan's usage limit (resumes at {time.ctime(until)})")
                _save(lead, rec)
                while not stopping[0] and time.time() < until:
                    time.sleep(min(poll, max(0.0, until - time.time())))
                message = CARRY_ON
                continue
        rec.update(state=LeadState.WAITING, waits_on="news in its inbox")
        _save(lead, rec)
        while not stopping[0] and message is None:
            message = lead_news(lead.repo)  # marks it handed over: each batch is one turn
            if message is None:
                time.sleep(poll)
    rec.update(state=LeadState.STOPPED, waits_on=None)
    _save(lead, rec)
    return 0
