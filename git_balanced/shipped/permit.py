#!/usr/bin/env python3
"""A worker's permission prompt tool: the smallest stdio MCP server, with one tool, `approve`, that Claude Code
calls (`claude -p --permission-prompt-tool mcp__balanced_worker__approve`) before a tool call its own rules
do not settle, above all `ExitPlanMode`, the plan it shows before it starts. Stdlib only, Python 3.9+.

It lives in the run folder's bin/ beside the worker's `git balanced` (worker_shim.py), on this machine or on
another one reached by SSH, where nothing but the runner and its stdlib scripts exist: no MCP SDK there, so
this speaks MCP's JSON-RPC lines itself (initialize, tools/list, tools/call, ping), and nothing more.

Each call is a question to the lead through the run folder, as `git balanced ask` is (the plan, or what it
would run or edit; the engine carries it), and the lead's answer is the decision, in the words of the worker's
PreToolUse hook (pretool.py). The hook leaves `ExitPlanMode` to this tool (GIT_BALANCED_PLAN_BY_PERMIT), so a
plan is asked about once; a call the hook or the worker's allowed tools settle never comes here.
"""
import json
import os
import sys

PROTOCOL = "2025-06-18"
TOOL = {
    "name": "approve",
    "description": "Asks the lead of this worker whether a tool call may go ahead (the worker's plan, a command, "
                   "an edit); returns its decision.",
    "inputSchema": {"type": "object", "properties": {
        "tool_name": {"type": "string"}, "input": {"type": "object"}, "tool_use_id": {"type": "string"}},
        "required": ["tool_name", "input"]},
}
EDITS = ("Write", "Edit", "MultiEdit", "NotebookEdit")


def module_at(path, name):
    """The Python file at `path` loaded as a module (the scripts beside this one are no package's)."""
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.SourceFileLoader(name, path)
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


def question(tool, tool_input):
    """(kind, text) of the question a call makes: its plan, the file it edits, or what it runs."""
    if tool == "ExitPlanMode":
        return "plan", str(tool_input.get("plan") or "(the worker showed no plan text)")
    if tool in EDITS:
        return "edit", str(tool_input.get("file_path") or tool_input.get("notebook_path") or tool)
    if tool.lower() == "bash" and tool_input.get("command"):
        return "command", str(tool_input["command"])
    return "command", f"{tool} {json.dumps(tool_input, sort_keys=True)[:300]}"


def approve(args, run_dir, here):
    """The decision on one call: {"behavior": "allow", "updatedInput": …} or {"behavior": "deny", "message": …},
    in the words the worker's PreToolUse hook uses (pretool.py), asked the way it asks (worker_shim.py)."""
    tool = str(args.get("tool_name") or "")
    tool_input = args.get("input") if isinstance(args.get("input"), dict) else {}
    pretool = module_at(os.path.join(here, "pretool.py"), "balanced_pretool")
    worker = module_at(os.path.join(here, "git-balanced"), "balanced_worker_shim")
    kind, text = question(tool, tool_input)
    said = worker.ask_lead(pretool, run_dir, tool, text, kind)
    if kind == "plan":
        said = pretool.plan_said(said)
    spec = said.get("hookSpecificOutput") or {}
    if spec.get("permissionDecision") == "allow":
        return {"behavior": "allow", "updatedInput": tool_input}
    return {"behavior": "deny", "message": str(spec.get("permissionDecisionReason") or "The lead said no.")}


def reply(msg_id, result=None, error=None):
    out = {"jsonrpc": "2.0", "id": msg_id}
    if error is not None:
        out["error"] = error
    else:
        out["result"] = result
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()


def handle(msg, run_dir, here):
    """Answer one JSON-RPC message (a notification gets no answer)."""
    method, msg_id, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
    if msg_id is None:
        return
    if method == "initialize":
        reply(msg_id, {"protocolVersion": params.get("protocolVersion") or PROTOCOL,
                       "capabilities": {"tools": {}}, "serverInfo": {"name": "balanced_worker", "version": "1"}})
    elif method == "ping":
        reply(msg_id, {})
    elif method == "tools/list":
        reply(msg_id, {"tools": [TOOL]})
    elif method == "tools/call" and params.get("name") == TOOL["name"]:
        try:
            decision = approve(params.get("arguments") or {}, run_dir, here)
        except Exception as exc:  # the agent must hear a no, never hang on a broken question
            decision = {"behavior": "deny", "message": f"The lead could not be asked: {exc}"}
        reply(msg_id, {"content": [{"type": "text", "text": json.dumps(decision)}], "isError": False})
    elif method == "tools/call":
        reply(msg_id, error={"code": -32602, "message": "Unknown tool: {}".format(params.get("name"))})
    else:
        reply(msg_id, error={"code": -32601, "message": f"Method not found: {method}"})


def main():
    here = os.path.dirname(os.path.realpath(__file__))
    run_dir = os.environ.get("BALANCED_RUN_DIR") or os.path.dirname(here)
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            reply(None, error={"code": -32700, "message": "Parse error"})
            continue
        if isinstance(msg, dict):
            handle(msg, run_dir, here)
    return 0


if __name__ == "__main__":
    sys.exit(main())
