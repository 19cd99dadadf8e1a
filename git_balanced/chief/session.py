"""The headless chief: `git balanced chief start --agent A [TEXT]` runs the chief agent itself in the chief's
folder, with the chief's tools, and drives its turns as a headless lead's are driven (kit/headless.py).

The first turn is TEXT (or a look over the projects). Then the driver reads what changed in each project (the
questions its lead passed on to the chief, the reviews put to you: chief/news.py) and posts the new ones to the
chief's inbox (`refs/balanced/inbox/chief` in the chief's repository, chief/passon.py); each batch of news is the
chief's next turn on the same session. Nothing new, no turn. A turn refused for the plan's usage limit pauses it
until the limit resets.
What it does is kept in `.git/balanced/lead/chief/chief.json` of the chief's folder, each turn in `turns.log`.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import time
from pathlib import Path
from typing import Any

from git_balanced import knobs, proc
from git_balanced.agents import get
from git_balanced.bundled import template_text
from git_balanced.channel import presence
from git_balanced.chief import home, news
from git_balanced.errors import BalancedError
from git_balanced.files import write_atomic
from git_balanced.git import Repo
from git_balanced.kit import headless
from git_balanced.kit.project import ARGV
from git_balanced.machines.placing import accounts
from git_balanced.vocab import LeadState

INBOX = "chief"  # the chief's inbox: refs/balanced/inbox/chief in its repository
RECORD = "chief.json"
PASS_AFTER = 600.0  # seconds a question passed on to the chief waits for it before it comes to the person
FIRST = ("Look over the projects (the `projects` tool) and say in a few lines how they are doing. Then wait: "
         "questions the leads pass on to you come as your next turns.")


def folder(repo: Repo | None = None) -> Path:
    """Where the chief's record, instructions and turns are kept."""
    return presence.lead_dir(repo or home.repo(), INBOX)


def read() -> dict[str, Any] | None:
    """The headless chief's record, or None when none was started."""
    try:
        rec = json.loads((folder() / RECORD).read_text())
    except (FileNotFoundError, ValueError):
        return None
    return rec if isinstance(rec, dict) else None


def save(rec: dict[str, Any]) -> None:
    write_atomic(folder() / RECORD, json.dumps(rec, indent=2) + "\n")


def alive(rec: dict[str, Any] | None) -> bool:
    """Whether the record's driver still runs."""
    return presence.driver_alive(rec)


def instructions() -> str:
    """The chief's instructions (templates/chief.md)."""
    return template_text("chief.md")


def write_kit(d: Path, agent: str) -> None:
    """The chief's instructions, MCP config, hook settings and (Pi) extension, in its folder `d`."""
    write_atomic(d / "instructions.md", instructions())
    ours = proc.ours("git_balanced.cli")  # this git balanced, never a `git_balanced/` in the folder it starts in
    write_atomic(d / "mcp.json", json.dumps({"mcpServers": {"balanced": {
        "command": ours[0], "args": [*ours[1:], "mcp", "--chief"]}}}) + "\n")
    write_atomic(d / "settings.json", chief_settings(json.dumps(ours)))
    if agent == "pi":
        write_atomic(d / "balanced-lead.ts", pi_extension(ours))
    if agent == "codex":  # Codex reads hooks from the folder it runs in only: the chief's folder
        hooks = home.folder() / ".codex" / "hooks.json"
        hooks.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(hooks, codex_hooks(list(ARGV)))  # as `chief on --agent codex` writes it


def chief_settings(argv_json: str) -> str:
    """Claude Code's settings for the chief: its PreToolUse hook, which refuses what the chief never does."""
    command = shlex.join(json.loads(argv_json)) + " hook chief-pre-tool-use"
    return json.dumps({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": command,
                                                             "timeout": 60}]}]}}, indent=2) + "\n"


def codex_hooks(argv: list[str]) -> str:
    """Codex's `.codex/hooks.json` for the chief: its PreToolUse hook, which refuses what the chief never does."""
    command = shlex.join(argv) + " hook chief-pre-tool-use"
    return json.dumps({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
        {"type": "command", "command": command, "timeout": 60}]}]}}, indent=2) + "\n"


def pi_extension(argv: list[str] | None = None) -> str:
    """Pi's extension for the chief: its tools (each a `git balanced mcp --chief --call`) and its refusals."""
    from git_balanced.chief.verbs import CHIEF_VERBS
    from git_balanced.kit.server import tool_specs

    text = template_text("pi-chief.ts").replace("{tools}", json.dumps(tool_specs(CHIEF_VERBS), indent=2))
    return text.replace("{balanced_argv}", json.dumps(argv or ARGV))


def start(agent: str, text: str, *, model: str | None = None, pass_after: float = PASS_AFTER) -> dict[str, Any]:
    """Start the headless chief; refuses while one runs."""
    if agent not in headless.AGENTS:
        raise BalancedError(f"There is no headless chief for the agent {agent!r}.", hint="one of: claude, codex, pi.")
    old = read()
    if old is not None and alive(old):
        raise BalancedError(f"A chief runs already (pid {old['pid']}, {old['agent']}).",
                            hint="`git balanced chief status` shows it; `git balanced chief stop` ends it.")
    d = folder()
    write_kit(d, agent)
    rec = {"agent": agent, "task": text.strip() or FIRST, "model": model, "session": None, "pid": None,
           "state": "starting", "turns": 0, "cost_usd": 0.0, "started_at": time.time(), "last_turn_at": None,
           "last_words": "", "reset_at": None, "waits_on": "its first turn", "pass_after": float(pass_after)}
    save(rec)
    rec.update(presence.driver(proc.spawn_ours("git_balanced.cli", ["chief", "run"], cwd=home.folder(),
                                               log=d / "driver.log")))
    save(rec)
    return rec


def stop() -> dict[str, Any]:
    """End the headless chief (its driver and the turn it is in)."""
    rec = read()
    if rec is None or not alive(rec):
        raise BalancedError("No chief runs.", hint="start one with `git balanced chief start --agent claude`.")
    os.killpg(int(rec["pid"]), signal.SIGTERM)
    end = time.monotonic() + 10
    while alive(rec) and time.monotonic() < end:
        time.sleep(0.1)
        try:
            os.waitpid(int(rec["pid"]), os.WNOHANG)
        except ChildProcessError:
            pass
    rec = read() or rec
    rec.update(state=LeadState.STOPPED, waits_on=None)
    save(rec)
    return rec


def run_turn(rec: dict[str, Any], message: str) -> dict[str, Any]:
    """Run one turn of the chief to its end; the record updated with its session, cost and last words."""
    d = folder()
    rec.update(state="in a turn", waits_on=None, last_turn_at=time.time())
    save(rec)
    argv = headless.turn_argv(rec["agent"], message, rec.get("session"), d, rec.get("model"),
                              server=("mcp", "--chief"), own_hooks=rec["agent"] == "codex")
    ran = proc.run(argv, cwd=home.folder(), env=headless.turn_env())
    with open(d / "turns.log", "a", encoding="utf-8") as log:
        log.write(f"--- turn {rec['turns'] + 1}: {message[:200]}\n{ran.out}{ran.err}")
    outcome = get(rec["agent"]).outcome(ran.out + ran.err, ran.code)
    resumed = bool(rec.get("session"))
    rec["session"] = rec.get("session") or headless.session_of(rec["agent"], ran.out)
    rec["turns"] += 1
    cost = float(outcome.cost_usd or 0)
    if rec["agent"] in ("claude", "codex") and outcome.cost_usd is not None:  # a resumed session's total so far
        cost, rec["session_cost_usd"] = max(0.0, cost - float(rec.get("session_cost_usd") or 0) * resumed), cost
    rec["cost_usd"] = round(float(rec.get("cost_usd") or 0) + cost, 6)
    rec.update(last_words=outcome.summary, last_kind=outcome.kind,
               reset_at=outcome.reset_at if outcome.kind == "usage_limit" else None)
    save(rec)
    return rec


def _pause(rec: dict[str, Any], stopping: list[bool], poll: float) -> None:
    """Wait out the plan's usage limit: a minute past its reset, or an hour when the agent did not say when."""
    until = float(rec.get("reset_at") or time.time() + accounts.unknown_reset()) + accounts.resume_margin()
    rec.update(state=LeadState.PAUSED, waits_on=f"its plan's usage limit (resumes at {time.ctime(until)})")
    save(rec)
    while not stopping[0] and time.time() < until:
        time.sleep(min(poll, max(0.0, until - time.time())))


def look_every() -> float:
    """Seconds between two looks over the projects while the chief waits for news: knobs.CHIEF_LOOK (tests look
    more often: a look at a project here is a few stat calls; a person has no reason to)."""
    return knobs.seconds(knobs.CHIEF_LOOK)


def drive(*, poll: float = 1.0, every: float | None = None) -> int:
    """The driver's loop: the first turn, then each batch of news (the questions passed on) as a turn. Its news
    is read as chief/news.py says: only what changed, in this process for a project here; a look every
    `every` seconds (look_every()), the chief's inbox every `poll` seconds (or as often as it looks)."""
    from git_balanced.chief import passon

    every = look_every() if every is None else every
    poll = min(poll, every)

    rec = read()
    if rec is None:
        raise BalancedError("No chief was started.", hint="`git balanced chief start --agent claude` starts one.")
    stopping = [False]
    signal.signal(signal.SIGTERM, lambda *_: stopping.__setitem__(0, True))
    message: str | None = rec["task"]
    watch = news.Watch(float(rec.get("pass_after") or PASS_AFTER))
    _look(watch)  # seen in every project from its first turn
    looked, tip = time.monotonic(), None
    while not stopping[0]:
        if message is not None:
            rec = run_turn(rec, message)
            message = None
            if rec.get("last_kind") == "usage_limit":
                _pause(rec, stopping, poll)
                message = headless.CARRY_ON
                continue
        rec.update(state=LeadState.WAITING, waits_on="questions the leads pass on")
        save(rec)
        while not stopping[0] and message is None:
            if time.monotonic() - looked >= every:
                _look(watch)
                looked = time.monotonic()
            came, tip = passon.moved(tip, watch.home)
            message = passon.news() if came else None
            if message is None:
                time.sleep(poll)
    watch.stop()
    rec.update(state=LeadState.STOPPED, waits_on=None)
    save(rec)
    return 0


def _look(watch: news.Watch) -> None:
    """One look over the projects: what changed posted to the chief's inbox, once each."""
    from git_balanced.chief import passon

    found, lines = watch.look()
    for project, held in found:
        passon.post(watch.home, project, held)
    if lines:
        passon.tell(lines)
