"""The engine's starter and the landing's leftover indexes tell a live process from a gone one by shipped/pids.py:
a zombie (a process ended that no one reaped) is gone. Real processes, a plain repository."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from git_balanced.engine import background, shown
from git_balanced.git import Repo
from git_balanced.landing import checkout
from git_balanced.lead import Lead
from tests.support.builders import make_repo


def _zombie() -> subprocess.Popen[bytes]:
    """A child that has ended and is not reaped yet."""
    p = subprocess.Popen(["true"])
    end = time.monotonic() + 10
    while time.monotonic() < end and not Path(f"/proc/{p.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
        time.sleep(0.01)
    return p


def test_a_zombie_or_gone_pid_is_no_engine_and_holds_no_index(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "r"))
    lead = Lead(repo, "main")
    lock = background.EngineLock(lead)
    live = subprocess.Popen(["sleep", "30"])
    dead = _zombie()
    try:
        (repo.state_dir / shown.PID_FILE).write_text(f"{live.pid}\n")
        assert background._named(lock) == live.pid
        (repo.state_dir / shown.PID_FILE).write_text(f"{dead.pid}\n")
        assert background._named(lock) is None, "a zombie's pid file names no engine"
        kept = {p: repo.state_dir / f"index.before-land.{p.pid}" for p in (live, dead)}
        for path in kept.values():
            path.write_bytes(b"")
        checkout._forget_kept(repo)
        assert kept[live].exists() and not kept[dead].exists(), "a live landing's index is kept, a zombie's not"
        assert background._alive(live.pid) is True and background._alive(dead.pid) is False  # reaped now
    finally:
        live.kill()
        live.wait()
        dead.wait()


def test_a_pid_file_whose_pid_a_later_process_got_names_no_engine(tmp_path: Path) -> None:
    """A killed engine leaves its pid file; when the kernel gives that pid to another process, the start tick on
    the file's second line tells them apart: the board does not say an engine runs, the starter starts one."""
    repo = Repo.discover(make_repo(tmp_path / "r"))
    lead = Lead(repo, "main")
    lock = background.EngineLock(lead)
    other = subprocess.Popen(["sleep", "30"])
    try:
        tick = Path(f"/proc/{other.pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
        pid_file = repo.state_dir / shown.PID_FILE
        pid_file.write_text(f"{other.pid}\n{int(tick) + 1}\n")  # what the engine that had this pid wrote
        assert shown.engine_record(lead) == (other.pid, str(int(tick) + 1))
        assert background._named(lock) is None and shown.engine_running(lead) is None
        assert shown.engine_state(lead, {"jobs": [], "next": []})["running"] is False
        pid_file.write_text(f"{other.pid}\n{tick}\n")  # the very process
        assert background._named(lock) == other.pid == shown.engine_running(lead)
        pid_file.write_text(f"{other.pid}\n")  # a file written before the tick was: the pid alone
        assert shown.engine_running(lead) == other.pid
        pid_file.write_text("junk\n")
        assert shown.engine_record(lead) == (None, "") and background._named(lock) is None
    finally:
        other.kill()
        other.wait()


def test_the_engine_writes_its_start_tick(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "r"))
    lock = background.EngineLock(Lead(repo, "main"))
    assert lock.acquire()
    try:
        pid, tick = shown.engine_record(lock.lead)
        assert pid == os.getpid() and tick and tick == Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19]
    finally:
        lock.release()
    assert shown.engine_record(lock.lead) == (None, "")
