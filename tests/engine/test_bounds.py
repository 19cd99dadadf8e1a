"""Nothing waits for ever: `--until-idle` returns when only you can move things, a check that hangs is stopped at
its timeout (its whole tree), `engine --stop` stops an engine in any state, a killed engine's check is ended
before its folder is used again, and a landing limit the queue cannot work with is replaced."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from git_balanced.commands import engine as engine_command
from git_balanced.engine.background import EngineLock
from git_balanced.lead import open_lead
from tests.support.builders import git
from tests.support.cli import Ran, balanced
from tests.support.plans import background_engine, jobs_of, lead_repo, piece, plan
from tests.support.wait import gone, holders, wait_for_file, wait_until


def engine_process(repo: Path, *args: str, timeout: float = 20) -> Ran:
    """`git balanced engine ARGS` as a real process; the test fails, naming it, if it has not returned within
    `timeout` seconds (a hang is what these tests look for)."""
    p = subprocess.Popen([sys.executable, "-m", "git_balanced.cli", "engine", *args], cwd=repo,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        pytest.fail(f"`engine {' '.join(args)}` did not return within {timeout:.0f} s:\n{out}\n{err}")
    return Ran(p.returncode, out, err)


def ended(*pids: int, what: str) -> None:
    """Wait for the processes to be gone: a SIGKILL takes a moment to arrive. The test fails naming `what`, and
    how the processes are, if they are still there after a while."""
    wait_until(lambda: all(gone(p) for p in pids), 10, what, said=lambda: [_state(p) for p in pids])


def _state(pid: int) -> str:
    """A process's state and parent, as /proc says (for a failure's message)."""
    try:
        return " ".join(line for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                        if line.startswith(("State", "PPid")))
    except OSError:
        return "gone"


def test_until_idle_returns_when_a_held_piece_holds_up_the_rest(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    plan(repo, [piece("guard", "echo more > .magnum/notes.txt"),
                piece("after-guard", "echo a > src/a.txt", after=["guard"])], "--start")
    r = engine_process(repo, "--until-idle")
    assert r.code == 1, r
    assert "guard is held for you: it changes" in r.err, r.err
    assert "git balanced land balanced/guard --yes" in r.err, "it says the command that moves it"
    assert "after-guard never started: it comes after guard; guard waits for you" in r.err, r.err
    assert [j["state"] for j in jobs_of(repo, "guard")] == ["held"]


def test_until_idle_returns_when_your_file_is_in_the_way_of_what_others_wait_for(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    (repo / "src" / "first.txt").write_text("my own\n")
    plan(repo, [piece("first", "echo theirs > src/first.txt"),
                piece("second", "echo b > src/b.txt", after=["first"])], "--start")
    r = engine_process(repo, "--until-idle")
    assert r.code == 1, r
    assert "first waits: your untracked file src/first.txt is in the way" in r.err, r.err
    assert "Commit, move or remove it" in r.err, "it says what to do"
    assert "second never started" in r.err, r.err
    (repo / "src" / "first.txt").unlink()
    assert engine_process(repo, "--until-idle").code == 0, "once the file is gone, both land"
    assert [j["state"] for j in jobs_of(repo, "second")] == ["landed"]


def test_a_landing_limit_of_zero_is_named_once_and_replaced(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    landing = repo / ".git" / "balanced" / "landing.json"
    landing.parent.mkdir(parents=True, exist_ok=True)
    landing.write_text('{"limit": 0}\n')
    plan(repo, [piece("a", "echo a > src/a.txt"), piece("b", "echo b > src/b.txt", after=["a"])], "--start")
    r = engine_process(repo, "--until-idle")
    assert r.code == 0, r
    assert r.err.count("landing.json: `limit` is 0, but it must be a whole number from 1 to 64") == 1, r.err
    assert json.loads(landing.read_text())["limit"] >= 1, "a sane limit was written in its place"
    assert [j["state"] for j in jobs_of(repo, "b")] == ["landed"]


HANGS = 'trap "" TERM; setsid sh -c \'echo $$ > "$HOME/escaped"; exec sleep 300\' & echo $$ > "$HOME/check"; wait'


def test_engine_stop_ends_an_engine_whose_check_hangs(tmp_path: Path, sealed: Path) -> None:
    repo = lead_repo(tmp_path, check=HANGS)
    plan(repo, [piece("a", "echo a > src/a.txt")], "--start")
    with background_engine(repo, tmp_path / "engine.log") as eng:
        wait_for_file(sealed / "escaped", 20, "the check to start, and a child of its own to leave its group")
        check, escaped = int((sealed / "check").read_text()), int((sealed / "escaped").read_text())
        r = balanced(repo, "engine", "--stop")
        assert r.code == 0 and f"Stopped the engine (pid {eng.pid}) with SIGTERM." in r.out, r
        eng.wait(timeout=10)
    ended(check, escaped, what="the check and what it started in a session of its own to be ended")
    assert jobs_of(repo, "a")[0]["state"] == "finished", "a stopped check is no verdict: it is checked again later"
    assert "Stopped (SIGTERM) during a check" in (tmp_path / "engine.log").read_text()


def test_engine_stop_kills_an_engine_that_does_not_answer(tmp_path: Path, sealed: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # A stopped engine hears nothing: waiting the whole 8 s for it to end says no more than 2 s.
    monkeypatch.setattr(engine_command, "STOP_WAIT", 2.0)
    repo = lead_repo(tmp_path, check=HANGS)
    plan(repo, [piece("a", "echo a > src/a.txt")], "--start")
    with background_engine(repo, tmp_path / "engine.log") as eng:
        wait_for_file(sealed / "escaped", 20, "the check to start")
        escaped = int((sealed / "escaped").read_text())
        os.kill(eng.pid, signal.SIGSTOP)  # it cannot hear SIGTERM now
        r = balanced(repo, "engine", "--stop")
        assert r.code == 0, r
        assert "with SIGTERM, then SIGKILL after" in r.out and "Ended" in r.out, r.out
        eng.wait(timeout=10)
    ended(escaped, what=f"the checks it left behind to be ended too ({r.out.strip()})")


def test_a_killed_engines_check_is_ended_before_its_folder_is_used_again(tmp_path: Path, sealed: Path) -> None:
    once = sealed / "hung-once"
    check = f'if [ -f {once} ]; then exit 0; fi; touch {once}; ' + HANGS
    repo = lead_repo(tmp_path, check=check)
    plan(repo, [piece("a", "echo a > src/a.txt")], "--start")
    with background_engine(repo, tmp_path / "engine.log") as eng:
        wait_for_file(sealed / "escaped", 20, "the check to start")
        eng.send_signal(signal.SIGKILL)
        eng.wait()
    escaped = int((sealed / "escaped").read_text())
    assert not gone(escaped), "a kill -9 leaves the check running"
    lock = EngineLock(open_lead(str(repo)))
    wait_until(lambda: lock.holder() is None, 20, "the killed engine's lock", said=lambda: holders(lock.path))
    r = engine_process(repo, "--until-idle")
    assert r.code == 0, r
    assert "that an earlier check left running" in r.err, r.err
    ended(escaped, what="the leftover check to have been ended before the folder was used")
    assert [j["state"] for j in jobs_of(repo, "a")] == ["landed"]
    assert git(repo, "log", "-1", "--format=%s", "main").startswith("Land balanced/a")


def test_ctrl_c_ends_the_engine_and_its_check(tmp_path: Path, sealed: Path) -> None:
    from tests.support.wait import interruptible

    repo = lead_repo(tmp_path, check=HANGS)
    plan(repo, [piece("a", "echo a > src/a.txt")], "--start")
    p = subprocess.Popen([sys.executable, "-m", "git_balanced.cli", "engine"], cwd=repo, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL, preexec_fn=interruptible)
    try:
        wait_for_file(sealed / "escaped", 20, "the check to start")
        p.send_signal(signal.SIGINT)
        p.wait(timeout=15)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode in (1, 130), "interrupted, as any command is (click says `Aborted.`)"
    ended(int((sealed / "escaped").read_text()), what="the check it ran to be ended with it")


def test_engine_stop_ends_the_checks_of_an_engine_killed_before(tmp_path: Path, sealed: Path) -> None:
    repo = lead_repo(tmp_path, check=HANGS)
    plan(repo, [piece("a", "echo a > src/a.txt")], "--start")
    with background_engine(repo, tmp_path / "engine.log") as eng:
        wait_for_file(sealed / "escaped", 20, "the check to start")
        eng.send_signal(signal.SIGKILL)
        eng.wait()
    escaped = int((sealed / "escaped").read_text())
    lock = EngineLock(open_lead(str(repo)))
    wait_until(lambda: lock.holder() is None, 20, "the killed engine's lock", said=lambda: holders(lock.path))
    r = balanced(repo, "engine", "--stop")
    assert r.code == 0 and "No engine runs for this repository. Ended" in r.out, r
    ended(escaped, what="the check the killed engine left running to be ended")
