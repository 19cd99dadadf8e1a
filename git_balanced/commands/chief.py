"""`git balanced chief start|on|off|status|stop`: the chief, one agent session over every project's lead; and
what the chief runs in a project (`chief held|tell|reply|hand`, the chief's side of its tools there)."""

from __future__ import annotations

from typing import Any

from git_balanced import ui
from git_balanced.commands.lead import NAMES
from git_balanced.lead import open_checkout, open_lead
from git_balanced.vocab import LeadState


def start_command(agent: str, text: str, model: str | None, pass_after: float) -> int:
    """Start the headless chief in the chief's folder."""
    from git_balanced.chief import home, session

    rec = session.start(agent, text, model=model, pass_after=pass_after)
    ui.say(f"The chief ({NAMES[agent]}) runs in the background (pid {rec['pid']}) in {home.folder()}. Its first "
           "turn is your text; then each question a lead passes on is its next turn, and one it leaves unanswered "
           f"for {int(pass_after)} s comes to you.")
    ui.say("`git balanced chief status` shows it; `git balanced now --all` shows what waits on you; "
           "`git balanced chief stop` ends it.")
    return 0


def on_command(agent: str) -> int:
    """Make the agent's sessions in the chief's folder chiefs."""
    from git_balanced.chief import home, kit

    done = kit.chief_on(agent)
    ui.table([(what, str(path)) for path, what in done], indent=2, least=(12,))
    ui.say(f"{NAMES[agent]}'s sessions in {home.folder()} are chiefs: start `{kit.START[agent]}` there. "
           "`git balanced chief off` takes these files away.")
    return 0


def off_command(agent: str | None) -> int:
    """Take away what `chief on` wrote."""
    from git_balanced.chief import kit

    done = kit.chief_off(agent)
    ui.table([(what, str(path)) for path, what in done], indent=2, least=(12,))
    ui.say("The chief's files were taken away." if done else "No chief's files were there.")
    return 0


def status_command(*, as_json: bool) -> int:
    """The headless chief: its session, turns, spend, and what it waits on."""
    from git_balanced.chief import session

    rec = session.read()
    if rec is None:
        if as_json:
            ui.emit_json(None)
        else:
            ui.say("No chief was started. `git balanced chief start --agent claude` starts one.")
        return 0
    running = session.alive(rec)
    data: dict[str, Any] = {**rec, "running": running}
    if not running and rec["state"] != LeadState.STOPPED:
        data["state"] = "ended"
    if as_json:
        ui.emit_json(data)
        return 0
    ui.say(f"Chief: {NAMES[rec['agent']]}, {data['state']}" + (f" (pid {rec['pid']})" if running else ""))
    passes = f"  passes on what it leaves unanswered for {int(float(rec.get('pass_after') or 600))} s"
    for line in ui.session_lines(rec, running, told="told", between=[passes]):
        ui.say(line)
    return 0


def stop_command() -> int:
    """End the headless chief."""
    from git_balanced.chief import session

    rec = session.stop()
    turns = f"{rec['turns']} turn{'s' if rec['turns'] != 1 else ''}"
    ui.say(f"Stopped the chief (pid {rec['pid']}) after {turns}. The leads go on; what they pass on comes to you "
           "again.")
    return 0


def run_command() -> int:
    """The headless chief's driver (what `chief start` runs in the background)."""
    from git_balanced.chief import session

    return session.drive()


# -- in a project: the chief's side of its tools -----------------------------------------------------------
def held_command(*, as_json: bool, pass_after: float, since: str | None = None, wait: float = 0.0) -> int:
    """The questions this project's lead passed on to the chief (marks the chief seen here); with `since`, only
    when anything changed since that stamp, waiting up to `wait` seconds for a change."""
    from git_balanced.channel.tochief import held, held_since
    from git_balanced.errors import UsageError

    if wait and since is None:
        raise UsageError("--wait goes with --since: it waits for a change since that stamp.",
                         hint="git balanced chief held --json --since STAMP --wait 50 (STAMP: the last answer's "
                              "`stamp`, or '' the first time)")
    found = held(open_lead(), pass_after) if since is None else held_since(open_lead(), pass_after, since, wait)
    if as_json:
        ui.emit_json(found)
        return 0
    if found.get("unchanged"):
        ui.say(f"Nothing changed here since {since}.")
        return 0
    for q in found["questions"]:
        ui.say(f"{q['qid']} {q['piece']} asks: {q['text']}")
    for r in found["reviews"]:
        ui.say(f"{r['row']} ({r['id']}) waits on you: {r['summary']}")
    if not found["questions"] and not found["reviews"]:
        ui.say("Nothing waits on the chief here.")
    return 0


def look_command(*, as_json: bool) -> int:
    """This project's board and headless lead, as the chief's `projects` tool reads them."""
    from git_balanced.chief.tools import look

    got = look(open_lead())
    if as_json:
        ui.emit_json(got)
        return 0
    lead, board = got["lead"], got["board"]
    ui.say(f"Lead of {board['lead']}: " + (f"{NAMES.get(str(lead['agent']), lead['agent'])}, {lead['state']}, started "
                                         f"by {lead['started_by'] or 'you'}" if lead else "no headless lead"))
    ui.say(f"  workers   {len(board['jobs'])}; {len(board['now'])} wait on you (`git balanced board` shows them)")
    return 0


def tell_command(text: str, *, as_json: bool) -> int:
    """A line from the chief into this branch's lead's inbox."""
    from git_balanced.channel import inbox
    from git_balanced.channel.tochief import SAYS
    from git_balanced.errors import UsageError

    if not text.strip():
        raise UsageError("Tell the lead something: TEXT is empty.", hint='git balanced chief tell "Ship orders first"')
    lead = open_lead()
    entry = inbox.post(lead.repo, lead.branch, SAYS + text.strip(), kind="chief")
    if as_json:
        ui.emit_json({"lead": lead.branch, "entry": entry[:12], "text": SAYS + text.strip()})
    else:
        ui.say(f"Told the lead of {lead.branch}: {SAYS}{text.strip()}")
    return 0


def reply_command(qid: str, text: str, *, as_json: bool) -> int:
    """The chief's answer to a question passed on to it."""
    from git_balanced.channel.tochief import reply

    f = reply(open_checkout(), qid, text)
    return _said(f, as_json, f"Answered {qid} ({f.get('piece')}): {f.get('answer')}")


def hand_command(qid: str, *, as_json: bool) -> int:
    """The chief hands a question passed on to it to you."""
    from git_balanced.channel.tochief import hand_to_you

    f = hand_to_you(open_checkout(), qid)
    return _said(f, as_json, f"Passed {qid} ({f.get('piece')}) to you: it shows under Now.")


def _said(f: dict[str, Any], as_json: bool, words: str) -> int:
    if as_json:
        ui.emit_json({k: f.get(k) for k in ("qid", "piece", "job", "lead", "text", "answer", "answered_by")})
    else:
        ui.say(words)
    return 0
