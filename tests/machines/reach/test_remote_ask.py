"""Questions from workers on other machines: `git balanced ask` there is the runner's script, the question
waits in the run folder, the engine carries it to the lead's inbox and the answer back (store and forward)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from git_balanced.agents.shell import ShellAdapter, commit_message
from git_balanced.channel import questions
from git_balanced.channel.inbox import entries
from git_balanced.lead import open_lead
from git_balanced.shipped import launch
from tests.support.builders import git, make_repo
from tests.support.cli import balanced
from tests.support.plans import background_engine
from tests.support.runner_calls import call, status_of
from tests.support.sshd import sshd_machines, wire_lead
from tests.support.wait import wait_until

BRANCH = "balanced/asker"


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
    st = wait_until(lambda: status_of(runs, "j1").get("questions"), 20, "the question")
    assert [(q["n"], q["text"]) for q in st] == [(1, "Which port?")], st
    asked = json.loads((runs / "j1" / "questions" / "1.json").read_text())
    assert asked["text"] == "Which port?" and asked["asked_at"] > 0
    assert status_of(runs, "j1")["questions"] == st, "until it is marked forwarded, status hands it over again"
    assert call("forwarded", {"job": "j1", "runs_dir": str(runs), "ns": [1]}) == {"job": "j1", "forwarded": [1]}
    assert "questions" not in status_of(runs, "j1"), "a forwarded question is handed over once"
    assert status_of(runs, "j1")["state"] == "running", "the worker waits for its answer"
    answered = call("answer", {"job": "j1", "runs_dir": str(runs), "n": 1, "text": "8080", "decision": None})
    assert answered == {"job": "j1", "n": 1, "answered": True}
    st = wait_until(lambda: (s := status_of(runs, "j1"))["state"] == "finished" and s, 20, "the worker's end")
    assert st["result"]["exit_code"] == 0 and st["result"]["commits"] == 1, st
    assert git(repo, "show", f"{BRANCH}:port.txt") == "8080", "ask printed the lead's answer"
    assert "Asked the lead (question 1 of this worker)" in st["log_tail"]
    assert not (repo / "port.txt").exists(), "the lead's checkout is untouched"


def test_runner_refuses_answers_to_questions_never_asked(tmp_path: Path) -> None:
    _, runs = start_asker(tmp_path, 'git balanced ask "Which port?" > port.txt; echo done')
    wait_until(lambda: status_of(runs, "j1").get("questions"), 20, "the question")
    for req, words in [({"n": 2, "text": "x"}, "the job j1 asked no question 2"),
                       ({"n": 0, "text": "x"}, "a question's number must be a whole number from 1, not 0"),
                       ({"n": 1, "text": "x", "decision": "maybe"}, "must be allow, deny or null, not 'maybe'"),
                       ({"ns": ["1"]}, "not '1'")]:
        action = "forwarded" if "ns" in req else "answer"
        got = call(action, {"job": "j1", "runs_dir": str(runs), **req})
        assert words in got.get("error", ""), (req, got)
    call("answer", {"job": "j1", "runs_dir": str(runs), "n": 1, "text": "no port", "decision": "deny"})
    st = wait_until(lambda: (s := status_of(runs, "j1"))["state"] == "finished" and s, 20, "the worker's end")
    assert st["result"]["exit_code"] == 0, "`;` goes on after a denied ask"


def shim(tmp_path: Path) -> Path:
    """The runner's `git-balanced` script, written into a run folder of its own."""
    folder = launch._write_ask_shim(str(tmp_path / "run"))
    return Path(folder) / "git-balanced"


def test_the_script_answers_a_deny_with_its_reason_and_exit_1(tmp_path: Path) -> None:
    path = shim(tmp_path)
    assert os.access(path, os.X_OK)
    p = subprocess.Popen([str(path), "ask", "May I drop the table?"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    wait_until(lambda: (tmp_path / "run" / "questions" / "1.json").exists(), 20, "the question file")
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
    bare = {**os.environ, "PATH": f"{path.parent}{os.pathsep}/usr/bin{os.pathsep}/bin"}
    for args in (["status"], ["hook", "pre-tool-use"], ["ask"], ["ask", "  "], ["ask", "two", "words"]):
        cp = subprocess.run([str(path), *args], env=bare, capture_output=True, text=True, timeout=20)
        assert cp.returncode == 1 and "only asks the lead: git balanced ask \"TEXT\"" in cp.stderr, (args, cp)
    assert sorted(p.name for p in (tmp_path / "run" / "questions").iterdir()) == ["1.json", "2.json"]


def test_the_script_leaves_all_but_ask_to_a_git_balanced_installed_there(tmp_path: Path) -> None:
    path = shim(tmp_path)
    own = tmp_path / "installed"
    own.mkdir()
    (own / "git-balanced").write_text('#!/bin/sh\necho "installed: $*"\nexit 3\n')
    (own / "git-balanced").chmod(0o755)
    env = {**os.environ, "PATH": os.pathsep.join([str(path.parent), str(own), "/usr/bin", "/bin"])}
    cp = subprocess.run([str(path), "hook", "pre-tool-use"], env=env, capture_output=True, text=True, timeout=20)
    assert (cp.returncode, cp.stdout) == (3, "installed: hook pre-tool-use\n"), "the agents' hooks still work"
    cp = subprocess.run([str(path), "ask"], env={**env, "GIT_BALANCED_ASK_TIMEOUT": "1"}, capture_output=True,
                        text=True, timeout=20)
    assert cp.returncode == 1 and "only asks the lead" in cp.stderr, "ask is always the runner's own"


# -- end to end: a worker on an SSH machine asks, the lead answers, the engine carries both ways ---------------
CHECK = '#!/bin/sh\n# The port is the one the lead gave.\n[ "$(cat src/port.txt)" = 8080 ] || [ ! -e src/port.txt ]\n'
SETTINGS = '[worktree]\ncheck = "sh check.sh"\n\n[balanced]\nagent = "shell"\n'


@pytest.mark.sshd
def test_a_worker_on_an_ssh_machine_asks_and_its_answer_lands(tmp_path: Path) -> None:
    with sshd_machines(tmp_path, ["alpha"]) as machines:
        repo = make_repo(tmp_path / "proj", {"README.md": "sample\n", "check.sh": CHECK, "src/.keep": ""})
        wire_lead(repo, machines, SETTINGS)
        plan = tmp_path / "plan.yaml"
        plan.write_text(json.dumps({"task": "Serve it", "pieces": [{
            "id": "porter", "task": "Ask the lead for the port.", "agent": "shell", "machine": "alpha",
            "run": 'git balanced ask "Which port?" > answer.txt && mv answer.txt src/port.txt'}]}))
        assert balanced(repo, "plan", str(plan), "--start").code == 0
        log = tmp_path / "engine.log"
        with background_engine(repo, log, "--until-idle") as engine:
            lead = open_lead(str(repo))
            asked = wait_until(lambda: [e for e in entries(lead.repo, "main") if e.get("kind") == "question"], 30,
                               "the question in the lead's inbox")
            qid = asked[0]["qid"]
            assert asked[0]["text"] == f"porter asks ({qid}): Which port? · answer: git balanced answer {qid} TEXT"
            ns = wait_until(lambda: (questions.find(lead.repo, qid) or {}).get("fields", {}).get("remote_ns"), 20,
                            "the question's number there")
            assert ns == [1], "the question remembers the number it has on alpha"
            ran = balanced(repo, "answer", qid, "8080")
            assert ran.code == 0 and ran.out.strip() == f"Answered {qid} (porter): 8080", ran
            assert engine.wait(timeout=60) == 0, log.read_text()
        assert git(repo, "show", "main:src/port.txt") == "8080", log.read_text()
        note = next(json.loads(line) for line in git(repo, "log", "--first-parent", "--notes=balanced",
                                                     "--format=%N", "main").splitlines() if line.startswith("{"))
        assert (note["piece"], note["machine"], note["result"]) == ("porter", "alpha", "pass"), note
        settled = questions.find(lead.repo, qid)
        assert settled is not None and settled["fields"]["delivered"] == [1], "the answer was carried once"
        assert [e["qid"] for e in entries(lead.repo, "main") if e.get("kind") == "question"] == [qid], \
            "the engine's passes posted the question once"
        alpha = machines.by_name("alpha")
        assert not list((alpha.home / ".balanced" / "runs").glob("*/questions")), "landed: its run folder is gone"
