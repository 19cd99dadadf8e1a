"""Codex: `codex exec --json`; it reports tokens but no cost and keeps no budget, so the meter does both."""

from __future__ import annotations

import datetime as dt
import json
import re
import time

from git_balanced.agents import extra_usage, modes
from git_balanced.agents.base import AgentRun, Outcome, crashed, short
from git_balanced.agents.base import budget_words as _budget_words
from git_balanced.agents.prices import meter_prices, price
from git_balanced.files import json_objects
from git_balanced.shipped.messages import Reason
from git_balanced.shipped.meter import SUMMARY_EVENT

# "You’ve hit your usage limit. … try again at 9:43 AM." (curly apostrophe); a later day carries a date.
LIMIT = re.compile(r"hit your usage limit", re.I)
AGAIN = re.compile(r"try again at\s+(?:(?P<mon>[A-Z][a-z]{2,8})\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?,?\s+"
                   r"(?:(?P<year>\d{4})\s+)?)?(?P<h>\d{1,2}):(?P<m>\d{2})\s*(?P<ampm>[AP]M)?", re.I)
SIGNIN = re.compile(r"401|403|unauthori[sz]ed|not logged in|log ?in|sign ?in|api key|missing environment "
                    r"variable|auth\.json|refresh token", re.I)
TRANSIENT = re.compile(r"high demand|temporar|overloaded|stream disconnected|timed? ?out|connection|"
                       r"\b5\d\d\b|server error|internal error|rate limit|429|try again later|reconnect",
                       re.I)


class CodexAdapter:
    name = "codex"

    def __init__(self, model: str | None = None) -> None:
        self.model = model  # prices the tokens of a log that carries no meter line

    def build(self, *, task: str, rules: str, model: str | None, budget_usd: float | None,
              worktree: str, run_dir: str, edit_without_asking: bool = True,
              settings_json: str | None = None, level: str | None = None) -> AgentRun:
        """The `codex exec` command line of one worker held to `level` (agents/modes.py), and a meter for
        its budget."""
        self.model = model or self.model
        argv = ["codex", "exec", "--json", "-C", worktree, *modes.start_flags(self.name, level, edit_without_asking)]
        if model:
            argv += ["-m", model]
        if rules:
            # A TOML string (JSON's escapes are valid TOML): the rules go in as developer instructions.
            argv += ["-c", "developer_instructions=" + json.dumps(rules)]
        argv.append(task)
        meter = {"format": "codex", "budget_usd": budget_usd, "prices": meter_prices(model)}
        return AgentRun(argv=argv, env={}, files={}, meter=meter)

    def outcome(self, log_text: str, exit_code: int | None) -> Outcome:
        """Read the turn's end, its error and the meter line of a `codex exec --json` log."""
        evs = json_objects(log_text)
        tokens = _tokens(evs)
        meter = next((e for e in reversed(evs) if e.get("type") == SUMMARY_EVENT), None)
        metered = meter.get("cost_usd") if meter else None
        cost = float(metered) if metered is not None else self._price(tokens)
        end = next((e for e in reversed(evs) if e.get("type") in ("turn.completed", "turn.failed")), None)
        said = [e["item"].get("text", "") for e in evs
                if e.get("type") == "item.completed" and (e.get("item") or {}).get("type") == "agent_message"]
        errors = [str(e.get("message", "")) for e in evs if e.get("type") == "error"]
        if end is not None and end["type"] == "turn.failed":
            errors.append(str((end.get("error") or {}).get("message", "")))

        windows = _windows(meter)

        def done(kind: str, summary: str, reset_at: float | None = None) -> Outcome:
            return Outcome(kind, cost, reset_at, short(summary), windows, tokens)

        if end is not None and end["type"] == "turn.completed":
            return done(Reason.SUCCESS, said[-1] if said else "the turn completed")
        if meter and meter.get("over_budget"):
            return done(Reason.BUDGET, _budget_words(meter))
        message = next((m for m in reversed(errors) if m), "")
        if not message:
            return crashed(log_text, exit_code, cost, tokens)
        if LIMIT.search(message):
            # The window the refusal filled gives the exact second; the message names only the minute.
            full = [float(w["resets_at"]) for w in windows if w.get("resets_at") and w["used_percent"] >= 100]
            return done(Reason.USAGE_LIMIT, message, max(full) if full else reset_time(message))
        if SIGNIN.search(message):
            return done(Reason.SIGNIN, message)
        if TRANSIENT.search(message):
            return done(Reason.TRANSIENT, message)
        return done(Reason.FAILED, message)

    def _price(self, tokens: dict) -> float | None:
        if not tokens:
            return None
        _, (inp, cached, out) = price(self.model)
        fresh = max(0, tokens.get("input", 0) - tokens.get("cached", 0))
        return (fresh * inp + tokens.get("cached", 0) * cached + tokens.get("output", 0) * out) / 1_000_000


# Codex names its windows primary and secondary; their length says which is which.
WINDOW_KINDS = {300: "five_hour", 10080: "seven_day"}


def _windows(meter: dict | None) -> list[dict]:
    """The plan windows the meter read from Codex's session file, named as Claude names them, and extra usage
    (agents/extra_usage.py) when a spent window goes on on the account's credits."""
    out = []
    for w in (meter or {}).get("windows") or []:
        minutes = w.get("window_minutes")
        kind = WINDOW_KINDS.get(int(minutes), f"{minutes}_minute") if minutes else str(w.get("type"))
        out.append({"type": kind, "used_percent": float(w["used_percent"]), "resets_at": w.get("resets_at")})
    extra = extra_usage.from_codex(out, (meter or {}).get("credits"))
    return out + ([extra] if extra else [])


def _tokens(evs: list[dict]) -> dict:
    total: dict[str, int] = {}
    for e in evs:
        if e.get("type") != "turn.completed":
            continue
        usage = e.get("usage") or {}
        for key, name in (("input_tokens", "input"), ("cached_input_tokens", "cached"),
                          ("output_tokens", "output"), ("reasoning_output_tokens", "reasoning")):
            total[name] = total.get(name, 0) + int(usage.get(key) or 0)
    return total


def reset_time(message: str, now: float | None = None) -> float | None:
    """The epoch time of "try again at 9:43 AM" (the next such local time), or of a dated form."""
    m = AGAIN.search(message)
    if not m:
        return None
    hour, minute = int(m["h"]), int(m["m"])
    if m["ampm"]:
        hour = hour % 12 + (12 if m["ampm"].upper() == "PM" else 0)
    current = dt.datetime.fromtimestamp(time.time() if now is None else now).astimezone()
    if m["mon"]:
        try:
            month = dt.datetime.strptime(m["mon"][:3], "%b").month
        except ValueError:
            return None
        year = int(m["year"]) if m["year"] else current.year
        when = current.replace(year=year, month=month, day=int(m["day"]), hour=hour, minute=minute,
                               second=0, microsecond=0)
        return when.timestamp()
    when = current.replace(hour=hour, minute=minute, second=0, microsecond=0)
    # The minute is cut, not rounded: a reset later in this very minute reads as this minute, not tomorrow.
    if when <= current - dt.timedelta(minutes=1):
        when += dt.timedelta(days=1)
    return when.timestamp()
