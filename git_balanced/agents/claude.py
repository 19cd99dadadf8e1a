"""Claude Code: `claude -p` with the stream-json event log; the CLI keeps its own budget and cost."""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from collections.abc import Iterable
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from git_balanced.agents import extra_usage, modes
from git_balanced.agents.base import AgentRun, Outcome, crashed, short
from git_balanced.agents.subagents import BACKGROUND_WAIT, subagents
from git_balanced.files import json_objects
from git_balanced.shipped.messages import Reason

SETTINGS_FILE = "claude-settings.json"
# A worker that shows its plan first: `claude -p` leaves plan mode only through a permission prompt tool, an MCP
# tool; the run's own stdlib server (shipped/permit.py, in {run_dir}/bin, on any machine) asks the lead.
PERMIT_TOOL = "mcp__balanced_worker__approve"
PERMIT_SERVER = {"mcpServers": {"balanced_worker": {"command": "python3", "args": ["{run_dir}/bin/permit.py"]}}}

SIGNIN_ERRORS = {"authentication_failed", "oauth_org_not_allowed", "billing_error"}
SIGNIN_TEXTS = ("Not logged in", "Invalid API key")
# The refusal of a plan's limit in words, "You've hit your 5-hour limit · resets 10:50am (UTC)": the CLI
# leaves out its rate_limit_event when the reset it was told has passed by the time it reads it.
LIMIT_TEXT = re.compile(r"You(?:'|’)ve hit your [^·\n]*limit")
RESETS = re.compile(r"resets (?:(?P<mon>[A-Z][a-z]{2}) (?P<day>\d{1,2}),? (?:(?P<year>\d{4}),? )?)?"
                    r"(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s?(?P<ampm>[ap]m)(?: \((?P<tz>[^)]+)\))?", re.IGNORECASE)


class ClaudeAdapter:
    name = "claude"

    def build(self, *, task: str, rules: str, model: str | None, budget_usd: float | None,
              worktree: str, run_dir: str, edit_without_asking: bool = True,
              settings_json: str | None = None, level: str | None = None, plan_first: bool = False) -> AgentRun:
        """The `claude -p` command line of one worker held to `level` (agents/modes.py); with plan_first, in
        plan mode, its plan to the lead."""
        argv = ["claude", "-p", task, "--output-format", "stream-json", "--verbose"]
        if model:
            argv += ["--model", model]
        flags = modes.start_flags(self.name, level, edit_without_asking)
        if plan_first:  # plan mode shows the plan first; the tools allowed after are still the level's
            flags[flags.index("--permission-mode") + 1] = "plan"
        argv += flags
        env = {"DISABLE_AUTOUPDATER": "1", **BACKGROUND_WAIT}
        if plan_first:
            argv += ["--mcp-config", json.dumps(PERMIT_SERVER), "--permission-prompt-tool", PERMIT_TOOL]
            env["GIT_BALANCED_PLAN_BY_PERMIT"] = "1"  # the hook leaves the plan to the tool: asked once
        if budget_usd is not None:
            argv += ["--max-budget-usd", f"{budget_usd:.4f}"]
        if rules:
            argv += ["--append-system-prompt", rules]
        files = {}
        if settings_json is not None:
            files[SETTINGS_FILE] = settings_json
            argv += ["--settings", "{run_dir}/" + SETTINGS_FILE]
        # A worker must not update the CLI under the feet of the workers beside it. Its subagents run in the
        # background, and the CLI waits for their reports before it ends (agents/subagents.py).
        return AgentRun(argv=argv, env=env, files=files, meter=None)

    def outcome(self, log_text: str, exit_code: int | None) -> Outcome:
        """Read the result event, the rate-limit events and API errors of a stream-json log; a refusal for the
        plan's limit is one even without its rate_limit_event (by its typed error, or by its words)."""
        evs = json_objects(log_text)
        windows, rejected = _windows(evs)
        result = next((e for e in reversed(evs) if e.get("type") == "result"), None)
        api_error = next((e for e in reversed(evs) if e.get("type") == "assistant" and e.get("error")), None)
        if result is None:
            return crashed(log_text, exit_code)
        cost = result.get("total_cost_usd")
        cost = float(cost) if isinstance(cost, (int, float)) else None
        # Each turn a subagent's report started ends in a `result` of its own: the tokens are their sum.
        tokens = _summed(_tokens(e.get("usage") or {}) for e in evs if e.get("type") == "result")
        text = str(result.get("result") or "")
        errors = result.get("errors") or []
        summary = short(text or "; ".join(map(str, errors)) or result.get("subtype", ""))

        helpers = subagents(evs)

        def done(kind: str, reset_at: float | None = None) -> Outcome:
            return Outcome(kind, cost, reset_at, summary, windows, tokens, helpers)

        subtype = result.get("subtype")
        if rejected is not None:
            return done(Reason.USAGE_LIMIT, rejected)
        said = text or _content_text(api_error)
        if "usage_limit_reached" in (result.get("api_error"), (api_error or {}).get("api_error")) \
                or (result.get("is_error") and LIMIT_TEXT.search(said)):
            return done(Reason.USAGE_LIMIT, _refused_until(api_error) or reset_time(said, _when(api_error)))
        if subtype == "error_max_budget_usd" or result.get("terminal_reason") == "budget_exhausted":
            return done(Reason.BUDGET)
        if subtype == "error_max_turns" or result.get("terminal_reason") == "max_turns":
            return done(Reason.TURNS)
        if not result.get("is_error") and subtype == "success":
            if helpers.get("unfinished"):  # its turn ended with its own subagents still at work: not finished
                n = helpers["unfinished"]
                summary = short(f"its turn ended while {n} of its subagents still ran, so they were stopped; "
                                + summary)
                return done(Reason.FAILED)
            return done(Reason.SUCCESS)
        status = result.get("api_error_status")
        error = (api_error or {}).get("error")
        if error in SIGNIN_ERRORS or status in (401, 403) or text.startswith(SIGNIN_TEXTS):
            return done(Reason.SIGNIN)
        # A refused connection also reads as error "server_error" with no status.
        if error in ("rate_limit", "server_error", "overloaded") or (
                isinstance(status, int) and (status == 429 or status >= 500)):
            return done(Reason.TRANSIENT)
        return done(Reason.FAILED)


def _windows(evs: list[dict]) -> tuple[list[dict], float | None]:
    """Usage windows from `rate_limit_event`s (extra usage as one more: agents/extra_usage.py), and the reset
    time when one said the plan refused."""
    seen: dict[str, dict] = {}
    rejected: float | None = None
    for e in evs:
        if e.get("type") != "rate_limit_event":
            continue
        info = e.get("rate_limit_info") or {}
        per_window = dict(info.get("unifiedWindows") or {})
        kind = info.get("rateLimitType")
        if kind and kind not in per_window:
            per_window[kind] = {"utilization": info.get("utilization"), "resetsAt": info.get("resetsAt")}
        for name, w in per_window.items():
            used = w.get("utilization")
            seen[name] = {"type": name,
                          "used_percent": round(float(used) * 100, 1) if used is not None else None,
                          "resets_at": w.get("resetsAt")}
        extra = extra_usage.from_claude(info)
        if extra is not None:  # the plan's window is spent, and extra usage (paid) served the request
            seen[extra_usage.EXTRA] = extra
        elif info.get("status") == "rejected" and info.get("resetsAt"):
            rejected = float(info["resetsAt"])
    return list(seen.values()), rejected


def _refused_until(api_error: dict | None) -> float | None:
    """The reset the refused request's own answer gave (`api_error_params.rate_limit_info.resetsAt`)."""
    params = (api_error or {}).get("api_error_params") or {}
    reset = (params.get("rate_limit_info") or {}).get("resetsAt") if isinstance(params, dict) else None
    return float(reset) if isinstance(reset, (int, float)) else None


def _content_text(event: dict | None) -> str:
    content = ((event or {}).get("message") or {}).get("content") or []
    return " ".join(str(c.get("text", "")) for c in content if isinstance(c, dict))


def _when(event: dict | None) -> float | None:
    """The moment an event was written (its ISO `timestamp`), or None."""
    stamp = (event or {}).get("timestamp")
    try:
        return dt.datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp() if stamp else None
    except ValueError:
        return None


def reset_time(text: str, now: float | None = None) -> float | None:
    """The epoch time of "resets 10:50am (UTC)" or "resets Dec 3, 9am (Europe/Paris)": a time alone is the
    next such time after `now` (the refusal's moment), counting the minute it names as not yet past."""
    m = RESETS.search(text)
    if not m:
        return None
    try:
        zone: dt.tzinfo | None = ZoneInfo(m["tz"]) if m["tz"] else None
    except (ZoneInfoNotFoundError, ValueError):
        zone = None
    current = dt.datetime.fromtimestamp(time.time() if now is None else now, zone).astimezone(zone)
    hour = int(m["h"]) % 12 + (12 if m["ampm"].lower() == "pm" else 0)
    minute = int(m["m"] or 0)
    if m["mon"]:
        try:
            month = dt.datetime.strptime(m["mon"], "%b").month
            when = current.replace(year=int(m["year"] or current.year), month=month, day=int(m["day"]),
                                   hour=hour, minute=minute, second=0, microsecond=0)
        except ValueError:
            return None
        return when.timestamp()
    when = current.replace(hour=hour, minute=minute, second=0, microsecond=0)
    # The CLI cuts the seconds off: a reset named for this very minute is this minute, not tomorrow.
    if when <= current - dt.timedelta(minutes=1):
        when += dt.timedelta(days=1)
    return when.timestamp()


def _summed(parts: Iterable[dict]) -> dict:
    total: dict = {}
    for part in parts:
        for key, n in part.items():
            total[key] = total.get(key, 0) + n
    return total


def _tokens(usage: dict) -> dict:
    names = {"input_tokens": "input", "output_tokens": "output", "cache_read_input_tokens": "cache_read",
             "cache_creation_input_tokens": "cache_write"}
    return {short_name: int(usage[key]) for key, short_name in names.items()
            if isinstance(usage.get(key), (int, float))}
