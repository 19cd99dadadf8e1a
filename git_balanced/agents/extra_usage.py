"""Extra usage: an account whose plan's window is spent and that goes on working, paid beyond its plan. Each
agent says so in its own reports, read here into one more usage window of the type EXTRA, which the account
keeps until the spent window resets (machines/placing/accounts.py); until then it takes no new workers.

- Claude Code: a `rate_limit_event` whose `rate_limit_info.isUsingOverage` (or `overageInUse`) is true; its
  `status` is then `rejected` (the plan's own window), yet the request was served.
- Codex: the session file's `rate_limits` with a window at 100% and `credits.has_credits` true (not
  `unlimited`): it goes on, on the account's credits (the runner's meter passes them on as `credits`)."""

from __future__ import annotations

from typing import Any

from git_balanced.ui import clock

EXTRA = "extra_usage"


def window(resets_at: Any) -> dict[str, Any]:
    """The usage window that stands for extra usage until `resets_at` (epoch seconds, or None)."""
    reset = float(resets_at) if isinstance(resets_at, (int, float)) and resets_at else None
    return {"type": EXTRA, "used_percent": 100.0, "resets_at": reset}


def from_claude(info: dict[str, Any]) -> dict[str, Any] | None:
    """The extra-usage window of one `rate_limit_info`, or None when it is not on extra usage."""
    if info.get("isUsingOverage") is True or info.get("overageInUse") is True:
        return window(info.get("resetsAt"))
    return None


def from_codex(windows: list[dict[str, Any]], credits: Any) -> dict[str, Any] | None:
    """The extra-usage window of Codex's last `rate_limits` (its windows and its `credits`), or None."""
    if not isinstance(credits, dict) or credits.get("has_credits") is not True or credits.get("unlimited") is True:
        return None
    spent = [w for w in windows if isinstance(w.get("used_percent"), (int, float)) and w["used_percent"] >= 100]
    if not spent:
        return None
    return window(max((w.get("resets_at") or 0 for w in spent), default=0))


def words(resets_at: Any) -> str:
    """Why such an account takes no new workers, as placement, `ready` and the board say it."""
    said = "it is on extra usage, paid beyond its plan"
    return f"{said}, until its plan's window resets at {clock(float(resets_at))}" if resets_at else said
