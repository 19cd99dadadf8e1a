"""The runner's stop and cleanup end what a worker started, whatever group or session it moved to, and nothing
else: a daemon of another worker, or one no worker started, lives on."""

from __future__ import annotations

import os
import signal
import subprocess
from contextlib import suppress
from pathlib import Path

from git_balanced.shipped.runfiles import alive
from tests.shipped.test_runner import request, wait_for
from tests.support.builders import git, make_repo
from tests.support.runner_calls import call
from tests.support.wait import wait_until

DAEMON = "setsid sh -c 'echo $$ > {out}; exec sleep 600' >/dev/null 2>&1 </dev/null & "


def test_stop_ends_the_daemon_its_worker_left_and_no_other(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "lead", {"README.md": "sample\n"})
    lead = (repo, git(repo, "rev-parse", "HEAD"))
    runs = tmp_path / "runs"
    stray = subprocess.Popen(["setsid", "sleep", "600"], stdin=subprocess.DEVNULL)  # no worker's
    pids: list[int] = []
    try:
        for job in ("j1", "j2"):
            out = tmp_path / f"{job}.pid"
            run = DAEMON.format(out=out) + "exec sleep 600"
            call("start", request(tmp_path, lead, job, run, branch=f"balanced/{job}"))
            pids.append(int(wait_until(lambda o=out: o.exists() and o.read_text().strip(), 30, f"{job}'s daemon")))
        stopped = call("stop", {"job": "j1", "runs_dir": str(runs), "wait": 10, "grace": 2})
        wait_for("j1", runs)
        reaped = call("cleanup", {"job": "j1", "runs_dir": str(runs), "repo": str(repo),
                                  "worktree": str(tmp_path / "worktrees" / "j1")})
        wait_until(lambda: not alive(pids[0]), 10, "j1's daemon to end with it")
        # Ended by the runner itself as its worker ended, else by the stop or the cleanup.
        by_runner = (stopped.get("result") or {}).get("ended_left_running")
        assert by_runner or any(p["pid"] == pids[0] for p in stopped["reaped"] + reaped["reaped"]), (stopped, reaped)
        assert alive(pids[1]), "the daemon of another worker that still runs lives on"
        assert alive(stray.pid), "a process no worker started lives on"
    finally:
        for pid in [*pids, stray.pid]:
            with suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        for job in ("j1", "j2"):  # the workers themselves, whatever failed above
            call("stop", {"job": job, "runs_dir": str(runs), "wait": 10, "grace": 1})
        stray.wait()
