"""A Claude Code worker's own subagents, read from its stream-json log: how many it started, how many failed,
how many still ran when its turn ended and had their reports waited for, and how many never reported.

Subagents run in the background: the worker's turn may end while they still work. `claude -p` then waits for
them (BACKGROUND_WAIT, no ceiling) and each report (a `task_notification`) starts a new turn of the same
session, which ends in a `result` of its own whose `origin` names the report. The worker is finished only at
the last `result`, once no subagent of its own still runs."""

from __future__ import annotations

# No ceiling on how long `claude -p` waits for its subagents after a turn (its default stops them after 10
# minutes): the engine's own limits on a worker still hold.
BACKGROUND_WAIT = {"CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS": "0"}

AGENT_TOOLS = ("Agent", "Task")  # the tool that starts a subagent (`Task` before 2.1)
FAILED_TASKS = ("failed", "stopped", "killed")
REPORT_ORIGIN = "task-notification"  # a `result`'s origin when a subagent's report started its turn


def _content(e: dict) -> list | None:
    message = e.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else None


def _own_calls(e: dict) -> set[str]:
    """The Agent tool calls in an assistant event of the worker itself (a subagent's own have a parent)."""
    if e.get("type") != "assistant" or e.get("parent_tool_use_id"):
        return set()
    return {str(c.get("id")) for c in _content(e) or [] if isinstance(c, dict) and c.get("type") == "tool_use"
            and c.get("name") in AGENT_TOOLS}


def _turn_end(evs: list[dict], results: list[int]) -> int | None:
    """Where the worker's first turn ended, when a report started another: its last words (the first
    `result`'s text) as the worker's own assistant event. The CLI holds a `result` back while subagents
    run, so the result itself may come later in the log."""
    if len(results) < 2:
        return None
    said = str(evs[results[0]].get("result") or "")
    for i, e in enumerate(evs):
        if e.get("type") == "assistant" and not e.get("parent_tool_use_id") and any(
                isinstance(c, dict) and c.get("type") == "text" and c.get("text") == said for c in _content(e) or []):
            return i
    return None


def subagents(evs: list[dict]) -> dict:
    """{"ran", "failed", "unfinished", "waited"} of the worker's own subagents; {} when it started none.
    `unfinished`: started and not done by the final `result`; `waited`: still running when a turn of the
    worker ended, their reports waited for and read in a later turn."""
    calls: set[str] = set()
    failed_calls: set[str] = set()
    tasks: dict[str, str] = {}  # task id -> its tool call
    runs: dict[str, str] = {}  # run id -> task id
    ended: dict[str, tuple[str, int]] = {}  # task id -> (status, where in the log)
    results = [i for i, e in enumerate(evs) if e.get("type") == "result"]
    last_result = results[-1] if results else len(evs)
    for i, e in enumerate(evs):
        kind, sub = e.get("type"), e.get("subtype")
        calls |= _own_calls(e)
        if kind == "user":
            failed_calls |= {str(c.get("tool_use_id")) for c in _content(e) or [] if isinstance(c, dict)
                             and c.get("type") == "tool_result" and c.get("is_error")}
        elif kind == "system" and sub == "task_started" and not e.get("owned_by_subagent") \
                and "agent" in str(e.get("task_type") or "local_agent"):
            tasks[str(e.get("task_id"))] = str(e.get("tool_use_id") or e.get("task_id"))
            if e.get("run_id"):
                runs[str(e["run_id"])] = str(e.get("task_id"))
        elif kind == "system" and sub == "task_notification" and str(e.get("task_id")) in tasks:
            ended[str(e.get("task_id"))] = (str(e.get("status") or ""), i)
    ran = calls | set(tasks.values())
    if not ran:
        return {}
    failed = {tasks[t] for t, (status, _) in ended.items() if status in FAILED_TASKS}
    failed |= failed_calls & calls
    unfinished = [t for t in tasks if t not in ended or ended[t][1] > last_result]
    return {"ran": len(ran), "failed": len(failed), "unfinished": len(unfinished),
            "waited": len(_waited(evs, results, tasks, runs, ended, unfinished))}


def _waited(evs: list[dict], results: list[int], tasks: dict[str, str], runs: dict[str, str],
            ended: dict[str, tuple[str, int]], unfinished: list[str]) -> set[str]:
    """The tasks whose report came after a turn of the worker had ended, and which were read in a later turn:
    named by a later turn's `origin`, or reporting after the first turn's last words."""
    if len(results) < 2:
        return set()
    named = {runs.get(str((evs[i].get("origin") or {}).get("runId")), "") for i in results
             if (evs[i].get("origin") or {}).get("kind") == REPORT_ORIGIN}
    end = _turn_end(evs, results)
    after = {t for t, (_, at) in ended.items() if end is not None and at > end}
    return ((named & set(tasks)) | after) - set(unfinished)


def waited_words(counts: dict) -> str:
    """What the lead hears of the reports its worker waited for ("; its turn ended while 2 still ran, so it
    waited for 2 reports and only then finished"), or nothing."""
    n = int(counts.get("waited") or 0)
    if not n:
        return ""
    return f"; its turn ended while {n} still ran, so it waited for {n} report{'s' if n != 1 else ''} and only " \
        "then finished"
