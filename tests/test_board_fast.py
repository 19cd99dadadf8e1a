"""The board's and the inbox's read path (front.py, without click): on a lead with done jobs (landed, failed,
more than the board shows before it folds them), live ones (finished and waiting for a check, queued) and a plan
waiting to start, each prints exactly what cli.py's click app prints, text and JSON; and none of them imports
`dataclasses` (with `inspect` and `ast`), the state's dataclasses, `shutil` or the door's heavy parts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from git_balanced import jobs
from git_balanced.channel import inbox
from git_balanced.git import Repo
from git_balanced.state import cache, refs
from git_balanced.vocab import JobState
from tests.support.plans import lead_repo, piece, plan
from tests.test_startup import both

READS = [["board"], ["board", "--json"], ["board", "--all"], ["board", "--all", "--json"], ["inbox"],
         ["inbox", "--json"]]
NOT_ON_THE_READ_PATH = ("dataclasses", "inspect", "ast", "shutil", "git_balanced.state.views", "click", "rich",
                        "pydantic")


@pytest.fixture(scope="module")
def lead(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A started plan whose jobs are written as the engine writes them: five landed and one failed (more done rows
    than FOLD_AFTER, and a failure under Now), one finished and waiting for its check, one queued; a second plan
    stored and not started (under Next); and the inbox's lines naming the jobs."""
    repo = lead_repo(tmp_path_factory.mktemp("board-fast"))
    names = [f"p{i}" for i in range(5)] + ["bad", "waiting", "queued"]
    assert plan(repo, [piece(n, f"echo {n} > {n}.txt") for n in names], "--start", task="Work").code == 0
    assert plan(repo, [piece("later", "echo later > later.txt")], task="Waits to start").code == 0
    r = Repo.discover(repo)
    started = [pid for pid, st in cache.read_all(r, "plans").items() if st["state"] == "started"]
    tip = r.rev_parse("main") or ""
    for n in names:
        jid = jobs.place(r, {"plan": started[0], "plan_task": "Work", "piece": n, "task": f"Do {n}.",
                             "title": f"Do {n}.", "agent": "shell", "run": f"echo {n} > {n}.txt", "machine": "local",
                             "branch": f"balanced/{n}", "base": tip, "attempt": 1, "lead": "main"})
        chain = refs.ref_for("jobs", jid)
        if n == "queued":
            continue
        refs.append(r, chain, "started", f"{n}: started", {"started_at": 1.0e9, "pid": 1}, state=JobState.RUNNING)
        if n == "bad":
            refs.append(r, chain, "failed", f"{n}: failed", {"failure": "command-failed", "exit_code": 3,
                                                            "reason": "the command exited 3"}, state=JobState.FAILED)
            inbox.post(r, "main", f"{n} did not finish: the command exited 3", kind="failed", job=jid)
            continue
        refs.append(r, chain, "finished", f"{n}: finished", {"exit_code": 0, "head": tip, "commits": 1,
                                                           "outcome": "done"}, state=JobState.FINISHED)
        if n.startswith("p"):
            refs.append(r, chain, "landed", f"{n}: landed", {"landed": tip, "landed_in": "main"},
                        state=JobState.LANDED)
            inbox.post(r, "main", f"balanced/{n} landed in main as {tip[:7]}", kind="landed", job=jid)
    return repo


def test_the_read_path_prints_what_click_prints(lead: Path) -> None:
    for args in READS:
        fast, slow = both(lead, args, None)
        assert fast.code == 0 and fast == slow, f"`git balanced {' '.join(args)}` differs through the front door"
    shown = json.loads(both(lead, ["board", "--all", "--json"], None)[0].out)
    states = sorted(r["state"] for r in shown["jobs"])
    assert states == ["failed", "finished", "landed", "landed", "landed", "landed", "landed", "queued"], states
    board = both(lead, ["board"], None)[0].out
    assert "5 landed · 1 failed" in board and "Now\n  ✗ bad" in board, "done rows fold; the failure waits on you"
    assert "waiting" in board and "later" in board, "the live rows, and the plan not started, are shown"
    assert "[e6] bad did not finish" in both(lead, ["inbox"], None)[0].out, "the inbox names workers by handle"


def test_the_read_path_imports_no_dataclasses(lead: Path) -> None:
    """The reads one after another in one fresh interpreter, as the console script starts it: after each, none of
    the modules named is loaded."""
    script = ("import io, json, sys\nfrom git_balanced import front\nfound = {}\n"
              f"for args in {READS!r}:\n"
              "    sys.stdout = io.StringIO()\n"
              "    code = front.main(args)\n"
              f"    found[' '.join(args)] = [code, sorted(m for m in {NOT_ON_THE_READ_PATH!r} if m in sys.modules)]\n"
              "sys.stdout = sys.__stdout__\nprint(json.dumps(found))\n")
    warm = "from git_balanced import front\n" + "".join(f"front.main({args!r})\n" for args in READS)
    subprocess.run([sys.executable, "-c", warm], cwd=lead, capture_output=True, timeout=60, check=True)
    # ^ the cache made first (a cold one folds every chain, as it must): the claim is of the reads once it is warm,
    # whichever test of this module ran before this one
    cp = subprocess.run([sys.executable, "-c", script], cwd=lead, capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, cp.stderr
    assert json.loads(cp.stdout) == {" ".join(args): [0, []] for args in READS}, cp.stdout


def test_the_handles_of_some_jobs_are_theirs_among_all(lead: Path) -> None:
    """A folded board names only the rows it shows: each handle as it is when every job is named."""
    from git_balanced import handles

    repo = Repo.discover(lead)
    every = handles.of_repo(repo, "main")
    some = set(sorted(every)[::3])
    assert len(every) == 8 and handles.of_repo(repo, "main", only=some) == {j: every[j] for j in some}
