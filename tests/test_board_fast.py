"""The board's and the inbox's read path (front.py, without click): on a lead with done jobs (landed, failed,
more than the board shows before it folds them), live ones (finished and waiting for a check, queued) and a plan
waiting to start, each prints exactly what cli.py's click app prints, text and JSON; and none of them imports
`dataclasses` (with `inspect` and `ast`), the state's dataclasses, `shutil` or the door's heavy parts."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from git_balanced import jobs
from git_balanced.git import Repo
from git_balanced.state import refs
from tests.support.plans import engine, lead_repo, piece, plan
from tests.test_startup import both

READS = [["board"], ["board", "--json"], ["board", "--all"], ["board", "--all", "--json"], ["inbox"],
         ["inbox", "--json"]]
NOT_ON_THE_READ_PATH = ("dataclasses", "inspect", "ast", "shutil", "git_balanced.state.views", "click", "rich",
                        "pydantic")


@pytest.fixture(scope="module")
def lead(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six pieces run by the engine (five land, one fails: more done rows than FOLD_AFTER), then a finished job
    waiting for its check and a queued one, and a plan stored and not started."""
    repo = lead_repo(tmp_path_factory.mktemp("board-fast"))
    done = [piece(f"p{i}", f"echo {i} > p{i}.txt") for i in range(5)] + [piece("bad", "exit 3")]
    assert plan(repo, done, "--start", task="Done work").code == 0
    engine(repo, "--until-idle")  # exit 1: a failed piece waits on you
    assert plan(repo, [piece("later", "echo later > later.txt")], task="Waits to start").code == 0
    r = Repo.discover(repo)
    tip = r.rev_parse("main") or ""
    for name, state in (("waiting", "finished"), ("queued", "queued")):
        jid = jobs.place(r, {"plan": "", "piece": name, "task": f"Do {name}.", "title": f"Do {name}.",
                             "agent": "shell", "machine": "local", "branch": f"balanced/{name}", "base": tip,
                             "attempt": 1, "lead": "main"})
        if state == "finished":
            chain = refs.ref_for("jobs", jid)
            refs.append(r, chain, "started", f"{name}: started", {"started_at": time.time(), "pid": 1}, state="running")
            refs.append(r, chain, "finished", f"{name}: finished", {"exit_code": 0, "head": tip, "commits": 1},
                        state="finished")
    return repo


def test_the_read_path_prints_what_click_prints(lead: Path) -> None:
    for args in READS:
        fast, slow = both(lead, args, None)
        assert fast.code == 0 and fast == slow, f"`git balanced {' '.join(args)}` differs through the front door"
    shown = json.loads(both(lead, ["board", "--all", "--json"], None)[0].out)
    states = sorted(r["state"] for r in shown["jobs"])
    assert states.count("landed") == 5 and "failed" in states, f"the lead has done jobs: {states}"
    board = both(lead, ["board"], None)[0].out
    assert "5 landed" in board and "bad" in board, "five landed rows fold into one line; the failure waits on you"


def test_the_read_path_imports_no_dataclasses(lead: Path) -> None:
    """Each read in a fresh interpreter, as the console script starts it."""
    for args in READS:
        script = ("import io, sys\nfrom git_balanced import front\nsys.stdout = io.StringIO()\n"
                  f"code = front.main({args!r})\nsys.stdout = sys.__stdout__\n"
                  f"print(code, sorted(m for m in {NOT_ON_THE_READ_PATH!r} if m in sys.modules))\n")
        cp = subprocess.run([sys.executable, "-c", script], cwd=lead, capture_output=True, text=True, timeout=60)
        assert cp.returncode == 0, cp.stderr
        assert cp.stdout.split() == ["0", "[]"], f"`git balanced {' '.join(args)}` imported {cp.stdout}"
