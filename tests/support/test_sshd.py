"""The sshd test harness itself: machines are real, separate, killable, and leave nothing behind."""

from __future__ import annotations

import os
import pwd
import socket
import subprocess
from pathlib import Path

import pytest

from tests.support.sshd import MACHINE_PYTHON, Machines, sshd_machines
from tests.support.wait import wait_until

pytestmark = pytest.mark.sshd  # every test here starts sshd machines


def ssh(machines: Machines, name: str, command: str) -> subprocess.CompletedProcess[str]:
    """Plain OpenSSH with the written config, independent of the package's transport."""
    return subprocess.run(
        ["ssh", "-F", str(machines.config), "-o", "BatchMode=yes", name, command],
        capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL,
    )


def test_machines_are_separate_users_that_run_git_and_python(tmp_path: Path) -> None:
    with sshd_machines(tmp_path, ["alpha", "beta", "gamma"]) as ms:
        assert len({m.user for m in ms}) == 3 and len({m.port for m in ms}) == 3
        for m in ms:
            probe = "id -un; echo $HOME; git --version; python3 -c 'import sys; print(sys.version_info[0])'"
            res = ssh(ms, m.name, probe)
            assert res.returncode == 0, res.stderr
            lines = res.stdout.splitlines()
            assert lines[:2] == [m.user, str(m.home)]
            assert lines[2].startswith("git version") and lines[3] == "3"
        assert Path(MACHINE_PYTHON).exists(), "machine users need a python3 they can read"
        # One machine's files are not another's.
        assert ssh(ms, "alpha", "echo secret > mine && chmod 600 mine").returncode == 0
        assert ssh(ms, "beta", f"cat {ms.by_name('alpha').home}/mine").returncode != 0


def test_config_reaches_one_machine_through_include(tmp_path: Path) -> None:
    with sshd_machines(tmp_path, ["alpha", "beta"]) as ms:
        text = ms.config.read_text()
        assert "Include " in text and "Host alpha" in text and "Host beta" not in text
        assert ms.config == Path(os.environ["GIT_BALANCED_SSH_CONFIG"])
        assert ssh(ms, "beta", "id -un").stdout.strip() == ms.by_name("beta").user


def test_stop_removes_users_homes_and_processes(tmp_path: Path) -> None:
    with sshd_machines(tmp_path, ["alpha"]) as ms:
        m = ms[0]
        # A detached process of the machine, as a worker would be, outlives the SSH session.
        res = ssh(ms, "alpha", "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo started")
        assert res.stdout.strip() == "started"
        wait_until(m.processes, 10, "the detached sleep to count as the machine's")
        sshd_pid = m.pid
    assert not m.alive() and not Path(f"/proc/{sshd_pid}").exists()
    assert m.processes() == []
    if m.own_user:
        with pytest.raises(KeyError):
            pwd.getpwnam(m.user)
        assert not m.home.exists()


def test_kill_ends_the_machine_at_once(tmp_path: Path) -> None:
    with sshd_machines(tmp_path, ["alpha", "beta"]) as ms:
        ssh(ms, "alpha", "setsid sleep 300 </dev/null >/dev/null 2>&1 &")
        wait_until(ms.by_name("alpha").processes, 10, "the detached sleep to run")
        session = subprocess.Popen(
            ["ssh", "-F", str(ms.config), "-o", "BatchMode=yes", "alpha", "sleep 300"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        wait_until(lambda: ms.by_name("alpha").accepted() >= 2, 10, "the second session to be let in")
        ms.by_name("alpha").kill()
        assert ms.by_name("alpha").processes() == []
        assert session.wait(timeout=5) == 255, "an open session is cut when its machine dies"
        res = ssh(ms, "alpha", "true")
        assert res.returncode == 255 and "refused" in res.stderr
        assert ssh(ms, "beta", "true").returncode == 0, "killing one machine spares the other"


def test_frozen_machine_accepts_tcp_but_never_answers(tmp_path: Path) -> None:
    with sshd_machines(tmp_path, ["alpha"]) as ms:
        m = ms[0]
        with socket.create_connection(("127.0.0.1", m.port), timeout=2) as s:
            assert s.recv(64).startswith(b"SSH-2.0-")
        m.freeze()
        with socket.create_connection(("127.0.0.1", m.port), timeout=2) as s:
            s.settimeout(0.5)
            with pytest.raises(TimeoutError):
                s.recv(64)
        m.thaw()
        assert ssh(ms, "alpha", "true").returncode == 0


def test_accepted_counts_connections(tmp_path: Path) -> None:
    with sshd_machines(tmp_path, ["alpha"]) as ms:
        assert ms[0].accepted() == 0
        for _ in range(2):
            assert ssh(ms, "alpha", "true").returncode == 0
        assert ms[0].accepted() == 2


def test_every_session_command_is_written_down_and_run_as_given(tmp_path: Path) -> None:
    with sshd_machines(tmp_path, ["alpha"]) as ms:
        res = ssh(ms, "alpha", "printf '%s|' \"a b\" 'c'\"'\"'d'; echo $((1+2))")
        assert res.stdout == "a b|c'd|3\n", "the command runs as the login shell would have run it"
        assert ms[0].commands() == ["printf '%s|' \"a b\" 'c'\"'\"'d'; echo $((1+2))"]
