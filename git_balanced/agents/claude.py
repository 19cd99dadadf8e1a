"""Claude Code: `claude -p` with the stream-json event log; the CLI keeps its own budget and cost."""

from __future__ import annotations

from git_balanced.agents.base import AgentRun, Outcome, crashed, short
from git_balanced.files import json_objects

# Workers edit and run commands without asking: acceptEdits covers file edits, and Bash must be allowed by
# name, since bypassPermissions refuses to start as root (a common case on build machines).
WORKER_TOOLS = "Bash,Read,Write,Edit,MultiEdit,Glob,Grep,NotebookEdit,TodoWrite"
ASKING_TOOLS = "Read,Glob,Grep"
SETTINGS_FILE = "claude-settings.json"

SIGNIN_ERRORS = {"authentication_failed", "oauth_org_not_allowed", "billing_error"}
SIGNIN_TEXTS = ("Not logged in", "Invalid API key")


class ClaudeAdapter:
    name = "claude"

    def build(self, *, task: str, rules: str, model: str | None, budget_usd: float | None,
              worktree: str, run_dir: str, edit_without_asking: bool = True,
              settings_json: str | None = None) -> AgentRun:
        """The `claude -p` command line of one worker."""
        argv = ["claude", "-p", task, "--output-format", "stream-json", "--verbose"]
        if model:
            argv += ["--model", model]
        if edit_without_asking:
            argv += ["--permission-mode", "acceptEdits", "--allowedTools", WORKER_TOOLS]
        else:
            argv += ["--permission-mode", "default", "--allowedTools", ASKING_TOOLS]
        if budget_usd is not None:
            argv += ["--max-budget-usd", f"{budget_usd:.4f}"]
        if rules:
            argv += ["--append-system-prompt", rules]
        files = {}
        if settings_json is not None:
            files[SETTINGS_FILE] = settings_json
            argv += ["--settings", "{run_dir}/" + SETTINGS_FILE]
        # A worker must not update the CLI under the feet of the workers beside it.
        return AgentRun(argv=argv, env={"DISABLE_AUTOUPDATER": "1"}, files=files, meter=None)

    def outcome(self, log_text: str, exit_code: int | None) -> Outcome:
        """Read the result event, the rate-limit events and API errors of a stream-json log."""
        evs = json_objects(log_text)
        windows, rejected = _windows(evs)
        result = next((e for e in reversed(evs) if e.get("type") == "result"), None)
        api_error = next((e for e in reversed(evs) if e.get("type") == "assistant" and e.get("error")), None)
        if result is None:
            return crashed(log_text, exit_code)
        cost = result.get("total_cost_usd")
        cost = float(cost) if isinstance(cost, (int, float)) else None
        tokens = _tokens(result.get("usage") or {})
        text = str(result.get("result") or "")
        errors = result.get("errors") or []
        summary = short(text or "; ".join(map(str, errors)) or result.get("subtype", ""))

        def done(kind: str, reset_at: float | None = None) -> Outcome:
            return Outcome(kind, cost, reset_at, summary, windows, tokens)

        subtype = result.get("subtype")
        if rejected is not None:
            return done("usage_limit", rejected)
        if subtype == "error_max_budget_usd" or result.get("terminal_reason") == "budget_exhausted":
            return done("budget")
        if subtype == "error_max_turns" or result.get("terminal_reason") == "max_turns":
            return done("turns")
        if not result.get("is_error") and subtype == "success":
            return done("success")
        status = result.get("api_error_status")
        error = (api_error or {}).get("error")
        if error in SIGNIN_ERRORS or status in (401, 403) or text.startswith(SIGNIN_TEXTS):
            return done("signin")
        # A refused connection also reads as error "server_error" with no status.
        if error in ("rate_limit", "server_error", "overloaded") or (
                isinstance(status, int) and (status == 429 or status >= 500)):
            return done("transient")
        return done("failed")


def _windows(evs: list[dict]) -> tuple[list[dict], float | None]:
    """Usage windows from `rate_limit_event`s, and the reset time when one said the plan refused."""
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
        if info.get("status") == "rejected" and info.get("resetsAt"):
            rejected = float(info["resetsAt"])
    return list(seen.values()), rejected


def _tokens(usage: dict) -> dict:
    names = {"input_tokens": "input", "output_tokens": "output", "cache_read_input_tokens": "cache_read",
             "cache_creation_input_tokens": "cache_write"}
    return {short_name: int(usage[key]) for key, short_name in names.items()
            if isinstance(usage.get(key), (int, float))}
