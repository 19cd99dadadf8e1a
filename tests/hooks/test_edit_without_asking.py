"""`workers_edit_without_asking` does what it says for each agent: under a lead in its default mode (which asks
before edits and commands), a worker's edit in its own worktree goes ahead unasked, and only its command goes to
the lead. The real Claude Code, Codex and Pi, started as the engine starts them, against the scripted model."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pytest

from git_balanced import jobs as J
from git_balanced.channel import questions
from git_balanced.engine import workers
from git_balanced.lead import open_lead
from git_balanced.machines.reach.hosts import LocalHost
from tests.hooks.test_agent import ask_in_background
from tests.hooks.test_modes import hook, lead_in, pending, worker_env
from tests.support import agent_home
from tests.support.builders import make_repo
from tests.support.cli import balanced
from tests.support.hook_inputs import claude_bash
from tests.support.model_server import ModelServer, run_shell, say, write_file

ENVS = {"claude": agent_home.claude_env, "codex": agent_home.codex_env, "pi": agent_home.pi_env}


@pytest.fixture
def lead_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "lead")


def test_an_edit_in_its_worktree_goes_ahead_under_a_lead_that_asks(lead_repo: Path, tmp_path: Path) -> None:
    worktree = make_repo(tmp_path / "wt")
    lead_in(lead_repo, "default")
    env = worker_env(lead_repo, worktree)
    assert env["GIT_BALANCED_WORKER_MODE"] == "ask" and env["GIT_BALANCED_EDIT_WITHOUT_ASKING"] == "1"
    write = {**claude_bash(worktree, ""), "tool_name": "Write",
             "tool_input": {"file_path": str(worktree / "a.txt"), "content": "a\n"}}
    out = hook(worktree, "pre-tool-use", write, env).out
    assert '"permissionDecision": "allow"' in out and "Workers edit without asking" in out, out
    # Outside its worktree, an edit still waits for the lead.
    elsewhere = {**write, "tool_input": {"file_path": str(tmp_path / "elsewhere.txt"), "content": "x\n"}}
    answered, _ = ask_in_background(worktree, elsewhere, env)
    q = pending(lead_repo)
    assert (q["kind"], q["text"]) == ("edit", str(tmp_path / "elsewhere.txt")), q
    assert balanced(lead_repo, "answer", q["qid"], "--deny", "no").code == 0
    answered.join(30)


@pytest.mark.parametrize("agent", ["claude", "codex", "pi"])
def test_real_worker_edits_unasked_and_its_command_waits_for_the_lead(
        agent: str, tmp_path: Path, agent_bin: str, lead_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lead_in(lead_repo, "default")  # the lead asks before edits and commands
    monkeypatch.setenv("GIT_BALANCED_NO_FENCE", "1")  # its hooks ask through this very git balanced
    lead = open_lead(str(lead_repo))
    job = J.one(lead.repo, J.place(lead.repo, {
        "plan": "p1", "piece": "notes", "task": "Do the piece.", "lead": "main", "machine": "local",
        "branch": "balanced/notes", "attempt": 1, "agent": agent}))
    assert job is not None
    host = LocalHost(lead.repo)
    request = workers.build_request(lead, job, host, None, None, True, []).to_json()
    tree = make_repo(tmp_path / "tree")
    run_dir = tmp_path / "run"
    for name, content in request["files"].items():
        (run_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (run_dir / name).write_text(content)
    wt = host.worktree_path(job.id)
    argv = [a.replace("{run_dir}", str(run_dir)).replace(wt, str(tree)) for a in request["argv"]]
    turns = [write_file(f"{tree}/notes.txt", "edited\n"), run_shell("sh -c 'echo ran > ran.txt'"), say("Done.")]
    asked: list[dict] = []
    done = threading.Event()

    def lead_answers() -> None:  # the lead says no to whatever it is asked, until the worker ends
        while not done.wait(0.2):
            for q in questions.all_questions(lead.repo).values():
                if q["state"] == "open" and q["fields"] not in asked:
                    asked.append(q["fields"])
                    balanced(lead_repo, "answer", q["fields"]["qid"], "--deny", "not that")

    t = threading.Thread(target=lead_answers, daemon=True)
    t.start()
    with ModelServer(turns) as server:
        full = {**ENVS[agent](Path(os.environ["HOME"]), server.url), **request["env"],
                "GIT_BALANCED_WORKTREE": str(tree)}
        full["PATH"] = agent_bin + os.pathsep + full["PATH"]
        cp = subprocess.run(argv, cwd=tree, env=full, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            timeout=180)
    done.set()
    t.join(30)
    log = cp.stdout + cp.stderr
    assert (tree / "notes.txt").read_text() == "edited\n", f"the edit went ahead unasked:\n{log[-3000:]}"
    assert not (tree / "ran.txt").exists(), f"the denied command did not run:\n{log[-3000:]}"
    assert [(q["kind"], q["text"]) for q in asked] == [("command", "sh -c 'echo ran > ran.txt'")], asked
    assert len(questions.all_questions(lead.repo)) == 1, "only the command was a question"
