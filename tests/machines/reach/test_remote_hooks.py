"""The agents' PreToolUse hook on a machine without git balanced: the runner's script judges it with the rules
the lead sent and the guard the runner installed, and a command for the lead travels like a question."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from git_balanced import jobs as J
from git_balanced.agents import wiring
from git_balanced.channel import questions
from git_balanced.channel.inbox import entries
from git_balanced.engine import relay
from git_balanced.hooks import agent as agent_hooks
from git_balanced.lead import open_lead
from git_balanced.shipped import guard, launch
from tests.support.builders import git, make_repo
from tests.support.cli import balanced
from tests.support.hook_inputs import claude_bash
from tests.support.plans import background_engine
from tests.support.runner_calls import call, status_of
from tests.support.sshd import sshd_machines, wire_lead
from tests.support.wait import wait_until

SPEC = {"piece": "docs", "job": "j1", "paths": ["docs/**"], "owners": {"api": ["src/**"]}}


def run_folder(run_dir: Path, spec: dict | None = SPEC) -> Path:
    """A run folder as the runner leaves it for a remote worker: the script and its rules in bin/, and with a
    spec, the guard (guard.py as hooks/pre-commit, next to guard.json); the script's path."""
    folder = Path(launch._write_ask_shim(str(run_dir), wiring.hook_rules()))
    if spec is not None:
        (run_dir / "hooks").mkdir(parents=True, exist_ok=True)
        (run_dir / "hooks" / "guard.json").write_text(json.dumps(spec))
        (run_dir / "hooks" / "pre-commit").write_text(Path(guard.__file__).read_text())
    return folder / "git-balanced"


def worker_env(run_dir: Path, worktree: Path, ask: bool, **extra: str) -> dict[str, str]:
    return {**os.environ, "GIT_BALANCED_JOB": "j1", "BALANCED_RUN_DIR": str(run_dir),
            "GIT_BALANCED_WORKTREE": str(worktree), "GIT_BALANCED_ASK_COMMANDS": "1" if ask else "0", **extra}


def run_hook(script: Path, payload: dict, env: dict[str, str], name: str = "pre-tool-use",
             ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(script), "hook", name], input=json.dumps(payload), env=env, capture_output=True,
                          text=True, timeout=30)


def payloads(tree: Path) -> dict[str, dict]:
    """Tool calls as each agent sends them: Claude's Write and Read, Codex's apply_patch, Pi's write."""
    base = claude_bash(tree, "")
    patch = "*** Begin Patch\n*** Add File: src/app.py\n+x = 1\n*** Add File: docs/b.md\n+# B\n*** End Patch\n"
    return {
        "claude write outside": {**base, "tool_name": "Write", "tool_input": {"file_path": f"{tree}/src/app.py"}},
        "claude write inside": {**base, "tool_name": "Write", "tool_input": {"file_path": f"{tree}/docs/a.md"}},
        "claude write elsewhere": {**base, "tool_name": "Write", "tool_input": {"file_path": "/etc/x.conf"}},
        "claude read": {**base, "tool_name": "Read", "tool_input": {"file_path": f"{tree}/src/app.py"}},
        "codex patch": {"hook_event_name": "PreToolUse", "cwd": str(tree), "tool_name": "apply_patch",
                        "tool_input": {"command": patch}},
        "pi write": {"hook_event_name": "PreToolUse", "cwd": str(tree), "tool_name": "write",
                     "tool_input": {"path": "README.md"}, "agent": "pi"},
    }


def test_the_script_refuses_edits_outside_the_paths_as_the_hook_does(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    tree, run_dir = make_repo(tmp_path / "tree"), tmp_path / "runs" / "j1"
    script = run_folder(run_dir)
    env = worker_env(run_dir, tree, ask=False)
    for key in ("GIT_BALANCED_JOB", "BALANCED_RUN_DIR", "GIT_BALANCED_WORKTREE", "GIT_BALANCED_ASK_COMMANDS"):
        monkeypatch.setenv(key, env[key])
    for name, payload in payloads(tree).items():
        got = run_hook(script, payload, env)
        assert got.returncode == 0, (name, got.stderr)
        assert (json.loads(got.stdout) if got.stdout else None) == agent_hooks.pre_tool_use(payload), \
            f"{name}: the script decides as git balanced's own hook"
    refused = json.loads(run_hook(script, payloads(tree)["claude write outside"], env).stdout)["hookSpecificOutput"]
    assert refused == {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason":
                       "The guard refused this edit: src/app.py belongs to the piece api, not to docs (docs/**). "
                       "The piece docs may write only under docs/**."}
    assert run_hook(script, payloads(tree)["claude write inside"], env).stdout == "", "inside the paths: no word"
    patch = json.loads(run_hook(script, payloads(tree)["codex patch"], env).stdout)["hookSpecificOutput"]
    reason = patch["permissionDecisionReason"]
    assert "src/app.py belongs to the piece api" in reason and "docs/b.md" not in reason, reason
    assert not (run_dir / "questions").exists(), "with lead_allows_commands off, nothing is asked"


def test_without_a_guard_or_outside_a_worker_the_script_stays_out_of_the_way(tmp_path: Path) -> None:
    tree, run_dir = make_repo(tmp_path / "tree"), tmp_path / "runs" / "j1"
    script = run_folder(run_dir, spec=None)
    env = worker_env(run_dir, tree, ask=False)
    assert run_hook(script, payloads(tree)["claude write outside"], env).stdout == "", "no paths: no guard"
    for name in ("stop", "user-prompt-submit", "session-start"):
        got = run_hook(script, {"hook_event_name": "Stop"}, env, name)
        assert (got.returncode, got.stdout) == (0, ""), f"{name} is a quiet no-op in a worker"
    bad = subprocess.run([str(script), "hook", "pre-tool-use"], input="{not json", env=env, capture_output=True,
                         text=True, timeout=30)
    assert bad.returncode == 1 and "The hook's input is not JSON" in bad.stderr
    bare = {k: v for k, v in env.items() if k != "GIT_BALANCED_JOB"}
    bare["PATH"] = os.pathsep.join([str(script.parent), "/usr/bin", "/bin"])
    got = run_hook(script, payloads(tree)["claude write outside"], bare)
    assert got.returncode == 1 and "only asks the lead" in got.stderr, "outside a worker, hooks are not its own"


def test_a_command_travels_to_the_lead_and_its_allow_or_deny_comes_back(tmp_path: Path) -> None:
    lead_repo = make_repo(tmp_path / "lead")
    lead = open_lead(str(lead_repo))
    jid = J.place(lead.repo, {"plan": "p1", "piece": "deployer", "task": "t", "lead": "main", "machine": "local",
                              "branch": "balanced/deployer", "attempt": 1})
    job = J.one(lead.repo, jid)
    assert job is not None
    runs = Path(os.environ["HOME"]) / ".balanced" / "runs"  # where the engine's LocalHost runner keeps it
    tree, run_dir = make_repo(tmp_path / "tree"), runs / job.runner_key
    script = run_folder(run_dir, spec=None)
    env = worker_env(run_dir, tree, ask=True)
    payload = tmp_path / "bash.json"
    payload.write_text(json.dumps(claude_bash(tree, "make deploy")))
    key = job.runner_key
    for answer, decision, reason in ((["--allow"], "allow", "The lead allowed it ({qid})."),
                                     (["--deny", "not there"], "deny", "The lead denied it ({qid}): not there")):
        with open(payload) as stdin:
            worker = subprocess.Popen([str(script), "hook", "pre-tool-use"], stdin=stdin, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, env=env)
        asked = wait_until(lambda: status_of(runs, key).get("questions"), 20, "the question in the runner's status")
        assert [(q["text"], q["kind"], q["tool"]) for q in asked] == [("make deploy", "command", "Bash")], asked
        job = J.one(lead.repo, jid)
        relay.relay(lead, [(job, {"questions": asked})])  # the engine's pass: carried to the inbox
        assert "questions" not in status_of(runs, key), "carried once"
        (q,) = [q for q in questions.all_questions(lead.repo).values() if q["state"] == "open"]
        qid = q["fields"]["qid"]
        assert (q["fields"]["kind"], q["fields"]["tool"], q["fields"]["text"]) == ("command", "Bash", "make deploy")
        assert f"deployer asks to run ({qid}): make deploy · answer: git balanced answer {qid} --allow|--deny " \
               "[REASON]" in [e["text"] for e in entries(lead.repo, "main")]
        assert worker.poll() is None, "the hook waits for the lead"
        assert balanced(lead_repo, "answer", qid, *answer).code == 0
        relay.relay(lead, [(J.one(lead.repo, jid), {})])  # the next pass: the answer goes back
        out, err = worker.communicate(timeout=30)
        assert worker.returncode == 0, err
        assert json.loads(out)["hookSpecificOutput"] == {
            "hookEventName": "PreToolUse", "permissionDecision": decision,
            "permissionDecisionReason": reason.format(qid=qid)}


def test_an_unanswered_command_is_denied_when_the_wait_ends(tmp_path: Path) -> None:
    tree, run_dir = make_repo(tmp_path / "tree"), tmp_path / "runs" / "j1"
    script = run_folder(run_dir, spec=None)
    got = run_hook(script, claude_bash(tree, "rm -rf build"), worker_env(run_dir, tree, ask=True,
                                                                      GIT_BALANCED_ASK_TIMEOUT="1"))
    assert json.loads(got.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "no answer came within 1 seconds" in got.stdout
    asked = call("status", {"jobs": ["j1"], "runs_dir": str(tmp_path / "runs")})["jobs"]["j1"]["questions"]
    assert [(q["n"], q["kind"]) for q in asked] == [(1, "command")]
    ask = run_hook(script, claude_bash(tree, "git balanced ask 'which port?'"), worker_env(run_dir, tree, ask=True))
    assert ask.returncode == 0 and json.loads(ask.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow", \
        "asking the lead is never itself a question"


# -- end to end: a worker on an SSH machine asks to run a command, the lead allows it, the piece lands ---------
CHECK = '#!/bin/sh\n[ "$(cat src/deployed.txt)" = deployed ]\n'
SETTINGS = '[worktree]\ncheck = "sh check.sh"\n\n[balanced]\nagent = "shell"\nlead_allows_commands = true\n'
# The shell piece plays its agent's part: Claude's PreToolUse input for a Bash call, through the hook.
RUN = ("""printf '{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"make deploy"},"""
       """"cwd":"%s"}' "$PWD" | git balanced hook pre-tool-use > src/decision.json && """
       """grep -q '"permissionDecision": "allow"' src/decision.json && echo deployed > src/deployed.txt""")


@pytest.mark.sshd
def test_a_worker_on_an_ssh_machine_runs_a_command_the_lead_allowed(tmp_path: Path) -> None:
    with sshd_machines(tmp_path, ["alpha"]) as machines:
        repo = make_repo(tmp_path / "proj", {"README.md": "sample\n", "check.sh": CHECK, "src/.keep": ""})
        wire_lead(repo, machines, SETTINGS)
        plan = tmp_path / "plan.yaml"
        plan.write_text(json.dumps({"task": "Deploy", "pieces": [{
            "id": "deployer", "task": "Deploy it.", "agent": "shell", "machine": "alpha", "run": RUN}]}))
        assert balanced(repo, "plan", str(plan), "--start").code == 0
        log = tmp_path / "engine.log"
        with background_engine(repo, log, "--until-idle") as engine:
            lead = open_lead(str(repo))
            asked = wait_until(lambda: [e for e in entries(lead.repo, "main") if e.get("kind") == "question"], 30,
                               "the command in the lead's inbox")
            qid = asked[0]["qid"]
            assert asked[0]["text"] == (f"deployer asks to run ({qid}): make deploy · answer: git balanced answer "
                                        f"{qid} --allow|--deny [REASON]")
            ran = balanced(repo, "answer", qid, "--allow")
            assert ran.code == 0 and ran.out.strip() == f"Answered {qid} (deployer): allowed", ran
            assert engine.wait(timeout=60) == 0, log.read_text()
        assert git(repo, "show", "main:src/deployed.txt") == "deployed", log.read_text()
        decision = json.loads(git(repo, "show", "main:src/decision.json"))["hookSpecificOutput"]
        assert decision == {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                            "permissionDecisionReason": f"The lead allowed it ({qid})."}
        settled = questions.find(lead.repo, qid)
        assert settled is not None and (settled["fields"]["kind"], settled["fields"]["tool"]) == ("command", "Bash")
        assert settled["fields"]["delivered"] == [1], "the answer was carried once"
