"""Questions from workers on other machines: `git balanced ask` there is the runner's script, the question
waits in the run folder, the engine carries it to the lead's inbox and the answer back (store and forward)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from git_balanced import runner
from git_balanced.agents.shell import ShellAdapter, commit_message
from tests.support.builders import git, make_repo

RUNNER = str(Path(runner.__file__))
BRANCH = "balanced/asker"


def call(action: str, request: dict) -> dict:
    """`python runner.py ACTION` with the request on stdin, as a machine runs it; its one-line answer."""
    cp = subprocess.run([sys.executable, RUNNER, action], input=json.dumps(request), capture_output=True,
                        text=True, timeout=60)
    assert cp.returncode == 0, f"runner {action} exited {cp.returncode}: {cp.stdout}\n{cp.stderr}"
    return json.loads(cp.stdout)


def status_of(runs: Path, job: str) -> dict:
    return call("status", {"jobs": [job], "runs_dir": str(runs)})["jobs"][job]


def until(what: str, probe: Callable[[], Any], timeout: float = 20) -> Any:
    """Poll `probe` until it returns something true; that value."""
    deadline = time.monotonic() + timeout
    while True:
        got = probe()
        if got:
            return got
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def start_asker(tmp_path: Path, run: str, **extra: object) -> tuple[Path, Path]:
    """Start a shell worker that asks, as the engine starts one on another machine: (repo, runs folder)."""
    repo = make_repo(tmp_path / "lead", {"README.md": "sample\n"})
    runs, wt = tmp_path / "runs", tmp_path / "worktrees" / "j1"
    built = ShellAdapter().build(task="Ask for the port.", rules="", model=None, budget_usd=None,
                                 worktree=str(wt), run_dir=str(runs / "j1"), run=run)
    req = {"job": "j1", "repo": str(repo), "worktree": str(wt), "branch": BRANCH,
           "base": git(repo, "rev-parse", "HEAD"), "argv": built.argv, "env": built.env, "files": built.files,
           "commit_message": commit_message("asker", "Ask for the port."), "commit_leftovers": True,
           "runs_dir": str(runs), "grace": 2, "ask": True, **extra}
    assert call("start", req)["pid"] > 0
    return repo, runs


def test_the_runners_ask_stores_the_question_and_prints_the_answer(tmp_path: Path) -> None:
    repo, runs = start_asker(tmp_path, 'git balanced ask "Which port?" > port.txt', ask_timeout=600)
    st = until("the question", lambda: status_of(runs, "j1").get("questions"))
    assert [(q["n"], q["text"]) for q in st] == [(1, "Which port?")], st
    asked = json.loads((runs / "j1" / "questions" / "1.json").read_text())
    assert asked["text"] == "Which port?" and asked["asked_at"] > 0
    assert status_of(runs, "j1")["questions"] == st, "until it is marked forwarded, status hands it over again"
    assert call("forwarded", {"job": "j1", "runs_dir": str(runs), "ns": [1]}) == {"job": "j1", "forwarded": [1]}
    assert "questions" not in status_of(runs, "j1"), "a forwarded question is handed over once"
    assert status_of(runs, "j1")["state"] == "running", "the worker waits for its answer"
    answered = call("answer", {"job": "j1", "runs_dir": str(runs), "n": 1, "text": "8080", "decision": None})
    assert answered == {"job": "j1", "n": 1, "answered": True}
    st = until("the worker's end", lambda: (s := status_of(runs, "j1"))["state"] == "finished" and s)
    assert st["result"]["exit_code"] == 0 and st["result"]["commits"] == 1, st
    assert git(repo, "show", f"{BRANCH}:port.txt") == "8080", "ask printed the lead's answer"
    assert "Asked the lead (question 1 of this worker)" in st["log_tail"]
    assert not (repo / "port.txt").exists(), "the lead's checkout is untouched"


def test_runner_refuses_answers_to_questions_never_asked(tmp_path: Path) -> None:
    _, runs = start_asker(tmp_path, 'git balanced ask "Which port?" > port.txt; echo done')
    until("the question", lambda: status_of(runs, "j1").get("questions"))
    for req, words in [({"n": 2, "text": "x"}, "the job j1 asked no question 2"),
                       ({"n": 0, "text": "x"}, "a question's number must be a whole number from 1, not 0"),
                       ({"n": 1, "text": "x", "decision": "maybe"}, "must be allow, deny or null, not 'maybe'"),
                       ({"ns": ["1"]}, "not '1'")]:
        action = "forwarded" if "ns" in req else "answer"
        got = call(action, {"job": "j1", "runs_dir": str(runs), **req})
        assert words in got.get("error", ""), (req, got)
    call("answer", {"job": "j1", "runs_dir": str(runs), "n": 1, "text": "no port", "decision": "deny"})
    st = until("the worker's end", lambda: (s := status_of(runs, "j1"))["state"] == "finished" and s)
    assert st["result"]["exit_code"] == 0, "`;` goes on after a denied ask"


def shim(tmp_path: Path) -> Path:
    """The runner's `git-balanced` script, written into a run folder of its own."""
    folder = runner._write_ask_shim(str(tmp_path / "run"))
    return Path(folder) / "git-balanced"


def test_the_script_answers_a_deny_with_its_reason_and_exit_1(tmp_path: Path) -> None:
    path = shim(tmp_path)
    assert os.access(path, os.X_OK)
    p = subprocess.Popen([str(path), "ask", "May I drop the table?"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    until("the question file", lambda: (tmp_path / "run" / "questions" / "1.json").exists())
    (tmp_path / "run" / "answers").mkdir()
    (tmp_path / "run" / "answers" / "1.json").write_text(json.dumps({"text": "keep it", "decision": "deny"}))
    out, err = p.communicate(timeout=10)
    assert (p.returncode, out) == (1, "keep it\n"), err


def test_the_script_gives_up_after_its_timeout_and_does_nothing_else(tmp_path: Path) -> None:
    path = shim(tmp_path)
    env = {**os.environ, "GIT_BALANCED_ASK_TIMEOUT": "1"}
    started = time.monotonic()
    cp = subprocess.run([str(path), "ask", "Anyone there?"], env=env, capture_output=True, text=True, timeout=20)
    assert cp.returncode == 1 and cp.stdout == ""
    assert "No answer came from the lead within 1 seconds" in cp.stderr
    assert time.monotonic() - started < 5
    cp = subprocess.run([str(path), "ask", "Anyone there?"], env=env, capture_output=True, text=True, timeout=20)
    assert (tmp_path / "run" / "questions" / "2.json").exists(), "a second ask gets the next number"
    for args in (["status"], ["ask"], ["ask", "  "], ["ask", "two", "words"]):
        cp = subprocess.run([str(path), *args], capture_output=True, text=True, timeout=20)
        assert cp.returncode == 1 and "only asks the lead: git balanced ask \"TEXT\"" in cp.stderr, (args, cp)
    assert sorted(p.name for p in (tmp_path / "run" / "questions").iterdir()) == ["1.json", "2.json"]
