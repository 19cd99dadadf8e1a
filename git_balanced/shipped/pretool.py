"""A worker's PreToolUse decision, made by one function wherever the worker runs. Stdlib only, Python 3.9+.

On the lead's machine `git balanced hook pre-tool-use` (hooks/agent.py) imports it; on another machine the
runner writes this file next to its script (worker_shim.py, `{run_dir}/bin/`), which loads it from there.
An edit outside the piece's paths is refused by the guard; with lead_allows_commands on, or under a lead whose
own mode asks before commands, any other tool call but a read becomes a question to the lead (an edit too,
unless workers edit without asking: then an edit in its own worktree goes ahead whatever the lead's mode), and
the lead's answer allows or denies it; under a lead in plan mode only reads go ahead. A Codex worker's own
`git add` and `git commit` in its worktree are run by its hook (own_commit). Each caller says how the guard is
found and how the lead is asked.
"""

from __future__ import annotations

import os

# typing, json, re, shlex and subprocess are imported where they are used: a read loads none of them
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def decision(allow: str, reason: str) -> dict:
    """The hook's answer: `allow` or `deny`, with the reason the agent is shown."""
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": allow,
                                   "permissionDecisionReason": reason}}


def take_told(run_dir: str | None) -> list:
    """The lines the lead told this worker (`git balanced tell`) that its agent has not read yet, oldest first;
    each is marked heard as it is taken, so it is handed over once."""
    folder = os.path.join(run_dir, "told") if run_dir else ""
    if not folder or not os.path.isdir(folder):
        return []
    out = []
    for name in sorted(n for n in os.listdir(folder) if n.endswith(".txt")):
        path = os.path.join(folder, name)
        try:
            os.rename(path, path[:-4] + ".heard")  # taken by one hook call, even if two run at once
        except OSError:
            continue
        with open(path[:-4] + ".heard", encoding="utf-8", errors="replace") as f:
            text = f.read().strip()
        if text:
            out.append(text)
    return out


def heard(lines: list) -> dict:
    """The decision that hands the agent what its lead told it: this one call is held back, so it reads the
    lines before it goes on, and runs the call again if it still fits."""
    said = "\n".join(f"- {line}" for line in lines)
    return decision("deny", f"Your lead tells you, while you work:\n{said}\nThis tool call was held back only so "
                            "that you read this first: take it into account, then go on (run the call again if it "
                            "still fits).")


def lead_said(qid: str, verdict: Any, text: str) -> dict:
    """The decision a lead's answer makes: its allow or deny, or, for words alone, a deny that shows them."""
    if verdict == "allow":
        return decision("allow", f"The lead allowed it ({qid})" + (": " + text if text else "."))
    if verdict == "deny":
        return decision("deny", f"The lead denied it ({qid})" + (": " + text if text else "."))
    return decision("deny", f"The lead did not allow it, and answered ({qid}): {text}")


def plan_said(answer: dict) -> dict:
    """The lead's answer to a worker's plan, in words for the worker: go ahead, or revise it and show it again."""
    spec = answer.get("hookSpecificOutput") or {}
    reason = str(spec.get("permissionDecisionReason") or "")
    if spec.get("permissionDecision") == "allow":
        return decision("allow", f"{reason} Your lead approved the plan: go ahead with it.")
    return decision("deny", f"Your lead sent the plan back. {reason} Revise the plan and show it again.")


PLAN_FILE = r'"planFilePath":\s*"([^"]+)"'  # in a Claude Code transcript


def plan_text(data: dict, tool_input: dict) -> str:
    """The plan a worker shows: in the call's input, or (Claude Code 2.1) in the plan file its session was
    told to write, named in its transcript."""
    plan = str(tool_input.get("plan") or "").strip()
    if plan:
        return plan
    path = plan_file(data)
    try:
        with open(path or "", encoding="utf-8", errors="replace") as f:
            plan = f.read().strip()
    except OSError:
        pass
    return plan or "(the worker showed no plan text)"


def plan_file(data: dict) -> str | None:
    """The plan file a Claude Code session in plan mode was told to write, named in its transcript, or None."""
    try:
        with open(str(data.get("transcript_path") or ""), encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    import re

    named = re.findall(PLAN_FILE, text)
    return os.path.normpath(named[-1]) if named else None


def flag(name: str, default: bool) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    return default if not raw else raw in ("1", "true", "yes", "on")


def edited_paths(rules: dict, tool: str, tool_input: dict, cwd: str) -> list[str] | None:
    """The absolute paths an edit tool writes; None for a tool that is not an edit."""
    edits = rules.get("edits") or {}
    if tool in edits:
        raw = [str(tool_input.get(edits[tool]) or "")]
    elif tool == "apply_patch":  # Codex: the paths are in the patch text
        import re

        patch = str(tool_input.get("command") or tool_input.get("input") or "")
        raw = re.findall(rules.get("patch_path") or "(?!)", patch, re.M)
    else:
        return None
    return [os.path.normpath(os.path.join(cwd, p.strip())) for p in raw if p.strip()]


def inside(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or under it, links resolved."""
    real, root = os.path.realpath(path), os.path.realpath(folder)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def only_asks(command: str, asking: str) -> bool:
    """Whether a shell command is `git balanced ask …` alone: nothing chained, piped, redirected or
    substituted, which its allow would let run with it."""
    import re

    if not re.match(asking, command) or re.search(r"[`\n]|\$\(", command):
        return False
    import shlex

    lex = shlex.shlex(command, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    try:
        return not any(tok and set(tok) <= set("();<>|&") for tok in lex)
    except ValueError:  # an unclosed quote
        return False


# A Codex worker's `git add` and `git commit` in its own worktree: Codex's sandbox keeps every `.git` read-only,
# its worktree's own git folder (in the copy, beside the worktree) included, so there they always fail. Exactly
# these two, as a chain of `&&`, in its worktree, are run by its hook (inside the fence, outside Codex's sandbox,
# hooks and guard and all, as the worker would), and Codex is told what git said. Anything else is left as it was.
OWN_GIT = ("add", "commit")
# The GIT_* variables its git keeps, as the runner's own (runfiles.KEEP_GIT; this module is read on its own).
COMMITTER_ENV = {"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
                 "GIT_COMMITTER_DATE", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_TEMPLATE_DIR", "GIT_SSH",
                 "GIT_SSH_COMMAND", "GIT_TERMINAL_PROMPT"}
CHAIN = "&&"


def own_commit(data: dict, tool_input: dict, command: str, worktree: str) -> list[list[str]] | None:
    """The git argument lists of a Codex shell call that is only `git add …` and `git commit …` joined by `&&`,
    run in its own worktree; None for any other call (another agent's, another folder, any other command,
    option before the subcommand, redirection, substitution or variable)."""
    if "turn_id" not in data or not command or any(c in command for c in "`\n$"):
        return None
    where = str(tool_input.get("workdir") or data.get("cwd") or "")
    if not where or os.path.realpath(where) != os.path.realpath(worktree):
        return None
    import shlex

    lex = shlex.shlex(command, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    try:
        tokens = list(lex)
    except ValueError:  # an unclosed quote
        return None
    parts: list[list[str]] = [[]]
    for tok in tokens:
        if tok == CHAIN:
            parts.append([])
        elif tok and set(tok) <= set("();<>|&"):
            return None
        else:
            parts[-1].append(tok)
    if not all(len(p) >= 2 and p[0] == "git" and p[1] in OWN_GIT and _plain(p[1], p[2:]) for p in parts):
        return None
    return [p[1:] for p in parts]


# The options its own add and commit may take: nothing that skips the guard's hook (`-n`, `--no-verify`), rewrites
# a commit it did not make (`--amend`), or reads a file for git (`-F`, `--template`, `--pathspec-from-file`).
ADD_FLAGS = {"-A", "--all", "-u", "--update", "-v", "--verbose"}
COMMIT_FLAGS = {"-a", "--all", "-q", "--quiet", "-v", "--verbose", "-s", "--signoff", "--allow-empty"}
COMMIT_LETTERS = set("aqvs")  # short flags that may be joined (`-aq`), `m` last with its message


def _plain(sub: str, args: list[str]) -> bool:
    """Whether `git SUB ARGS` takes only the flags above, a message and paths."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return True  # paths only from here
        if not arg.startswith("-") or arg == "-":
            i += 1
            continue
        if sub == "add":
            if arg not in ADD_FLAGS:
                return False
        elif arg in COMMIT_FLAGS or arg.startswith("--message="):
            pass
        elif arg in ("-m", "--message"):
            i += 1  # its message
        elif arg.startswith("-") and not arg.startswith("--") and arg[1] in COMMIT_LETTERS | {"m"}:
            head, _, message = arg[1:].partition("m")
            if not set(head) <= COMMIT_LETTERS or ("m" not in arg[1:] and not head):
                return False
            if "m" in arg[1:] and not message:
                i += 1  # `-am MSG`: the message is the next word
        else:
            return False
        i += 1
    return True


def commit_for_codex(steps: list[list[str]], worktree: str) -> dict:
    """Run the worker's own `git add` and `git commit` in its worktree, in turn, stopping at the first that
    fails; Codex reads what git said as the call's answer."""
    import shlex
    import subprocess

    # No other GIT_*: none names another repository, object store, namespace or config for this git.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in COMMITTER_ENV}
    env["GIT_EDITOR"] = env["GIT_SEQUENCE_EDITOR"] = "false"  # a commit without -m fails rather than waits
    said, code = [], 0
    for args in steps:
        try:
            cp = subprocess.run(["git", "-c", "gc.auto=0", "-c", "maintenance.auto=false", *args], cwd=worktree,
                                env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                timeout=600)
            code, out = cp.returncode, cp.stdout.decode("utf-8", "replace").strip()
        except (OSError, subprocess.TimeoutExpired) as exc:
            code, out = 127, f"git: {exc}"
        said.append(f"$ git {shlex.join(args)}\n{out}".rstrip())
        if code != 0:
            break
    return decision("deny", "Your hook ran it in your worktree, where your sandbox keeps git's own folder read-only "
                            f"(exit {code}):\n" + "\n".join(said)[-4000:])


LEVELS = ("read-only", "ask", "edits", "free")  # as agents/modes.py: what the lead's mode leaves a worker


def level(now: str | None = None) -> str | None:
    """The stricter of the level the worker was started with (GIT_BALANCED_WORKER_MODE) and `now` (its
    lead's mode at this call, where it can be read); None when neither is known."""
    known = [lv for lv in (os.environ.get("GIT_BALANCED_WORKER_MODE", "").strip(), now) if lv in LEVELS]
    return min(known, key=LEVELS.index) if known else None


def pre_tool_use(data: dict, rules: dict, worktree: str, guard: Any, run_dir: str | None,
                 ask: Callable[[str, str, str], dict], lead_level: str | None = None) -> dict | None:
    """The decision on one tool call (the agent's PreToolUse JSON), or None to leave it to the agent's own
    permissions. `rules`: the agents' tool names
    (agents.wiring.hook_rules); `guard`: guard.py's module, whose spec is in `{run_dir}/hooks` (None: no
    guard); `ask(tool, what, kind)`: the decision the lead's answer makes; `lead_level`: what the lead's mode
    leaves its workers right now, where the caller can read it."""
    told = take_told(run_dir)
    if told:
        return heard(told)
    tool = str(data.get("tool_name") or "")
    raw_input = data.get("tool_input")
    tool_input: dict = raw_input if isinstance(raw_input, dict) else {}
    cwd = str(data.get("cwd") or worktree)
    held = level(lead_level)
    # A lead that asks before it runs a command (any mode but bypassPermissions) has its workers ask too,
    # whatever lead_allows_commands says: a worker never does what its lead could not do unasked.
    ask_lead = flag("GIT_BALANCED_ASK_COMMANDS", False) or held in ("ask", "edits")
    paths = edited_paths(rules, tool, tool_input, cwd)
    if paths and tool in (rules.get("edits") or {}) and set(paths) == {plan_file(data)}:
        return decision("allow", "Writing its plan, to show the lead, is always fine.")
    if paths is not None:
        spec = guard.load_spec(os.path.join(run_dir, "hooks")) if guard is not None and run_dir else None
        refused = guard.refusals_in(paths, worktree, spec) if spec else []
        if spec and refused:
            return decision("deny", "The guard refused this edit: {}. The piece {} may write only under {}.".format(
                "; ".join(refused), spec.get("piece"), ", ".join(spec["paths"])))
        if held == "read-only":
            return decision("deny", "Your lead is in plan mode (read only), so its workers only read: "
                                    "no edit, no command. Say what you would change instead.")
        unasked = flag("GIT_BALANCED_EDIT_WITHOUT_ASKING", True)
        if unasked and held == "ask" and all(inside(p, worktree) for p in paths):
            # The switch means what it says: its own edits go ahead whatever the lead asks before; only its
            # commands go by the lead's mode. Said outright, for an agent started to ask before edits.
            return decision("allow", "Workers edit without asking: an edit in its own worktree goes ahead.")
        if held == "ask":
            return ask(tool, ", ".join(paths), "edit")
        if unasked or not ask_lead:
            return None
        return ask(tool, ", ".join(paths), "edit")
    if tool in (rules.get("plans") or []) and flag("GIT_BALANCED_PLAN_BY_PERMIT", False):
        return None  # its permission prompt tool (permit.py) asks the lead: it would ask twice
    if tool in (rules.get("plans") or []):  # a plan shown before the work starts: the lead approves or sends it back
        return plan_said(ask(tool, plan_text(data, tool_input), "plan"))
    if tool in (rules.get("reads") or []):
        return None
    command = str(tool_input.get("command") or "") if tool.lower() == "bash" else ""
    if command and only_asks(command, rules.get("asking") or "(?!)"):
        # Asking the lead is never itself a question; allowed outright, since a worker held to its lead is not
        # allowed Bash by name (agents/modes.py START).
        return decision("allow", "Asking the lead is always fine.")
    if held == "read-only":
        return decision("deny", "Your lead is in plan mode (read only), so its workers only read: no edit, "
                                "no command. Say what you would run instead.")
    own = own_commit(data, tool_input, command, worktree)
    if own is not None:
        return commit_for_codex(own, worktree)
    if not ask_lead:
        return None
    import json

    what = command or f"{tool} {json.dumps(tool_input, sort_keys=True)[:300]}"
    return ask(tool, what, "command")
