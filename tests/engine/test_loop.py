"""Plans and the engine on this machine: dependencies, retries, budgets, crashes, the lock."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from git_balanced.engine.background import EngineLock
from git_balanced.job_events import Started, record
from git_balanced.lead import open_lead
from tests.support.builders import git
from tests.support.cli import balanced
from tests.support.plans import board, engine, inbox_text, jobs_of, lead_repo, piece, plan
from tests.support.wait import holders, interruptible, reap, wait_for_file, wait_until


def test_a_plan_lands_in_order(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    r = plan(repo, [piece("alpha", "echo a > src/alpha.txt"), piece("beta", "echo b > src/beta.txt"),
                    piece("gamma", "cat src/alpha.txt src/beta.txt > src/gamma.txt", after=["alpha", "beta"])],
             "--start", budget=2.0)
    assert r.code == 0, r
    assert "After: alpha and beta (starts once landed)" in r.out
    assert "$0.67" in r.out and "$0.66" in r.out, "the budget is split by size"
    assert engine(repo, "--until-idle").code == 0
    assert (repo / "src" / "gamma.txt").read_text() == "a\nb\n", "gamma started from a tip with both"
    rows = {j["piece"]: j for j in board(repo)["jobs"]}  # type: ignore[index]
    assert all(j["state"] == "landed" for j in rows.values()), rows
    assert rows["gamma"]["base"] != rows["alpha"]["base"], "gamma's base is the tip after alpha and beta"
    assert git(repo, "merge-base", "--is-ancestor", str(rows["alpha"]["landed"]), str(rows["gamma"]["base"])) == ""
    text = inbox_text(repo)
    assert "Its check passed, so balanced/alpha landed in main as" in text
    assert "Plan 'A test plan' is done: 3 landed" in text
    assert "gamma started on local; it waited: alpha, beta landed" in text, "the lead hears a waiting piece start"
    assert not list((Path(os.environ["HOME"]) / ".balanced" / "worktrees").glob("lead-*/1*")), \
        "landed workers' worktrees are cleaned up"
    assert git(repo, "branch", "--list", "balanced/*").count("balanced/") == 3, "branches are kept"


def test_a_piece_that_always_fails_ends_after_three_attempts(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    before = git(repo, "rev-parse", "main")
    plan(repo, [piece("broken", "echo nope; exit 4")], "--start")
    r = engine(repo, "--until-idle")
    assert r.code == 1 and "broken failed: the command exited 4" in r.err, r
    rows = jobs_of(repo, "broken")
    assert [j["attempt"] for j in rows] == [1, 2, 3]
    assert [j["state"] for j in rows] == ["retried", "retried", "failed"]
    assert git(repo, "rev-parse", "main") == before, "the lead's branch is untouched"
    text = inbox_text(repo)
    assert "Tries again: attempt 2" in text and "Not tried again: that was attempt 3 of 3" in text


def test_bad_plans_are_refused(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    cases = [
        ([piece("a", "true"), piece("a", "true")], "ids must be unique"),
        ([piece("a", "true", after=["zed"])], "zed"),
        ([piece("a", "true", after=["b"]), piece("b", "true", after=["a"])], "circle"),
        ([piece("Bad Id", "true")], "Bad Id"),
        ([{"id": "a", "task": "t", "run": "true", "agent": "claude"}], "run"),
        ([{"id": "a", "task": "t", "agent": "robot"}], "robot"),
        ([piece("a", "true", machine="nowhere")], "nowhere"),
    ]
    for pieces, words in cases:
        r = plan(repo, pieces)
        assert r.code == 1, (pieces, r)
        assert words in r.err and "Traceback" not in r.err, r.err
    r = plan(repo, [piece("a", "true")], budget=-1)
    assert r.code == 1 and "budget" in r.err
    assert balanced(repo, "plan", "missing.yaml").code == 1
    assert balanced(repo, "plans", "--json").out.strip() == "[]", "nothing was stored"


def test_a_killed_engine_resumes(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    gate = tmp_path / "gate"  # `slow` runs until the test opens it, after its engine was killed
    plan(repo, [piece("slow", f"until [ -e {gate} ]; do sleep 0.05; done; echo s > src/slow.txt"),
                piece("quick", "echo q > src/q.txt")], "--start")
    env = dict(os.environ)
    p = subprocess.Popen([sys.executable, "-m", "git_balanced.cli", "engine"], cwd=repo, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until(lambda: any(j["state"] == "running" for j in board(repo)["jobs"]), 30,  # type: ignore[union-attr]
               "the engine to start a worker")
    p.send_signal(signal.SIGKILL)
    p.wait()
    # The kernel lets the lock go once no process has the file open: wait for that, naming who holds it if
    # it lasts (the next engine follows at once, without a process's start-up to hide a moment's delay).
    lock = EngineLock(open_lead(str(repo)))
    wait_until(lambda: lock.holder() is None, 30, "the killed engine's lock to be let go",
               said=lambda: holders(lock.path))
    gate.touch()
    assert engine(repo, "--until-idle").code == 0
    for name in ("slow", "quick"):
        rows = jobs_of(repo, name)
        assert len(rows) == 1 and rows[0]["state"] == "landed", f"{name} started once and landed: {rows}"


def test_a_crash_right_after_starting_starts_nothing_twice(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    count = tmp_path / "runs"
    plan(repo, [piece("once", f"echo x >> {count}; echo o > src/o.txt")], "--start")
    assert engine(repo, "--once", crash_at="engine-after-start").code == 137
    assert engine(repo, "--until-idle").code == 0
    assert count.read_text() == "x\n", "the worker ran once"
    assert [j["state"] for j in jobs_of(repo, "once")] == ["landed"]


def test_a_killed_runner_is_tried_again(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    marker = tmp_path / "first"
    run = f'if [ -f {marker} ]; then echo ok > src/ok.txt; else touch {marker}; sleep 60; fi'
    plan(repo, [piece("victim", run)], "--start")
    assert engine(repo, "--once").code == 0
    runs = Path(os.environ["HOME"]) / ".balanced" / "runs"
    job = jobs_of(repo, "victim")[0]
    # The runner writes the agent's pid once it has started it, a moment after it answered the start.
    wait_for_file(runs / str(job["id"]) / "agent_pid", 30, "the runner to record its agent's pid")
    wait_until(marker.exists, 30, "the agent to run its command")  # in its fence, a moment after it started
    pid = int((runs / str(job["id"]) / "pid").read_text().split()[0])
    agent = int((runs / str(job["id"]) / "agent_pid").read_text().split()[0])
    os.kill(pid, signal.SIGKILL)
    os.killpg(agent, signal.SIGKILL)
    assert engine(repo, "--until-idle").code == 0
    rows = jobs_of(repo, "victim")
    assert [j["state"] for j in rows] == ["retried", "landed"], rows
    assert "died" in inbox_text(repo)


def test_one_engine_per_repository(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    r = balanced(repo, "engine", "--detach")
    assert r.code == 0 and "background" in r.out, r
    pid = re.search(r"\(pid (\d+)\)", r.out)
    assert pid, r.out
    # The engine writes its pid once it holds the lock.
    wait_for_file(repo / ".git" / "balanced" / "engine.pid", 30, "the background engine to take the lock")
    pid_file = (repo / ".git" / "balanced" / "engine.pid").read_text().split()
    tick = Path(f"/proc/{pid[1]}/stat").read_text().rsplit(")", 1)[1].split()[19]
    assert pid_file == [pid[1], tick], "its pid, and its start tick"
    second = engine(repo, "--once")
    assert second.code == 1 and "An engine runs for this repository already" in second.err
    stop = balanced(repo, "engine", "--stop")
    assert stop.code == 0 and "Stopped the engine" in stop.out, stop
    assert engine(repo, "--once").code == 0, "a stopped engine holds no lock"


def test_stop_retry_dismiss(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    plan(repo, [piece("long", "sleep 60")], "--start")
    engine(repo, "--once")
    job = jobs_of(repo, "long")[0]
    r = balanced(repo, "stop", str(job["id"]))
    assert r.code == 0, r
    engine(repo, "--once")
    assert jobs_of(repo, "long")[0]["state"] == "stopped"
    assert "you stopped it" in inbox_text(repo)
    assert len(jobs_of(repo, "long")) == 1, "a stopped job is not tried again by itself"
    r = balanced(repo, "retry", str(job["id"]))
    assert r.code == 0 and "attempt 2" in r.out
    assert [j["attempt"] for j in jobs_of(repo, "long")] == [1, 2]
    new = jobs_of(repo, "long")[1]
    assert balanced(repo, "stop", str(new["id"])).code == 0
    r = balanced(repo, "dismiss", str(job["id"]))
    assert r.code == 0
    assert [j["attempt"] for j in jobs_of(repo, "long")] == [2], "a dismissed job leaves the board"
    assert balanced(repo, "stop", "nosuchjob").code == 1


def test_worker_command_and_dirty_lead(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    (repo / "scratch.txt").write_text("mine\n")
    r = balanced(repo, "worker", "Write the notes file", "--run", "echo n > src/notes.txt")
    assert r.code == 0 and "balanced/write-the-notes-file" in r.out, r
    assert engine(repo, "--until-idle").code == 0
    assert (repo / "src" / "notes.txt").read_text() == "n\n"
    assert (repo / "scratch.txt").read_text() == "mine\n"
    assert "won't get them" in inbox_text(repo)


def test_budget_shares_reach_the_worker(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    plan(repo, [piece("a", 'printf "%s" "$BALANCED_TASK" > /dev/null; echo a > src/a.txt', size=3),
                piece("b", "echo b > src/b.txt")], "--start", budget=1.0)
    data = json.loads(balanced(repo, "plans", "--json").out)
    assert data[0]["budget_usd"] == 1.0
    engine(repo, "--until-idle")
    rows = {j["piece"]: j for j in board(repo)["jobs"]}  # type: ignore[index]
    assert rows["a"]["budget_usd"] == 0.75 and rows["b"]["budget_usd"] == 0.25


def test_nothing_starts_before_the_check_is_allowed(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    git(repo, "commit", "-q", "--allow-empty", "-m", "x")
    from tests.support.builders import commit

    commit(repo, {".magnum/settings.toml": '[worktree]\ncheck = "true"\n[balanced]\nagent = "shell"\n'}, "new check")
    plan(repo, [piece("a", "echo a > src/a.txt")], "--start")
    r = engine(repo, "--until-idle")
    assert r.code == 1, "the piece waits for you"
    assert "Nothing starts" in r.err and "git balanced allow" in r.err
    assert "a never started. Nothing starts" in r.err, r.err
    assert jobs_of(repo, "a") == [], "no worker ran an unapproved command"
    assert "Nothing starts" in inbox_text(repo)
    balanced(repo, "allow", "--yes")
    assert engine(repo, "--until-idle").code == 0
    assert [j["state"] for j in jobs_of(repo, "a")] == ["landed"]


def test_landing_waits_while_your_changes_overlap(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    (repo / "src" / "a.txt").write_text("my own a\n")
    plan(repo, [piece("a", "echo theirs > src/a.txt")], "--start")
    # Engine passes until the worker is done and its landing meets your file.
    r = wait_until(lambda: (ran := engine(repo, "--once")).err.count("balanced/a waits:") and ran, 60,
                   "the landing to wait for your file", said=lambda: inbox_text(repo))
    assert "balanced/a waits: your untracked file src/a.txt" in r.err, r.err
    assert (repo / "src" / "a.txt").read_text() == "my own a\n", "your file is kept"
    (repo / "src" / "a.txt").unlink()
    assert engine(repo, "--until-idle").code == 0
    assert [j["state"] for j in jobs_of(repo, "a")] == ["landed"]


def test_board_watch_redraws_live(tmp_path: Path) -> None:
    import pty
    import select

    repo = lead_repo(tmp_path)
    plan(repo, [piece("alpha", "echo a > src/alpha.txt")], "--start")
    pid, fd = pty.fork()
    if pid == 0:  # the child: the board, live, on a terminal
        os.chdir(repo)
        interruptible()
        os.execvp(sys.executable, [sys.executable, "-m", "git_balanced.cli", "board", "--watch"])
    seen = b""
    try:
        deadline = time.time() + 20
        while time.time() < deadline and b"alpha" not in seen:
            if select.select([fd], [], [], 0.5)[0]:
                seen += os.read(fd, 65536)
        assert b"about to start" in seen, seen
        engine(repo, "--until-idle")
        deadline = time.time() + 20
        while time.time() < deadline and b"landed in main" not in seen:
            if select.select([fd], [], [], 0.5)[0]:
                seen += os.read(fd, 65536)
        assert b"landed in main" in seen, "the board redrew with the landing"
    finally:
        os.kill(pid, signal.SIGINT)
        reap(pid, 20, "`board --watch` after Ctrl-C")


def test_lost_clock_survives_between_single_passes(tmp_path: Path) -> None:
    """`engine --once` run again and again still counts a machine's time out of reach toward lost_after."""
    from git_balanced import jobs as J
    from git_balanced.git import Repo
    from git_balanced.machines.inventory import records as inventory

    repo = lead_repo(tmp_path, extra="lost_after = 1\n")
    ssh = Path(os.environ["GIT_BALANCED_SSH_CONFIG"])
    ssh.parent.mkdir(parents=True, exist_ok=True)
    ssh.write_text("Host ghost\n  HostName 127.0.0.1\n  Port 9\n  ConnectTimeout 2\n")  # nothing listens there
    assert balanced(repo, "machines", "add", "ghost").code == 0
    r = Repo.discover(repo)
    inventory.set_readiness(r, "ghost", {"ready": True})
    plan(repo, [piece("far", "true", machine="ghost")])
    plan_id = json.loads(balanced(repo, "plans", "--json").out)[0]["id"]
    jid = J.place(r, {"plan": plan_id, "piece": "far", "task": "Do far.", "agent": "shell", "run": "true",
                      "machine": "ghost", "branch": "balanced/far", "lead": "main", "attempt": 1,
                      "base": git(repo, "rev-parse", "main")})
    record(r, jid, Started(pid=None, worktree="", started_at=time.time(), node=""), "far: started on ghost")
    balanced(repo, "start", plan_id)
    engine(repo, "--once")
    assert jobs_of(repo, "far")[0]["state"] == "running", "out of reach for a moment is not lost yet"
    # Out of reach for longer than lost_after, across passes that each start afresh.
    wait_until(lambda: engine(repo, "--once") and jobs_of(repo, "far")[0]["state"] in ("lost", "retried"), 30,
               "the machine out of reach to count as lost", said=lambda: jobs_of(repo, "far"))
    assert "could not be reached for a while" in inbox_text(repo)


def test_until_idle_returns_while_a_piece_waits_for_its_named_machine(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    ssh = Path(os.environ["GIT_BALANCED_SSH_CONFIG"])
    ssh.parent.mkdir(parents=True, exist_ok=True)
    ssh.write_text("Host ghost\n  HostName 127.0.0.1\n  Port 9\n")
    assert balanced(repo, "machines", "add", "ghost").code == 0
    r = balanced(repo, "worker", "Far away", "--run", "echo x > src/x.txt", "--machine", "ghost")
    assert r.code == 0 and "it waits for that machine" in r.out, r
    r = engine(repo, "--until-idle", timeout=60)
    assert r.code == 1, "nothing can move, so it returns, and the piece waits"
    assert "far-away waits for ghost, the machine its plan names" in r.err, r.err
    assert [j["state"] for j in jobs_of(repo, "far-away")] == ["queued"]
    assert "waits for ghost, the machine its plan names" in inbox_text(repo)


def test_retry_keeps_one_attempt_per_piece(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path, extra="attempts = 1\n")
    plan(repo, [piece("bad", "exit 3")], "--start")
    engine(repo, "--until-idle")
    first = jobs_of(repo, "bad")[0]
    assert first["state"] == "failed"
    assert balanced(repo, "retry", str(first["id"])).code == 0
    again = balanced(repo, "retry", str(first["id"]))
    assert again.code == 1 and "was tried again already" in again.err, again
    assert len(jobs_of(repo, "bad")) == 2, "one new attempt, not two"


def test_a_piece_whose_agent_no_machine_has_waits_and_a_missing_agent_moves_it(tmp_path: Path) -> None:
    import shutil

    from git_balanced.machines.prepare import agents_probe

    repo = lead_repo(tmp_path)
    assert shutil.which("codex") is None, "this test needs a PATH without codex"
    ran = plan(repo, [{"id": "ai", "task": "Write a file.", "agent": "codex"}], "--start", "--wait")
    assert "no ticked machine can take it now: local: Codex is not installed there" in ran.out, ran.out
    r = engine(repo, "--until-idle")
    assert "ai failed" not in r.err + r.out, r
    rows = jobs_of(repo, "ai")
    assert [j["state"] for j in rows] == ["queued"], "it waits instead of failing"
    assert "waits" in board_text(repo) and "Codex is not installed there" in board_text(repo)

    # What was known of this machine says Codex is there, and the worker finds it is not: the piece moves
    # (as a lost machine's piece), this machine is asked again, and the piece waits, not failed.
    repo2 = lead_repo(tmp_path / "two")
    agents_probe.keep("local", {"agents": {"codex": {"installed": True, "signed_in": True, "version": "0.171.0"}}})
    plan(repo2, [{"id": "ai", "task": "Write a file.", "agent": "codex"}], "--start")
    r = engine(repo2, "--until-idle")
    rows = jobs_of(repo2, "ai")
    assert [j["state"] for j in rows] == ["retried", "queued"], rows
    assert "could not start codex" in str(rows[0]["reason"]), rows[0]
    said = inbox_text(repo2)
    assert "Tries again on a machine that has its agent" in said, said
    assert not agents_probe.kept()["local"]["agents"]["codex"]["installed"], "the machine was asked again"


def board_text(repo: Path) -> str:
    return balanced(repo, "board").out


def test_a_machine_where_setup_ran_is_preferred_among_equals(tmp_path: Path) -> None:
    from git_balanced.git import Repo
    from git_balanced.machines.inventory import records as inventory
    from git_balanced.machines.inventory.placement import Seat, choose
    from tests.support.builders import commit

    repo = lead_repo(tmp_path)
    commit(repo, {".magnum/settings.toml": '[worktree]\nsetup = "true"\ncheck = "true"\n[balanced]\nagent = "shell"\n'},
           "a setup")
    balanced(repo, "allow", "--yes")
    plan(repo, [piece("a", "echo a > src/a.txt")], "--start")
    assert engine(repo, "--until-idle").code == 0
    assert inventory.readiness(Repo.discover(repo))["local"]["setup_done"] is True
    pick = choose([Seat("box", "normal"), Seat("zed", "normal", setup_done=True)])
    assert pick.machine == "zed" and "set up already" in pick.why, "among equals, the one set up wins over the name"
