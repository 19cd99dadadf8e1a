"""No process outlives its worker: a shell piece that leaves `setsid sleep 600 &` behind, here and over sshd.
Once its branch lands the daemon is gone; when its job fails, `ready` and `doctor` list it, and `ready --yes`
and `doctor --fix` stop it and remove what the failed job left there."""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import pytest

from git_balanced.shipped.runfiles import alive
from tests.support.builders import make_repo
from tests.support.cli import balanced
from tests.support.sshd import Machines, sshd_machines, wire_lead
from tests.support.wait import wait_until

pytestmark = pytest.mark.sshd  # every test here starts sshd machines

PASSES = '[worktree]\ncheck = "true"\n\n[balanced]\nagent = "shell"\nattempts = 1\n'
FAILS = '[worktree]\ncheck = "test ! -e out.txt"\n\n[balanced]\nagent = "shell"\nattempts = 1\n'
# Detached from the worker's group and session, its output and input elsewhere: a daemon. It says its pid first.
DAEMON = ("setsid sh -c 'echo $$ > {pidfile}; exec sleep 600' >/dev/null 2>&1 </dev/null & "
          "echo done > out.txt; sleep 0.3")


@pytest.fixture
def machines(tmp_path: Path) -> Iterator[Machines]:
    with sshd_machines(tmp_path, ["alpha"]) as ms:
        yield ms


# The worker's runner killed under it, as a machine's crash or an OOM kill would: nothing ends what it left.
RUNNER_KILLED = '; kill -9 "$(head -n1 "$BALANCED_RUN_DIR/pid")"'


def start_plan(repo: Path, tmp_path: Path, pidfiles: dict[str, str], then: str = "") -> None:
    pieces = [{"id": f"d-{m}", "task": "leave a daemon", "agent": "shell", "machine": m,
               "run": DAEMON.format(pidfile=pidfile) + then} for m, pidfile in pidfiles.items()]
    plan = tmp_path / "plan.yaml"
    plan.write_text(json.dumps({"task": "daemons", "pieces": pieces}))
    assert balanced(repo, "plan", str(plan), "--start").code == 0
    ran = balanced(repo, "engine", "--until-idle")
    assert "Traceback" not in ran.err, ran


def shared_folder(request: pytest.FixtureRequest) -> Path:
    """A folder the machine's worker can write in its fence (its home is read-only to it), and any user can."""
    folder = Path(tempfile.mkdtemp(prefix="balanced-daemon-", dir="/tmp"))
    folder.chmod(0o1777)
    request.addfinalizer(lambda: shutil.rmtree(folder, ignore_errors=True))
    return folder


def daemon(pidfile: Path) -> int:
    return int(wait_until(lambda: pidfile.exists() and pidfile.read_text().strip(), 30, f"{pidfile} to be written"))


def test_a_daemon_left_by_a_worker_that_landed_is_ended_here_and_over_ssh(
        machines: Machines, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    repo = make_repo(tmp_path / "proj", {"README.md": "sample\n"})
    wire_lead(repo, machines, PASSES)
    here, there = tmp_path / "local-daemon.pid", shared_folder(request) / "daemon.pid"
    start_plan(repo, tmp_path, {"local": str(here), "alpha": str(there)})
    pids = [daemon(here), daemon(there)]
    try:
        states = {j["piece"]: j["state"] for j in json.loads(balanced(repo, "board", "--json", "--all").out)["jobs"]}
        assert states == {"d-local": "landed", "d-alpha": "landed"}, states
        wait_until(lambda: not any(alive(p) for p in pids), 30, "the daemons to end with their workers' cleanup")
    finally:
        for p in pids:
            with suppress(ProcessLookupError, PermissionError):
                os.kill(p, signal.SIGKILL)


def test_a_daemon_of_a_failed_worker_is_listed_then_stopped_by_ready_and_doctor(
        machines: Machines, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    alpha = machines.by_name("alpha")
    repo = make_repo(tmp_path / "proj", {"README.md": "sample\n"})
    wire_lead(repo, machines, FAILS)
    here, there = tmp_path / "local-daemon.pid", shared_folder(request) / "daemon.pid"
    start_plan(repo, tmp_path, {"local": str(here), "alpha": str(there)}, then=RUNNER_KILLED)
    mine, theirs = daemon(here), daemon(there)
    try:
        states = {j["piece"]: j["state"] for j in json.loads(balanced(repo, "board", "--json", "--all").out)["jobs"]}
        assert set(states.values()) == {"failed"}, states
        assert alive(mine) and alive(theirs), "its runner was killed: nothing ended the daemon, which doctor finds"

        listed = balanced(repo, "doctor")
        assert listed.code == 1, listed
        assert "Left running by workers that are done (nobody watches them):" in listed.out, listed.out
        assert f"local: sleep (pid {mine}) of job " in listed.out and f"stop: kill {mine}" in listed.out
        assert f"alpha: sleep (pid {theirs}) of job " in listed.out and f"stop: ssh alpha kill {theirs}" in listed.out
        assert f"alpha:{alpha.home}/.balanced/runs/" in listed.out, "and its run folder there"
        assert ": the run folder of job " in listed.out and "of job of job" not in listed.out
        data = json.loads(balanced(repo, "doctor", "--json").out)
        assert sorted((p["machine"], p["pid"]) for p in data["processes"]) == sorted([("local", mine),
                                                                                    ("alpha", theirs)])

        ready = balanced(repo, "ready")
        assert f"left running by earlier workers: sleep (pid {theirs}) of job " in ready.out, ready.out
        assert f"left running by earlier workers: sleep (pid {mine}) of job " in ready.out, ready.out
        assert "left behind by workers whose jobs are done: " in ready.out and "run folder; `git balanced ready " \
               "alpha --yes` removes them" in ready.out, ready.out
        assert alive(mine) and alive(theirs), "without --yes, nothing is stopped"

        ready = balanced(repo, "ready", "alpha", "--yes")
        assert ready.code == 0 and f"stopped sleep (pid {theirs}) of job " in ready.out, ready.out
        assert "run folder left behind by workers whose jobs are done" in ready.out, ready.out
        wait_until(lambda: not alive(theirs), 10, "alpha's daemon to be stopped by ready --yes")
        assert not list((alpha.home / ".balanced" / "runs").iterdir()), "alpha's run folder is gone"

        fixed = balanced(repo, "doctor", "--fix", "--yes")
        assert f"stopped  local: sleep (pid {mine}) of job " in fixed.out, fixed.out
        wait_until(lambda: not alive(mine), 10, "this machine's daemon to be stopped by doctor --fix")
        after = json.loads(balanced(repo, "doctor", "--json").out)
        # What is left holds work (its runner was killed before it committed what its worker left): kept.
        assert after["processes"] == [] and all(x["kept"] for x in after["leftovers"]), after
    finally:
        for p in (mine, theirs):
            with suppress(ProcessLookupError, PermissionError):
                os.kill(p, signal.SIGKILL)


def test_a_daemon_a_failed_worker_left_ends_with_its_worker(machines: Machines, tmp_path: Path,
                                                          request: pytest.FixtureRequest) -> None:
    """A worker that fails and is not tried again is not cleaned up, so its daemon must end when it finishes."""
    repo = make_repo(tmp_path / "proj", {"README.md": "sample\n"})
    wire_lead(repo, machines, FAILS)
    here, there = tmp_path / "local-daemon.pid", shared_folder(request) / "daemon.pid"
    start_plan(repo, tmp_path, {"local": str(here), "alpha": str(there)})
    pids = [daemon(here), daemon(there)]
    try:
        states = {j["piece"]: j["state"] for j in json.loads(balanced(repo, "board", "--json", "--all").out)["jobs"]}
        assert set(states.values()) == {"failed"}, states
        wait_until(lambda: not any(alive(p) for p in pids), 30, "the daemons to end with their workers")
    finally:
        for p in pids:
            with suppress(ProcessLookupError, PermissionError):
                os.kill(p, signal.SIGKILL)
