"""Pi: `pi --mode json`; it prices each reply (`usage.cost.total`) but keeps no budget: the meter does."""

from __future__ import annotations

import re

from git_balanced.agents import modes
from git_balanced.agents.base import AgentRun, Outcome, crashed, short
from git_balanced.agents.base import budget_words as _budget_words
from git_balanced.files import json_objects
from git_balanced.shipped.messages import Reason
from git_balanced.shipped.meter import SUMMARY_EVENT

SIGNIN = re.compile(r"^(401|403)\b|no api key|api key (is )?(missing|required|not found)|unauthori[sz]ed|"
                    r"not logged in|log ?in|credentials", re.I)
# Printed as plain text before any event when the provider has no key: "No API key found for anthropic."
NO_KEY = re.compile(r"No API key found|Use /login", re.I)
TRANSIENT = re.compile(r"^(5\d\d|408|409|425)\b|overloaded|connection|terminated|timed? ?out|timeout|"
                       r"socket|network|fetch failed|ECONN|EAI_AGAIN|stream", re.I)


class PiAdapter:
    name = "pi"

    def build(self, *, task: str, rules: str, model: str | None, budget_usd: float | None,
              worktree: str, run_dir: str, edit_without_asking: bool = True,
              settings_json: str | None = None, level: str | None = None) -> AgentRun:
        """The `pi --mode json` command line of one worker held to `level` (agents/modes.py), and a meter for
        its budget."""
        argv = ["pi", "--mode", "json", "--no-session"]
        if model and "/" in model:
            provider, model = model.split("/", 1)
            argv += ["--provider", provider]
        if model:
            argv += ["--model", model]
        argv += modes.start_flags(self.name, level, edit_without_asking)  # Pi asks nothing: its extension asks
        if rules:
            argv += ["--append-system-prompt", rules]
        # Pi reads a leading "@" as a file to include and a leading "-" as an option.
        argv.append(" " + task if task.startswith(("@", "-")) else task)
        meter = {"format": "pi", "budget_usd": budget_usd}
        return AgentRun(argv=argv, env={}, files={}, meter=meter)

    def outcome(self, log_text: str, exit_code: int | None) -> Outcome:
        """Read the last assistant message (Pi exits 0 even when the model call failed)."""
        evs = json_objects(log_text)
        replies = [e["message"] for e in evs if e.get("type") == "message_end"
                   and isinstance(e.get("message"), dict) and e["message"].get("role") == "assistant"]
        tokens: dict[str, int] = {}
        cost = 0.0
        for reply in replies:
            usage = reply.get("usage") or {}
            for key, name in (("input", "input"), ("output", "output"), ("cacheRead", "cache_read"),
                              ("cacheWrite", "cache_write")):
                if isinstance(usage.get(key), (int, float)):
                    tokens[name] = tokens.get(name, 0) + int(usage[key])
            total = (usage.get("cost") or {}).get("total")
            if isinstance(total, (int, float)):
                cost += float(total)
        meter = next((e for e in reversed(evs) if e.get("type") == SUMMARY_EVENT), None)
        spent: float | None = cost if replies else None

        def done(kind: str, summary: str) -> Outcome:
            return Outcome(kind, spent, None, short(summary), [], tokens)

        last = replies[-1] if replies else None
        if last is not None and last.get("stopReason") == "stop":
            return done(Reason.SUCCESS, _text(last) or "the agent stopped")
        if meter and meter.get("over_budget"):
            return done(Reason.BUDGET, _budget_words(meter))
        if last is None and NO_KEY.search(log_text):
            return done(Reason.SIGNIN, next(line for line in log_text.splitlines() if NO_KEY.search(line)))
        if last is None or last.get("stopReason") != "error":
            return crashed(log_text, exit_code, spent, tokens)
        message = str(last.get("errorMessage") or "the model call failed")
        if message.startswith("429"):
            return done(Reason.USAGE_LIMIT, message)
        if SIGNIN.search(message):
            return done(Reason.SIGNIN, message)
        if TRANSIENT.search(message):
            return done(Reason.TRANSIENT, message)
        return done(Reason.FAILED, message)


def _text(message: dict) -> str:
    parts = [c.get("text", "") for c in message.get("content") or [] if isinstance(c, dict)
             and c.get("type") == "text"]
    return " ".join(p for p in parts if p)
