"""The SSH transport against real sshd machines on 127.0.0.1."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_mock import MockerFixture

from git_balanced.errors import BalancedError
from git_balanced.machines.inventory.names import SshHost
from git_balanced.machines.reach import transport
from git_balanced.machines.reach.transport import MAX_SESSIONS, MachineUnreachable, Transport
from tests.support.builders import git, make_repo
from tests.support.sshd import Machines, sshd_machines
from tests.support.wait import gone, wait_until

REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def machines(tmp_path: Path) -> Iterator[Machines]:
    with sshd_machines(tmp_path, ["alpha", "beta"]) as ms:
        yield ms


@pytest.fixture
def alpha(machines: Machines) -> Iterator[Transport]:
    t = Transport("alpha")
    yield t
    t.close()


@pytest.mark.sshd
def test_runs_a_command_on_two_machines_each_as_its_own_user(machines: Machines) -> None:
    for m in machines:
        t = Transport(m.name)
        try:
            res = t.run(["sh", "-c", 'id -un; echo "$HOME"'])
        finally:
            t.close()
        assert res.ok, res.err
        assert res.out.split() == [m.user, str(m.home)], f"{m.name} runs as its own user in its own home"


@pytest.mark.sshd
def test_remote_exit_code_and_streams_come_back(alpha: Transport) -> None:
    res = alpha.run(["sh", "-c", "echo out; echo err >&2; exit 3"])
    assert (res.code, res.out, res.err) == (3, "out\n", "err\n")
    # A command of the machine may exit 255 too: that is its answer, not an unreachable machine.
    assert alpha.run(["sh", "-c", "exit 255"]).code == 255


@pytest.mark.sshd
def test_second_command_reuses_the_master(machines: Machines, alpha: Transport) -> None:
    for _ in range(5):
        assert alpha.run(["true"]).ok
    assert alpha.check(), "the master is alive after the commands"
    assert machines.by_name("alpha").accepted() == 1, "five commands, one SSH connection"
    # Another Transport (another module, another process) finds the same master through its socket.
    other = Transport("alpha")
    assert other.run(["true"]).ok
    assert machines.by_name("alpha").accepted() == 1


@pytest.mark.sshd
def test_without_multiplexing_every_command_connects(machines: Machines) -> None:
    t = Transport("beta", multiplex=False)
    for _ in range(3):
        assert t.run(["true"]).ok
    assert not t.check()
    assert machines.by_name("beta").accepted() == 3


@pytest.mark.sshd
def test_close_ends_the_master_and_the_next_command_opens_one(machines: Machines, alpha: Transport) -> None:
    assert alpha.run(["true"]).ok
    alpha.close()
    assert not alpha.check()
    assert alpha.run(["true"]).ok
    assert alpha.check()
    assert machines.by_name("alpha").accepted() == 2


@pytest.mark.sshd
def test_stale_master_is_rebuilt(machines: Machines, alpha: Transport) -> None:
    assert alpha.run(["true"]).ok
    res = subprocess.run(
        ["ssh", "-F", str(machines.config), "-o", f"ControlPath={transport.control_dir()}/%C",
         "-O", "check", "alpha"], capture_output=True, text=True,
    )
    old_pid = int(res.stderr.split("pid=")[1].split(")")[0])
    os.kill(old_pid, signal.SIGKILL)
    wait_until(lambda: gone(old_pid), 10, "the killed master to end")
    assert alpha._socket().exists(), "a killed master leaves its socket behind"
    assert not alpha.check(), "the leftover socket is seen as stale"
    assert alpha.run(["echo", "again"]).out == "again\n"
    assert alpha.check() and alpha._master_pid not in (None, old_pid), "a new master runs"
    assert machines.by_name("alpha").accepted() == 2


@pytest.mark.sshd
def test_killed_machine_fails_fast_with_a_clear_error(machines: Machines, alpha: Transport) -> None:
    assert alpha.run(["true"]).ok
    machines.by_name("alpha").kill()
    started = time.monotonic()
    with pytest.raises(MachineUnreachable) as err:
        alpha.run(["true"])
    assert time.monotonic() - started < 5, "a dead machine is reported at once, not after a long wait"
    assert "alpha" in err.value.message and "refused" in err.value.message.lower()
    assert err.value.hint and "ssh -F" in err.value.hint
    assert Transport("beta").run(["true"]).ok, "the other machine is unaffected"


@pytest.mark.sshd
def test_hanging_machine_fails_after_connect_timeout(machines: Machines) -> None:
    machines.by_name("beta").freeze()
    t = Transport("beta", connect_timeout=2)
    started = time.monotonic()
    with pytest.raises(MachineUnreachable) as err:
        t.run(["true"])
    took = time.monotonic() - started
    assert 1.5 < took < 8, f"ConnectTimeout=2 bounds the wait ({took:.1f} s)"
    assert "beta" in err.value.message


@pytest.mark.sshd
def test_a_timeout_is_a_field_of_the_error_and_what_reads_it_reads_the_field(
        machines: Machines, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from git_balanced import process
    from git_balanced.git import Repo
    from git_balanced.machines.inventory import records as inventory
    from git_balanced.machines.reach import probe
    from git_balanced.machines.reach.routes import Reach

    repo = Repo.discover(make_repo(tmp_path / "proj"))
    machines.by_name("alpha").kill()
    machines.by_name("beta").freeze()
    with pytest.raises(MachineUnreachable) as refused:
        Transport("alpha", connect_timeout=2).run(["true"])
    with pytest.raises(MachineUnreachable) as hung:
        Transport("beta", connect_timeout=2).run(["true"])
    assert not refused.value.timed_out and "refused" in refused.value.detail.lower(), refused.value.detail
    assert hung.value.timed_out, f"set where it was raised: {hung.value.message}"
    assert hung.value.detail and hung.value.detail in hung.value.message, "what ssh said, without our words"
    # A probe tells a machine that timed out from one that refused by the field, and keeps the first out of
    # placement for a while. The transports it uses are the ones kept per process, with a short timeout here.
    reach = process.part(Reach)
    for name in ("alpha", "beta"):
        inventory.add(name, None, "normal")
        reach.use(Transport(name, connect_timeout=2))
    found = probe.unanswering(repo, ["alpha", "beta"])
    assert found["alpha"] == f"it cannot be reached ({refused.value.detail})", found
    assert found["beta"].startswith("it did not answer in time ("), found
    assert "beta" in inventory.ineligible(repo) and "alpha" not in inventory.ineligible(repo)


_CONCURRENT = """
import json, sys, threading
from git_balanced.machines.reach.transport import Transport
out = []
def one():
    r = Transport(sys.argv[1]).run(["python3", "-c", sys.argv[2]])
    out.append(r.out.split())
threads = [threading.Thread(target=one) for _ in range(int(sys.argv[3]))]
[t.start() for t in threads]
[t.join() for t in threads]
print(json.dumps(out))
"""


@pytest.mark.sshd
def test_at_most_six_sessions_per_host_across_threads_and_processes(alpha: Transport) -> None:
    assert alpha.run(["true"]).ok  # the master is up, so the burst measures sessions, not connecting
    slow = "import time; a = time.time(); time.sleep(1.2); print(a, time.time())"
    procs = [
        subprocess.Popen([sys.executable, "-c", _CONCURRENT, "alpha", slow, "4"], cwd=REPO_ROOT,
                         stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    intervals: list[list[str]] = []

    def one() -> None:
        intervals.append(alpha.run(["python3", "-c", slow]).out.split())

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for p in procs:
        out, _ = p.communicate(timeout=60)
        assert p.returncode == 0
        intervals += json.loads(out)
    assert len(intervals) == 10 and all(len(i) == 2 for i in intervals), intervals
    events = sorted([(float(a), 1) for a, _ in intervals] + [(float(b), -1) for _, b in intervals])
    running = peak = 0
    for _, step in events:
        running += step
        peak = max(peak, running)
    assert peak <= MAX_SESSIONS, f"{peak} sessions ran at once on one host"
    assert peak == MAX_SESSIONS, f"ten commands at once fill all {MAX_SESSIONS} sessions (peak {peak})"


@pytest.mark.parametrize(
    "name", ["-oProxyCommand=touch {marker}", "alpha beta", "alpha\nbeta", "al\tpha", "al\x1bpha", "", "-"],
)
def test_strange_host_names_are_refused(tmp_path: Path, name: str) -> None:
    marker = tmp_path / "x"
    with pytest.raises(BalancedError):
        Transport(name.format(marker=marker))
    with pytest.raises(BalancedError):
        SshHost.of(name.format(marker=marker))
    assert not marker.exists()


PAYLOADS = [
    "; touch {p}", "$(touch {p})", "`touch {p}`", "\ntouch {p}", "' ; touch {p} ; '", '" ; touch {p} ; "',
    "&& touch {p}", "| touch {p}", "> {p}", "\\; touch {p}",
]


@pytest.mark.sshd
def test_arguments_are_never_interpreted_on_either_side(
    machines: Machines, alpha: Transport, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    remote = machines.by_name("alpha").home
    for i, template in enumerate(PAYLOADS):
        for target in (tmp_path / f"local{i}", remote / f"remote{i}", f"relative{i}"):
            arg = template.format(p=target)
            res = alpha.run(["printf", "%s", arg])
            assert res.ok and res.out == arg, f"the argument arrives as it was: {arg!r}"
            res = alpha.run_python("import json, sys; print(json.dumps(sys.argv[1:]))", [arg, "-c", arg])
            assert json.loads(res.out) == [arg, "-c", arg]
    left = sorted(p.name for d in (tmp_path, remote) for p in d.iterdir() if p.name.startswith(("local",
                                                                                               "remote",
                                                                                               "relative")))
    assert left == [], f"no injected command ran: {left}"


@pytest.mark.sshd
def test_plumbum_commands_go_through_the_same_master_quoted_and_in_slots(
    machines: Machines, alpha: Transport, tmp_path: Path
) -> None:
    remote = machines.by_name("alpha").home
    assert alpha.run(["true"]).ok
    with alpha.machine() as there:
        printf, sh = there["printf"], there["sh"]
        for i, template in enumerate(PAYLOADS):
            arg = template.format(p=remote / f"remote{i}")
            res = alpha.run_command(printf["%s", arg])
            assert res.ok and res.out == arg, f"the argument arrives as it was: {arg!r}"
        assert alpha.run_command(sh["-c", "echo out; echo err >&2; exit 3"]) == transport.Result(3, "out\n", "err\n")
        assert alpha.run_command(sh["-c", "exit 255"]).code == 255, "the command's own 255 is its answer"
        started = time.monotonic()
        assert alpha.run_command(there["sleep"]["30"], timeout=1).code == 124
        assert time.monotonic() - started < 5
        held = [alpha.take_slot(wait=False)[1] for _ in range(MAX_SESSIONS - 2)]
        with pytest.raises(BalancedError, match="are busy"):
            alpha.take_slot(wait=False)
        for lock in held:
            lock.release()
    assert not [p.name for p in remote.iterdir() if p.name.startswith("remote")], "no injected command ran"
    assert machines.by_name("alpha").accepted() == 1, "its shell and commands used the open connection"
    assert len(held) == MAX_SESSIONS - 2 and alpha.take_slot(wait=False), "its two slots are free again"


@pytest.mark.sshd
@pytest.mark.parametrize(("multiplex", "closed_at_once"), [(True, False), (False, False), (False, True)])
def test_plumbum_on_a_dead_machine_is_an_unreachable_machine(machines: Machines, mocker: MockerFixture,
                                                             multiplex: bool, closed_at_once: bool) -> None:
    """Also when ssh refused and ended before plumbum wrote its first line to the shell (`closed_at_once`): a
    broken pipe there is an unreachable machine in ssh's own words, not a traceback."""
    t = Transport("alpha", multiplex=multiplex)
    assert t.run(["true"]).ok
    machines.by_name("alpha").kill()
    if closed_at_once:
        mocker.patch("plumbum.machines.ssh_machine.SshMachine.__init__",
                     side_effect=BrokenPipeError(32, "Broken pipe"))
    with pytest.raises(MachineUnreachable) as err, t.machine():
        pass
    assert err.value.message.startswith("Machine alpha cannot be reached") and "refused" in err.value.message, \
        err.value.message
    t.close()


@pytest.mark.sshd
def test_run_python_carries_script_and_data_on_stdin(alpha: Transport) -> None:
    script = textwrap.dedent("""
        import hashlib, sys
        data = sys.stdin.buffer.read()
        print(len(data), hashlib.sha256(data).hexdigest(), sys.argv[1:])
    """)
    blob = bytes(range(256)) * 4096 + "é\n".encode()
    res = alpha.run_python(script, ["a b"], input=blob)
    assert res.out.split(maxsplit=2) == [str(len(blob)), hashlib.sha256(blob).hexdigest(), "['a b']\n"]
    res = alpha.run_python("import sys\nprint(sys.stdin.read().upper(), end='')", [], input="héllo\nworld")
    assert res.out == "HÉLLO\nWORLD"
    ps = alpha.run_python("import os\nprint(open(f'/proc/{os.getpid()}/cmdline').read())", [])
    assert "print(" not in ps.out, "the script is not on the command line"


@pytest.mark.sshd
def test_a_command_that_runs_too_long_is_stopped(alpha: Transport) -> None:
    started = time.monotonic()
    res = alpha.run(["sleep", "30"], timeout=1)
    assert res.code == 124 and time.monotonic() - started < 5


@pytest.mark.sshd
def test_git_push_and_fetch_go_through_the_same_master(
    machines: Machines, alpha: Transport, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n"})
    assert alpha.run(["git", "init", "-q", "--bare", "project.git"]).ok
    env = {**os.environ, **alpha.git_env()}
    url = alpha.git_url("project.git")
    subprocess.run(["git", "push", "-q", url, "main"], cwd=repo, env=env, check=True, capture_output=True)
    head = git(repo, "rev-parse", "HEAD")
    assert alpha.run(["git", "-C", "project.git", "rev-parse", "main"]).out.strip() == head
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", url, str(clone)], env=env, check=True, capture_output=True)
    assert git(clone, "rev-parse", "HEAD") == head
    assert machines.by_name("alpha").accepted() == 1, "git rode the master, no new connection"
    with pytest.raises(BalancedError):
        alpha.git_url("--upload-pack=touch x")


def test_control_folder_must_be_private(monkeypatch: pytest.MonkeyPatch) -> None:
    # XDG_RUNTIME_DIR is used only when short (socket paths are limited), so not under tmp_path.
    runtime = Path(tempfile.mkdtemp(prefix="gbt-", dir="/tmp"))
    try:
        (runtime / "gb").mkdir(mode=0o700)
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
        assert transport.control_dir() == runtime / "gb"
        (runtime / "gb").chmod(0o777)
        with pytest.raises(BalancedError, match="not a private folder"):
            transport.control_dir()
    finally:
        shutil.rmtree(runtime)


def test_missing_config_named_by_the_variable_is_an_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GIT_BALANCED_SSH_CONFIG", str(tmp_path / "nope"))
    with pytest.raises(BalancedError, match="GIT_BALANCED_SSH_CONFIG"):
        Transport("alpha")


@pytest.mark.parametrize(
    "line", ['User "x;touch {marker}"', "User -oProxyCommand=x", 'HostName "$(touch {marker})"']
)
def test_strange_user_or_hostname_from_the_config_is_refused(sealed: Path, tmp_path: Path, line: str) -> None:
    marker = tmp_path / "x"
    config = sealed / ".ssh" / "config"
    config.parent.mkdir(parents=True, exist_ok=True)
    # %r and %h in a ProxyCommand go through a shell: a user or host name must not smuggle a command.
    config.write_text(f"Host evil\n    {line.format(marker=marker)}\n    ProxyCommand true %r %h %p\n")
    with pytest.raises(BalancedError, match="Refusing machine evil"):
        Transport("evil").run(["true"])
    assert not marker.exists()


@pytest.mark.sshd
def test_user_at_host_names_are_accepted(machines: Machines) -> None:
    m = machines.by_name("alpha")
    t = Transport(f"{m.user}@alpha")
    try:
        assert t.run(["id", "-un"]).out.strip() == m.user
    finally:
        t.close()
