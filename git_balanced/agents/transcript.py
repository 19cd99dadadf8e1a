"""A worker's log as a person reads it: the agent's JSON events (Claude Code's stream-json, Codex's `exec
--json`, Pi's `--mode json`) as turns, tool calls and their results, one or a few lines each; any other line
(a shell worker's output, an agent's own words on stderr) as it is."""

from __future__ import annotations

import json
from typing import Any

RESULT_LINES = 3  # the lines of a tool's result shown under its call
WIDTH = 160  # a line is cut past this many characters


def render(text: str) -> list[str]:
    """The readable lines of a log (whole JSON lines only: a partial last line is the caller's to keep)."""
    out: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        try:
            ev = json.loads(line)
        except ValueError:
            out.append(_cut(raw.rstrip()))
            continue
        out += [_cut(x) for x in _event(ev)] if isinstance(ev, dict) else [_cut(line)]
    return out


def _cut(line: str) -> str:
    return line if len(line) <= WIDTH else line[:WIDTH - 1] + "…"


def _event(ev: dict[str, Any]) -> list[str]:
    kind = str(ev.get("type") or "")
    if kind in ("assistant", "user") and isinstance(ev.get("message"), dict):  # Claude Code
        return _content(ev["message"].get("content"), who="agent" if kind == "assistant" else "lead")
    if kind == "system" and ev.get("subtype") == "init":
        return [f"── session {ev.get('session_id', '')} · {ev.get('model', '')}"]
    if kind == "result":
        cost = ev.get("total_cost_usd")
        return [f"── done: {ev.get('subtype', '')}" + (f" · ${float(cost):.4f}" if cost is not None else "")
                + (f" · {ev.get('num_turns')} turns" if ev.get("num_turns") else "")]
    if kind.startswith("item.") and isinstance(ev.get("item"), dict):  # Codex
        return _codex_item(kind, ev["item"])
    if kind in ("thread.started", "turn.started", "turn.completed", "session"):
        return [f"── {kind}" + (f" {ev.get('thread_id') or ev.get('id') or ''}".rstrip())]
    if kind == "message_end" and isinstance(ev.get("message"), dict):  # Pi
        role = ev["message"].get("role")  # a tool's result comes as its own message: tool_execution_end says it
        return [] if role not in ("assistant", "user") else _content(ev["message"].get("content"),
                                                                     who="agent" if role == "assistant" else "lead")
    if kind == "tool_execution_end":
        return _result(ev.get("result"))
    return []  # a stream's other events (deltas, starts) repeat what the ends say


def _content(content: Any, who: str) -> list[str]:
    if isinstance(content, str):
        return [f"{who}: {first}" for first in content.strip().splitlines()[:RESULT_LINES]] if content.strip() else []
    out: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and str(block.get("text", "")).strip():
            out += [f"{who}: {x}" if i == 0 else " " * (len(who) + 2) + x
                    for i, x in enumerate(str(block["text"]).strip().splitlines()[:6])]
        elif kind in ("tool_use", "toolCall"):
            args = block.get("input") if kind == "tool_use" else block.get("arguments")
            out.append(f"  → {block.get('name')} {_args(args)}")
        elif kind == "tool_result":
            out += _result(block.get("content"), error=bool(block.get("is_error")))
    return out


def _args(args: Any) -> str:
    if isinstance(args, dict):
        for key in ("command", "file_path", "path", "pattern", "description"):
            if key in args:
                return str(args[key]).replace("\n", " ")
        return json.dumps(args, sort_keys=True, ensure_ascii=False)
    return "" if args is None else str(args)


def _result(content: Any, error: bool = False) -> list[str]:
    if isinstance(content, list):
        content = "\n".join(str(b.get("text", "")) if isinstance(b, dict) else str(b) for b in content)
    elif isinstance(content, dict):
        content = "\n".join(str(b.get("text", "")) for b in content.get("content", []) if isinstance(b, dict)) \
            if isinstance(content.get("content"), list) else json.dumps(content, ensure_ascii=False)
    lines = [x for x in str(content or "").splitlines() if x.strip()]
    mark = "  ✗ " if error else "  ← "
    shown = [mark + lines[0]] + ["    " + x for x in lines[1:RESULT_LINES]] if lines else [mark + "(nothing)"]
    return shown + ([f"    … {len(lines) - RESULT_LINES} more lines"] if len(lines) > RESULT_LINES else [])


def _codex_item(kind: str, item: dict[str, Any]) -> list[str]:
    what = item.get("type")
    if kind != "item.completed":
        return [f"  → {item.get('command')}"] if what == "command_execution" and kind == "item.started" else []
    if what == "agent_message":
        return _content(str(item.get("text", "")), who="agent")
    if what == "reasoning":
        return [f"(thinks) {str(item.get('text', '')).strip().splitlines()[0]}"] if item.get("text") else []
    if what == "command_execution":
        out = _result(item.get("aggregated_output"), error=item.get("exit_code") not in (0, None))
        return out + ([f"    exit {item.get('exit_code')}"] if item.get("exit_code") not in (0, None) else [])
    if what == "file_change":
        return [f"  → edit {', '.join(str(c.get('path')) for c in item.get('changes', []) if isinstance(c, dict))}"]
    if what == "mcp_tool_call":
        return [f"  → {item.get('server')}.{item.get('tool')}"]
    return []
