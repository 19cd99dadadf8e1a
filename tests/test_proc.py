"""The one process helper, with real processes: codes and both streams, timeouts, the user's shell lines,
detached starts, and the GIT_* variables a hook must not pass on."""

from __future__ import annotations

import os
import signal
import sys
from contextlib import suppress
from pathlib import Path

from git_balanced import proc
from tests.support.wait import gone, wait_for_file


def test_run_gives_the_code_and_both_streams_and_never_raises_on_status() -> None:
    r = proc.run([sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"])
    assert (r.code, r.out, r.err, r.ok) == (3, "out\n", "err\n", False)
    assert proc.run(["cat"], input="fed\n").out == "fed\n", "input goes to stdin"
    assert proc.run(["cat"]).out == "", "without input, stdin is empty rather than the caller's"


def test_a_missing_command_and_a_timeout_are_results_too() -> None:
    missing = proc.run(["no-such-command-anywhere"])
    assert (missing.code, missing.err) == (127, "no-such-command-anywhere: command not found")
    slow = proc.run([sys.executable, "-c", "import time; print('began', flush=True); time.sleep(30)"], timeout=1)
    assert slow.code == 124 and slow.out == "began\n" and "timed out after 1 seconds" in slow.err, slow


def test_shell_runs_a_users_line_with_its_output_merged(tmp_path: Path) -> None:
    r = proc.shell("echo one; echo two >&2; pwd; exit 4", cwd=tmp_path)
    assert (r.code, r.out.splitlines(), r.err) == (4, ["one", "two", str(tmp_path)], "")
    slow = proc.shell("echo began; sleep 30", cwd=tmp_path, timeout=1)
    assert slow.code == 124 and slow.out.startswith("began\n") and "timed out after 1 seconds" in slow.out


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
