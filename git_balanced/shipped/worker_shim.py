#!/usr/bin/env python3
"""git balanced on a worker's machine: `git balanced ask TEXT` and the agents' `hook pre-tool-use`; the lead's
engine carries the questions."""
import importlib.machinery
import importlib.util
import json
import os
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


# -- the PreToolUse hook: pretool.py's decision (next to this script), with the rules the lead sent -----------
def module_at(path, name):
    """The Python file at `path` loaded as a module (it is no package's: this script has none)."""
    loader = importlib.machinery.SourceFileLoader(name, path)
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


def ask_lead(pretool, run_dir, tool, what, kind):
    """Ask the lead through the run folder and wait: the decision its answer makes."""
    n = post(run_dir, {"text": what, "kind": kind, "tool": tool})
    answer, timeout = wait(run_dir, n)
    if answer is None:
        return pretool.decision("deny", f"It needs the lead's yes, and no answer came within {timeout:.0f} seconds.")
    return pretool.lead_said(str(answer.get("qid") or f"question {n}"), answer.get("decision"),
                             str(answer.get("text") or ""))


def pre_tool_use(run_dir, here, data):
    pretool = module_at(os.path.join(here, "pretool.py"), "balanced_pretool")
    hooks = os.path.join(run_dir, "hooks")
    # The guard the runner installed is guard.py itself, as the worktree's pre-commit hook next to its spec.
    guard = module_at(os.path.join(hooks, "pre-commit"), "balanced_guard") \
        if os.path.exists(os.path.join(hooks, "guard.json")) else None
    return pretool.pre_tool_use(data, load(os.path.join(here, "hook.json")) or {},
                                os.environ.get("GIT_BALANCED_WORKTREE") or os.getcwd(), guard, run_dir,
                                lambda tool, what, kind: ask_lead(pretool, run_dir, tool, what, kind))


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
    if args and args[0] == "seat":  # a check in one of this machine's check seats (seats.py, next to this script)
        return module_at(os.path.join(here, "seats.py"), "balanced_seats").seat_main(args[1:])
    other = installed(here) if not args or args[0] != "ask" else None
    if other:
        os.execv(other, [other] + args)
    if len(args) != 2 or args[0] != "ask" or not args[1].strip():
        print("On this machine git balanced only asks the lead: git balanced ask \"TEXT\" (one argument), and runs a "
              "check in a seat: git balanced seat CMD. Everything else runs on the lead's machine.", file=sys.stderr)
        return 1
    return ask(run_dir, args[1].strip())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
