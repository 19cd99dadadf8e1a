"""The one process helper (git_balanced/proc.py), with real processes: results, never an exception for an exit
code; timeouts that end everything the command started; detached starts; the GIT_* variables a hook must not
pass on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path

from git_balanced import proc
from tests.support.wait import gone, wait_for_file, wait_until

# Starts a child that would outlive the shell, writes its pid, then waits: the pipes stay open while it lives.
SPAWNS = 'echo started; echo oops >&2; sleep 60 & echo $! > "{pids}"; wait'


def test_run_returns_code_and_both_streams_whatever_the_exit(tmp_path: Path) -> None:
    res = proc.run(["sh", "-c", "echo out; echo err >&2; exit 3"], cwd=tmp_path)
    assert (res.code, res.out, res.err, res.ok) == (3, "out\n", "err\n", False)
    assert proc.run(["cat"], input=b"bytes in\n").out == "bytes in\n", "bytes input in text mode"
    raw = proc.run(["cat"], input=b"\xff\n", text=False)
    assert (raw.out, raw.err) == (b"\xff\n", b""), "text=False keeps bytes"
    missing = proc.run(["no-such-command-here"])
    assert (missing.code, missing.err) == (127, "no-such-command-here: command not found")


def test_a_timeout_kills_the_whole_process_group_and_keeps_what_came(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    started = time.monotonic()
    res = proc.run(["sh", "-c", SPAWNS.format(pids=pids)], timeout=1)
    assert time.monotonic() - started < 5, "it returned at the timeout, not when the child's sleep ended"
    assert res.code == 124 and res.out == "started\n", res
    assert res.err == "oops\n\ntimed out after 1 seconds", res
    child = int(pids.read_text())
    wait_until(lambda: gone(child), 5, "the command's own child to be killed with it")


def test_shell_merges_output_and_its_timeout_kills_the_group_too(tmp_path: Path) -> None:
    assert proc.shell("echo a; echo b >&2; exit 2", cwd=tmp_path) == proc.Result(2, "a\nb\n", "")
    pids = tmp_path / "pids"
    res = proc.shell(SPAWNS.format(pids=pids), cwd=tmp_path, timeout=1)
    assert res.code == 124 and res.out == "started\noops\n\ntimed out after 1 seconds" and res.err == "", res
    child = int(pids.read_text())
    wait_until(lambda: gone(child), 5, "the command's own child to be killed with it")


def test_only_a_command_with_a_timeout_gets_a_process_group_of_its_own() -> None:
    ours = str(os.getpgrp())
    same = proc.run(["sh", "-c", "ps -o pgid= -p $$"]).out.strip()
    assert same == ours, "without a timeout it stays in ours, where the terminal's Ctrl-C reaches it"
    own = proc.run(["sh", "-c", "echo $$; ps -o pgid= -p $$"], timeout=10).out.split()
    assert own[0] == own[1] != ours, "with one, it leads a group of its own, which the timeout kills"


def test_the_hot_paths_start_without_plumbum() -> None:
    """plumbum costs more to import than the rest of a start-up: only `ready`'s one-off commands load it."""
    code = ("import sys, git_balanced.cli, git_balanced.git, git_balanced.machines.reach.transport, "
            "git_balanced.machines.reach.sessions, git_balanced.engine.loop; print('plumbum' in sys.modules)")
    cp = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert cp.stdout.strip() == "False", cp.stdout + cp.stderr


def test_spawn_detached_returns_at_once_and_the_process_has_its_own_session(tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    code = "import os, time; print(os.getsid(0), flush=True); time.sleep(30)"
    pid = proc.spawn_detached([sys.executable, "-c", code], cwd=tmp_path, log=log)
    try:
        sid = int(wait_for_file(log, 30, "the detached process to write its session").split()[0])
        assert sid == pid and sid != os.getsid(0), "a session of its own: the caller's Ctrl-C does not reach it"
    finally:
        os.kill(pid, signal.SIGKILL)
        with suppress(ChildProcessError):  # subprocess may have reaped it already
            os.waitpid(pid, 0)
    assert gone(pid)


def test_no_git_env_drops_what_points_at_a_repository_and_keeps_identity() -> None:
    env = {"GIT_DIR": "/elsewhere/.git", "GIT_INDEX_FILE": "/elsewhere/index", "GIT_AUTHOR_NAME": "Ada",
           "GIT_SSH_COMMAND": "ssh -F cfg", "HOME": "/home/ada", "PATH": "/bin"}
    assert proc.no_git_env(env) == {"GIT_AUTHOR_NAME": "Ada", "GIT_SSH_COMMAND": "ssh -F cfg", "HOME": "/home/ada",
                                    "PATH": "/bin"}


# A signal handler that asks to stop, fired every 2 ms while the main thread asks and lets go on over and over: a
# handler landing inside another ask (a second Ctrl-C, which git passes on to `git balanced`, inside the first's)
# must not wait on a lock the same thread holds.
STOP_UNDER_SIGNALS = """
import faulthandler, signal, sys, time
faulthandler.dump_traceback_later(20, exit=True)
from git_balanced import proc
proc.go_on()
signal.signal(signal.SIGALRM, lambda s, f: proc.ask_to_stop())
signal.setitimer(signal.ITIMER_REAL, 0.002, 0.002)
end, n = time.monotonic() + 2, 0
while time.monotonic() < end:
    proc.go_on(); proc.ask_to_stop(); n += 1
signal.setitimer(signal.ITIMER_REAL, 0)
print("stopped", proc.stop_asked(), n > 0)
"""


def test_asking_to_stop_from_a_signal_handler_inside_another_ask_never_waits_on_itself() -> None:
    cp = subprocess.run([sys.executable, "-c", STOP_UNDER_SIGNALS], capture_output=True, text=True, timeout=60)
    assert (cp.returncode, cp.stdout) == (0, "stopped True True\n"), cp.stderr[-3000:]
