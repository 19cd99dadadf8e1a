#!/usr/bin/env python3
"""git balanced on a worker's machine: `git balanced ask TEXT` and the agents' `hook pre-tool-use`; the lead's
engine carries the questions."""
import importlib.machinery
import importlib.util
import json
import os
import re
import sys
import time


def installed(here):
    """A git-balanced of its own further on PATH, or None."""
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        path = os.path.join(folder, "git-balanced")
        if folder and os.path.realpath(folder) != here and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def post(run_dir, question):
    """Leave a question in the run folder for the engine to carry; its number."""
    asked = os.path.join(run_dir, "questions")
    os.makedirs(asked, exist_ok=True)
    tmp = os.path.join(asked, f".asking-{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(dict(question, asked_at=time.time()), f)
        f.flush()
        os.fsync(f.fileno())
    taken = [int(name[:-5]) for name in os.listdir(asked) if name.endswith(".json") and name[:-5].isdigit()]
    n = max(taken, default=0) + 1
    while True:  # a link never replaces a file: two asks at once get two numbers
        try:
            os.link(tmp, os.path.join(asked, f"{n}.json"))
            break
        except FileExistsError:
            n += 1
    os.unlink(tmp)
    return n


def wait(run_dir, n):
    """(The lead's answer to question n or None when GIT_BALANCED_ASK_TIMEOUT passed first, that timeout)."""
    timeout = float(os.environ.get("GIT_BALANCED_ASK_TIMEOUT") or 0)
    end = time.monotonic() + timeout if timeout > 0 else None
    path = os.path.join(run_dir, "answers", f"{n}.json")
    while True:
        answer = load(path)
        if isinstance(answer, dict):
            return answer, timeout
        if end is not None and time.monotonic() >= end:
            return None, timeout
        time.sleep(1.0)


def ask(run_dir, text):
    n = post(run_dir, {"text": text})
    print(f"Asked the lead (question {n} of this worker); waiting for the answer...", file=sys.stderr,
          flush=True)
    answer, timeout = wait(run_dir, n)
    if answer is None:
        print(f"No answer came from the lead within {timeout:.0f} seconds: go on with what you know, and say in "
              "your summary what you needed.", file=sys.stderr)
        return 1
    text = str(answer.get("text") or "")
    if answer.get("decision") == "deny":
        print(text or "denied")
        return 1
    print(("allowed" + (": " + text if text else "")) if answer.get("decision") == "allow" else text)
    return 0


# -- the PreToolUse hook: agent_hooks.pre_tool_use's decisions, with its tables (bin/hook.json) -------------
def decision(allow, reason):
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": allow,
                                   "permissionDecisionReason": reason}}


def flag(name, default):
    raw = os.environ.get(name, "").strip().lower()
    return default if not raw else raw in ("1", "true", "yes", "on")


def edited_paths(rules, tool, tool_input, cwd):
    edits = rules.get("edits") or {}
    if tool in edits:
        raw = [str(tool_input.get(edits[tool]) or "")]
    elif tool == "apply_patch":
        patch = str(tool_input.get("command") or tool_input.get("input") or "")
        raw = re.findall(rules.get("patch_path") or "(?!)", patch, re.M)
    else:
        return None
    return [os.path.normpath(os.path.join(cwd, p.strip())) for p in raw if p.strip()]


def guard_refusals(run_dir, paths, worktree):
    """The guard's refusals, by guard.py itself (the worktree's pre-commit hook); None without a guard."""
    folder = os.path.join(run_dir, "hooks")
    if not os.path.exists(os.path.join(folder, "guard.json")):
        return None, None
    loader = importlib.machinery.SourceFileLoader("balanced_guard", os.path.join(folder, "pre-commit"))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    spec = module.load_spec(folder)
    if not spec:
        return None, None
    return module.refusals_in(paths, worktree, spec), spec


def ask_lead(run_dir, tool, what, kind):
    n = post(run_dir, {"text": what, "kind": kind, "tool": tool})
    answer, timeout = wait(run_dir, n)
    if answer is None:
        return decision("deny", f"It needs the lead's yes, and no answer came within {timeout:.0f} seconds.")
    qid = str(answer.get("qid") or f"question {n}")
    text = str(answer.get("text") or "")
    if answer.get("decision") == "allow":
        return decision("allow", f"The lead allowed it ({qid})" + (": " + text if text else "."))
    if answer.get("decision") == "deny":
        return decision("deny", f"The lead denied it ({qid})" + (": " + text if text else "."))
    return decision("deny", f"The lead did not allow it, and answered ({qid}): {text}")


def pre_tool_use(run_dir, here, data):
    rules = load(os.path.join(here, "hook.json")) or {}
    tool = str(data.get("tool_name") or "")
    tool_input = data.get("tool_input") if isinstance(data.get("tool_input"), dict) else {}
    worktree = os.environ.get("GIT_BALANCED_WORKTREE") or os.getcwd()
    cwd = str(data.get("cwd") or worktree)
    ask_commands = flag("GIT_BALANCED_ASK_COMMANDS", False)
    paths = edited_paths(rules, tool, tool_input, cwd)
    if paths is not None:
        refused, spec = guard_refusals(run_dir, paths, worktree)
        if refused:
            return decision("deny", "The guard refused this edit: {}. The piece {} may write only under {}.".format(
                "; ".join(refused), spec.get("piece"), ", ".join(spec["paths"])))
        if flag("GIT_BALANCED_EDIT_WITHOUT_ASKING", True) or not ask_commands:
            return None
        return ask_lead(run_dir, tool, ", ".join(paths), "edit")
    if tool in (rules.get("reads") or []) or not ask_commands:
        return None
    command = str(tool_input.get("command") or "") if tool.lower() == "bash" else ""
    if command and re.match(rules.get("asking") or "(?!)", command):
        return None  # asking the lead is never itself a question
    what = command or f"{tool} {json.dumps(tool_input, sort_keys=True)[:300]}"
    return ask_lead(run_dir, tool, what, "command")


def hook(run_dir, here, name):
    if name != "pre-tool-use":
        return 0  # the lead's hooks have nothing to do in a worker: no output lets the agent go on
    raw = sys.stdin.read()
    try:
        data = json.loads(raw) if raw.strip() else {}
    except ValueError as exc:
        print(f"The hook's input is not JSON: {exc}.", file=sys.stderr)
        return 1
    out = pre_tool_use(run_dir, here, data if isinstance(data, dict) else {})
    if out is not None:
        sys.stdout.write(json.dumps(out) + "\n")
    return 0


def main(args):
    here = os.path.dirname(os.path.realpath(__file__))
    run_dir = os.path.dirname(here)
    # A worker's hook is judged here, even where git balanced is installed: only this script reaches the lead.
    if len(args) == 2 and args[0] == "hook" and os.environ.get("GIT_BALANCED_JOB"):
        return hook(run_dir, here, args[1])
    other = installed(here) if not args or args[0] != "ask" else None
    if other:
        os.execv(other, [other] + args)
    if len(args) != 2 or args[0] != "ask" or not args[1].strip():
        print("On this machine git balanced only asks the lead: git balanced ask \"TEXT\" (one argument). "
              "Everything else runs on the lead's machine.", file=sys.stderr)
        return 1
    return ask(run_dir, args[1].strip())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
