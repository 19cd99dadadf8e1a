"""A running cost meter over an agent's event log, for agents that keep no budget of their own.

Stdlib only and free of package imports: the runner sends this file to remote machines. The runner feeds
every log line to `feed`, stops the agent (SIGTERM) once `over_budget` is true, and after the agent exits
appends `summary_line()` to the log, so the adapter reads the cost and the budget stop from the log alone.

Spec (JSON):
  {"format": "pi", "budget_usd": 2.0}
      Pi: the sum of `usage.cost.total` over assistant `message_end` events.
  {"format": "codex", "budget_usd": 2.0, "prices": {"input": 5.0, "cached_input": 0.5, "output": 30.0},
   "sessions": "~/.codex/sessions"}      (sessions: optional, default $CODEX_HOME/sessions)
      Codex: tokens x prices (USD per million). `codex exec --json` reports tokens only when its turn ends,
      so the meter also follows the session's rollout file (named by the thread id of `thread.started`,
      under `sessions`), whose `token_count` events carry the running total after every model reply, and
      the plan's usage windows (`rate_limits`) that `codex exec --json` never prints: the summary line
      carries them as `windows`.
"""

from __future__ import annotations

import glob
import json
import os
import time

SUMMARY_EVENT = "balanced.meter"


class Meter:
    def __init__(self, spec: dict) -> None:
        self.format = spec.get("format", "")
        budget = spec.get("budget_usd")
        self.budget = float(budget) if budget is not None else None
        self.prices = spec.get("prices") or {}
        # Codex keeps its sessions under $CODEX_HOME, read on the machine that runs it.
        self.sessions = spec.get("sessions") or os.path.join(
            os.environ.get("CODEX_HOME") or os.path.expanduser("~/.codex"), "sessions")
        self._pi_total = 0.0
        self._log_tokens = {"input": 0, "cached": 0, "output": 0}  # from turn.completed, summed over turns
        self._live_tokens = {"input": 0, "cached": 0, "output": 0}  # the rollout's running total
        self._thread: str | None = None
        self._rollout: str | None = None
        self._offset = 0
        self._partial = ""
        self._last_poll = 0.0
        self._limits: dict = {}  # Codex: the plan's usage windows, from the rollout's `rate_limits`

    def feed(self, line: str) -> None:
        """Take one line of the agent's log (non-JSON lines are ignored)."""
        event = _meter_json(line)
        if event is None:
            return
        kind = event.get("type")
        if self.format == "pi":
            message = event.get("message") or {}
            if kind == "message_end" and message.get("role") == "assistant":
                cost = ((message.get("usage") or {}).get("cost") or {}).get("total")
                if isinstance(cost, (int, float)):
                    self._pi_total += float(cost)
        elif self.format == "codex":
            if kind == "thread.started" and event.get("thread_id"):
                self._thread = str(event["thread_id"])
            elif kind == "turn.completed":
                usage = event.get("usage") or {}
                self._log_tokens["input"] += int(usage.get("input_tokens") or 0)
                self._log_tokens["cached"] += int(usage.get("cached_input_tokens") or 0)
                self._log_tokens["output"] += int(usage.get("output_tokens") or 0)

    @property
    def tokens(self) -> dict:
        """Tokens seen so far (Codex): the larger of the log's and the rollout's counts."""
        return {k: max(self._log_tokens[k], self._live_tokens[k]) for k in self._log_tokens}

    @property
    def cost_usd(self) -> float:
        """The cost so far, in USD."""
        if self.format == "pi":
            return self._pi_total
        self._poll()
        t = self.tokens
        p = self.prices
        fresh = max(0, t["input"] - t["cached"])
        return (fresh * float(p.get("input", 0)) + t["cached"] * float(p.get("cached_input", 0))
                + t["output"] * float(p.get("output", 0))) / 1_000_000

    @property
    def over_budget(self) -> bool:
        """True once the cost has reached the budget (never without one)."""
        return self.budget is not None and self.cost_usd >= self.budget

    def summary_line(self) -> str:
        """The `balanced.meter` event the runner appends to the log when the agent has exited."""
        self._last_poll = 0.0  # read the rollout to its end first
        cost = round(self.cost_usd, 6)
        return json.dumps({"type": SUMMARY_EVENT, "cost_usd": cost, "budget_usd": self.budget,
                           "over_budget": self.over_budget, "tokens": self.tokens, "windows": self.windows,
                           "credits": self.credits})

    @property
    def credits(self) -> dict | None:
        """Codex's account credits as last reported ({"has_credits", "unlimited", "balance"}), or None."""
        found = self._limits.get("credits")
        return found if isinstance(found, dict) else None

    @property
    def windows(self) -> list:
        """Codex's plan windows as last reported: {"type", "used_percent", "window_minutes", "resets_at"}."""
        out = []
        for name in ("primary", "secondary"):
            w = self._limits.get(name)
            if isinstance(w, dict) and w.get("used_percent") is not None:
                out.append({"type": name, "used_percent": w.get("used_percent"),
                            "window_minutes": w.get("window_minutes"), "resets_at": w.get("resets_at")})
        return out

    def _poll(self) -> None:
        """Read what the Codex rollout file gained since the last look (at most twice a second)."""
        if self.format != "codex" or not self.sessions or not self._thread:
            return
        now = time.monotonic()
        if now - self._last_poll < 0.5:
            return
        self._last_poll = now
        if self._rollout is None:
            root = os.path.expanduser(self.sessions)
            found = glob.glob(os.path.join(root, "**", f"rollout-*{self._thread}.jsonl"), recursive=True)
            if not found:
                return
            self._rollout = found[0]
        try:
            with open(self._rollout, encoding="utf-8", errors="replace") as f:
                f.seek(self._offset)
                data = f.read()
                self._offset = f.tell()
        except OSError:
            return
        *lines, self._partial = (self._partial + data).split("\n")
        for line in lines:
            event = _meter_json(line)
            payload = (event or {}).get("payload") or {}
            if payload.get("type") != "token_count":
                continue
            limits = payload.get("rate_limits")
            if isinstance(limits, dict):
                self._limits = limits
            # A refused request logs a token_count with no info: it must not zero the running total.
            total = (payload.get("info") or {}).get("total_token_usage")
            if not total:
                continue
            self._live_tokens = {"input": int(total.get("input_tokens") or 0),
                                 "cached": int(total.get("cached_input_tokens") or 0),
                                 "output": int(total.get("output_tokens") or 0)}


def _meter_json(line: str) -> dict | None:
    # Prefixed: the runner ships this file and its own source as one script, so names must not collide.
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None
