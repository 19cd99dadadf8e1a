"""Runner sessions: one runner process answering many requests, here and on real sshd machines."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_mock import MockerFixture

from git_balanced import process
from git_balanced.engine.workers import RUNS_DIR
from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.lead import Lead
from git_balanced.machines.reach import remote, sessions
from git_balanced.machines.reach.hosts import LocalHost
from git_balanced.machines.reach.remote import RemoteHost
from git_balanced.machines.reach.routes import Reach
from git_balanced.machines.reach.transport import MAX_SESSIONS, MachineUnreachable, Transport
from git_balanced.shipped import runner
from tests.support.builders import git, make_repo
from tests.support.sshd import Machine, Machines, sshd_machines, wire_lead
from tests.support.wait import gone, wait_until

SETTINGS = '[worktree]\ncheck = "true"\n\n[balanced]\nagent = "shell"\n'
STATUS = {"jobs": ["nobody"], "runs_dir": RUNS_DIR}


def serve(idle: float | None = None) -> subprocess.Popen[str]:
    code = f"import runner; raise SystemExit(runner.serve({idle}))" if idle else "import runner; runner.main(['serve'])"
    return subprocess.Popen([sys.executable, "-c", code], cwd=Path(runner.__file__).parent, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def ask(p: subprocess.Popen[str], line: str) -> dict:
    assert p.stdin and p.stdout
    p.stdin.write(line + "\n")
    p.stdin.flush()
    return json.loads(p.stdout.readline())


def test_serve_answers_a_line_per_request_and_ends_with_its_input(tmp_path: Path) -> None:
    p = serve()
    assert p.stdout
    hello = json.loads(p.stdout.readline())
    assert hello == {"ready": True, "pid": p.pid}, "it says it is ready before it reads a request"
    runs = str(tmp_path / "runs")
    for _ in range(3):
        answer = ask(p, json.dumps({"action": "status", "request": {"jobs": ["j1"], "runs_dir": runs}}))
        assert answer["jobs"]["j1"]["state"] == "missing", answer
    assert "could not read the request" in ask(p, "not json")["error"]
    assert "no action 'rm'" in ask(p, json.dumps({"action": "rm", "request": {}}))["error"]
    bad = ask(p, json.dumps({"action": "log", "request": {"job": "../x", "runs_dir": runs}}))
    assert "not a plain name" in bad["error"], "a request the runner refuses is answered, and the session goes on"
    assert ask(p, json.dumps({"action": "status", "request": {"jobs": [], "runs_dir": runs}})) == {"jobs": {}}
    assert p.stdin
    p.stdin.close()
    assert p.wait(timeout=10) == 0, "the end of its input ends it"


def test_serve_ends_when_nobody_asks_for_a_while() -> None:
    p = serve(idle=0.3)
    assert p.stdout and json.loads(p.stdout.readline())["ready"]
    assert p.wait(timeout=10) == 0, "a quiet session ends by itself"


@pytest.fixture
def lead(tmp_path: Path) -> Lead:
    repo = make_repo(tmp_path / "lead", {"README.md": "sample\n"})
    return Lead(Repo.discover(repo), "main")


def start_request(lead: Lead, host: LocalHost | RemoteHost, job: str, run: str) -> dict:
    base = git(lead.repo.root, "rev-parse", "HEAD")
    host.prepare_base(f"balanced/{job}", base)
    repo = host.branch_repo(f"balanced/{job}") if isinstance(host, LocalHost) else host.repo_path()
    return {"job": job, "repo": repo, "worktree": host.worktree_path(job), "branch": f"balanced/{job}",
            "base": base, "argv": ["sh", "-c", run], "commit_leftovers": True, "commit_message": f"{job}\n",
            "runs_dir": RUNS_DIR}


def wait_finished(host: LocalHost | RemoteHost, jobs: list[str], timeout: float = 30) -> dict:
    def status() -> dict:
        return host.call("status", {"jobs": jobs, "runs_dir": RUNS_DIR})["jobs"]

    def finished() -> dict | None:
        st = status()
        return st if all(s["state"] == "finished" for s in st.values()) else None

    return wait_until(finished, timeout, f"the jobs {jobs} to finish", said=status)


def local_pool(lead: Lead) -> sessions.Pool:
    return LocalHost(lead.repo).pool()


def test_local_starts_share_one_session_whose_workers_outlive_it(lead: Lead) -> None:
    host = LocalHost(lead.repo)
    pids = [host.call("start", start_request(lead, host, f"j{i}", f"echo {i} > f{i}.txt"))["pid"] for i in range(4)]
    pool = local_pool(lead)
    assert pool.count == 1, "four starts one after the other rode one session"
    session = pool.idle[0]
    process.part(Reach).close()
    assert session.process.poll() is not None, "closing ends the session process"
    st = wait_finished(host, [f"j{i}" for i in range(4)])
    assert all(s["result"]["exit_code"] == 0 and s["result"]["commits"] == 1 for s in st.values()), st
    again = host.call("start", start_request(lead, host, "j0", "true"))
    assert again == {**again, "pid": pids[0], "existing": True}, "a second start answers with the first's pid"


def test_a_session_opened_under_another_home_is_not_reused(lead: Lead, monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: Path, sealed: Path) -> None:
    host = LocalHost(lead.repo)
    host.call("stop", {"job": "nobody", "runs_dir": RUNS_DIR})  # a session under the first HOME
    other = tmp_path / "other-home"
    other.mkdir()
    monkeypatch.setenv("HOME", str(other))
    host.call("start", start_request(lead, host, "h1", "true"))
    assert (other / ".balanced" / "runs" / "h1" / "pid").exists(), "the run folder is under the HOME of now"
    assert not (sealed / ".balanced" / "runs" / "h1").exists(), "not under the HOME the first session kept"
    wait_finished(host, ["h1"])


def test_a_local_session_that_died_is_replaced(lead: Lead) -> None:
    host = LocalHost(lead.repo)
    host.call("stop", {"job": "nobody", "runs_dir": RUNS_DIR})
    pool = local_pool(lead)
    dead = pool.idle[0].process
    os.kill(dead.pid, signal.SIGKILL)
    dead.wait()
    answer = host.call("stop", {"job": "nobody", "runs_dir": RUNS_DIR})
    assert answer["state"] == "missing", answer
    assert pool.count == 1 and pool.idle[0].process.pid != dead.pid, "a new session took the dead one's place"


def test_a_local_runner_that_does_not_answer_in_time_is_a_plain_error(lead: Lead, mocker: MockerFixture) -> None:
    import git_balanced.machines.reach.hosts as hosts

    host = LocalHost(lead.repo)
    # It shrugs off SIGTERM, so the runner waits its grace of 10 s, and the stop its 5, before it ends.
    host.call("start", start_request(lead, host, "slow", "trap '' TERM; while :; do sleep 0.1; done"))
    wait_until(lambda: host.call("status", {"jobs": ["slow"], "runs_dir": RUNS_DIR})["jobs"]["slow"]["agent_alive"],
               20, "the agent to start")
    mocker.patch.object(hosts, "LOCAL_TIMEOUT", 0.5)
    with pytest.raises(BalancedError, match="The runner on this machine did not answer stop within 0 s"):
        host.call("stop", {"job": "slow", "runs_dir": RUNS_DIR, "wait": 5})
    assert local_pool(lead).count == 0, "the session that did not answer in time was not kept"


def test_a_second_session_opens_only_when_the_first_stays_busy(lead: Lead) -> None:
    pool = local_pool(lead)
    pool.warm(10)
    pool.warm(10)
    assert pool.count == 1, "warming twice opens one session"
    for _ in range(20):
        assert pool.call("status", {"jobs": ["x"], "runs_dir": RUNS_DIR}, 10) is not None
    assert pool.count == 1, "requests one after the other share it"
    held = pool._take(10)
    assert held is not None and pool.count == 1
    answer = pool.call("status", {"jobs": ["x"], "runs_dir": RUNS_DIR}, 10)
    assert answer is not None and pool.count == 2, "with the first one busy, a request opened a second"
    pool._give_back(held)


def test_many_requests_go_at_once_and_come_back_in_order(lead: Lead) -> None:
    host = LocalHost(lead.repo)
    jobs = [f"m{i}" for i in range(5)]
    answers = host.call_many("start", [start_request(lead, host, j, f"echo {j} > {j}.txt") for j in jobs])
    assert [a["job"] for a in answers] == jobs and all(a["pid"] for a in answers), answers
    assert local_pool(lead).count == 1, "five starts in one message, through one session"
    st = wait_finished(host, jobs)
    assert all(st[j]["result"]["commits"] == 1 for j in jobs), st


ONE_ANSWER = "import json; print(json.dumps({'ready': True}), flush=True); input(); print(json.dumps({'n': 1}))"


def test_a_session_that_ends_halfway_through_a_batch_leaves_the_rest_unanswered() -> None:
    pool = sessions.Pool(lambda: (subprocess.Popen([sys.executable, "-c", ONE_ANSWER], stdin=subprocess.PIPE,
                                                   stdout=subprocess.PIPE), None))
    answers = pool.call_many("status", [{}, {}, {}], 10)
    assert answers == [{"n": 1}, None, None], "the callers send the unanswered ones again"
    assert pool.count == 0 and pool.idle == [], "and the session that ended is not kept"


def test_idle_sessions_are_closed_and_their_slots_freed(lead: Lead, mocker: MockerFixture) -> None:
    mocker.patch.object(sessions, "IDLE", 0.2)
    timer = mocker.spy(sessions.Pool, "_on_timer")
    host = LocalHost(lead.repo)
    host.call("stop", {"job": "nobody", "runs_dir": RUNS_DIR})
    pool = local_pool(lead)
    session = pool.idle[0]
    wait_until(lambda: pool.count == 0, 5, "the idle session to close")
    assert pool.count == 0 and session.process.poll() is not None, "unused for IDLE seconds, it was closed"
    assert timer.call_count >= 1, "by the idle timer, not by the runner ending on its own"


# -- on SSH machines --------------------------------------------------------------------------------------------
@pytest.fixture
def machines(tmp_path: Path) -> Iterator[Machines]:
    with sshd_machines(tmp_path, ["alpha"]) as ms:
        yield ms


@pytest.fixture
def project(machines: Machines, tmp_path: Path) -> Lead:
    repo = make_repo(tmp_path / "proj", {"README.md": "sample\n"})
    wire_lead(repo, machines, SETTINGS)
    return Lead(Repo.discover(repo), "main")


def count_pythons(m: Machine) -> Path:
    """From now on every python3 started on `m` leaves a line in the file returned."""
    site = subprocess.run(["/usr/bin/python3", "-c", "import site; print(site.getusersitepackages())"],
                          env={"HOME": str(m.home)}, capture_output=True, text=True).stdout.strip()
    Path(site).mkdir(parents=True, exist_ok=True)
    starts = m.home / "python-starts"
    Path(site, "usercustomize.py").write_text(f"with open({str(starts)!r}, 'a') as f:\n    f.write('x\\n')\n")
    os.chmod(site, 0o755)
    return starts


def session_python(m: Machine) -> int:
    """The pid of the one runner session's python3 on `m`."""
    found = [pid for pid in m.processes() if Path(f"/proc/{pid}/comm").read_text().strip().startswith("python")
             and b"serve" in Path(f"/proc/{pid}/cmdline").read_bytes()]
    assert len(found) == 1, found
    return found[0]


def started(path: Path) -> int:
    return path.read_text().count("x") if path.exists() else 0


@pytest.mark.sshd
def test_remote_requests_ride_one_session_and_one_python(machines: Machines, project: Lead) -> None:
    alpha = machines.by_name("alpha")
    pythons = count_pythons(alpha)
    host = RemoteHost(project, "alpha")
    for _ in range(20):
        assert host.call("status", STATUS)["jobs"]["nobody"]["state"] == "missing"
    assert started(pythons) == 1, "twenty requests, one python3 there"
    assert alpha.accepted() == 1, "and the session rode the master `ready` opened"
    jobs = [f"r{i}" for i in range(3)]
    for i, job in enumerate(jobs):
        assert host.call("start", start_request(project, host, job, f"echo {i} > f{i}.txt"))["pid"]
    st = wait_finished(host, jobs)
    assert all(s["result"]["commits"] == 1 for s in st.values()), st
    assert started(pythons) == 1, "starts are requests of the same session: the workers fork from it"


@pytest.mark.sshd
def test_a_machine_that_prints_before_the_runner_starts_still_gets_a_session(machines: Machines,
                                                                            project: Lead) -> None:
    alpha = machines.by_name("alpha")
    pythons = count_pythons(alpha)
    site = next(p for p in alpha.home.glob(".local/lib/python3*/site-packages"))
    with open(site / "usercustomize.py", "a") as f:
        f.write("print('Welcome to alpha!')\nprint('{not json')\n")
    host = RemoteHost(project, "alpha")
    for _ in range(3):
        assert host.call("status", STATUS)["jobs"]["nobody"]["state"] == "missing"
    assert started(pythons) == 1, "what python3 printed first was passed over, and the session kept"


@pytest.mark.sshd
def test_a_machine_s_starts_go_in_one_message(machines: Machines, project: Lead) -> None:
    alpha = machines.by_name("alpha")
    pythons = count_pythons(alpha)
    host = RemoteHost(project, "alpha")
    jobs = [f"s{i}" for i in range(6)]
    answers = host.call_many("start", [start_request(project, host, j, f"echo {j} > {j}.txt") for j in jobs])
    assert [a["job"] for a in answers] == jobs and all(a["pid"] for a in answers), answers
    refused = host.call_many("start", [{**start_request(project, host, "bad", "true"), "branch": "-x"}])
    with pytest.raises(BalancedError, match="refused to start a worker"):
        host.answered("start", refused[0])
    st = wait_finished(host, jobs)
    assert all(st[j]["result"]["commits"] == 1 for j in jobs), st
    assert started(pythons) == 1, "six starts, a refused one and the status reads: one python3 there"


@pytest.mark.sshd
def test_without_the_shared_connection_each_request_is_its_own(machines: Machines, project: Lead,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    alpha = machines.by_name("alpha")
    monkeypatch.setenv("GIT_BALANCED_SSH_MULTIPLEX", "0")
    pythons = count_pythons(alpha)
    before = alpha.accepted()
    host = RemoteHost(project, "alpha")
    for _ in range(3):
        assert host.call("status", STATUS)["jobs"]["nobody"]["state"] == "missing"
    assert (started(pythons), alpha.accepted() - before) == (3, 3), "a fresh ssh and a python3 per request"


@pytest.mark.sshd
def test_a_session_killed_there_is_replaced_and_nothing_is_lost(machines: Machines, project: Lead) -> None:
    alpha = machines.by_name("alpha")
    host = RemoteHost(project, "alpha")
    host.call("status", STATUS)
    serving = session_python(alpha)
    os.kill(serving, signal.SIGKILL)
    wait_until(lambda: gone(serving), 10, "the killed session's python to end")
    answer = host.call("start", start_request(project, host, "k1", "echo ok > ok.txt"))
    assert answer["pid"], "the request went as a one-off, then through a new session"
    assert wait_finished(host, ["k1"])["k1"]["result"]["commits"] == 1


@pytest.mark.sshd
def test_a_machine_killed_under_a_session_reads_as_unreachable(machines: Machines, project: Lead) -> None:
    alpha = machines.by_name("alpha")
    host = RemoteHost(project, "alpha")
    host.call("status", STATUS)
    alpha.kill()
    with pytest.raises(MachineUnreachable, match="alpha"):
        host.call("status", STATUS)  # the session ends unanswered; the one-off says why
    with pytest.raises(MachineUnreachable, match="alpha"):
        host.call("status", STATUS)  # no session can open: the same answer, and nothing left counted
    assert (host._pool().count, host._pool().opening, host._pool().idle) == (0, 0, [])


@pytest.mark.sshd
def test_a_frozen_machine_times_the_session_out(machines: Machines, project: Lead, mocker: MockerFixture) -> None:
    alpha = machines.by_name("alpha")
    host = RemoteHost(project, "alpha")
    host.call("status", STATUS)
    mocker.patch.dict(remote.TIMEOUTS, {"status": 1.0})
    serving = session_python(alpha)
    os.kill(serving, signal.SIGSTOP)
    try:
        started_at = time.monotonic()
        with pytest.raises(MachineUnreachable, match="did not answer within 1 s") as err:
            host.call("status", STATUS)
        assert time.monotonic() - started_at < 5
        assert err.value.timed_out, "a session that timed out says so by the error's field"
    finally:
        os.kill(serving, signal.SIGCONT)
    assert host._pool().count == 0, "a session that did not answer is not used again"


@pytest.mark.sshd
def test_sessions_hold_session_slots_and_free_them_when_closed(machines: Machines, project: Lead) -> None:
    host = RemoteHost(project, "alpha")
    pool = host._pool()
    busy = [pool._take(30) for _ in range(sessions.SIZE)]  # each caller holds one: the next opens another
    assert all(busy) and pool.count == sessions.SIZE
    for session in busy:
        assert session is not None
        pool._give_back(session)
    t = Transport("alpha")
    held = []
    with pytest.raises(Exception, match=f"All {MAX_SESSIONS} SSH sessions"):
        for _ in range(MAX_SESSIONS):
            held.append(t.take_slot(wait=False)[1])
    assert len(held) == MAX_SESSIONS - sessions.SIZE, "each open session holds one of the host's slots"
    process.part(Reach).close()
    held.append(t.take_slot(wait=False)[1])
    assert len(held) == MAX_SESSIONS - sessions.SIZE + 1, "closed sessions free theirs"
    for lock in held:
        lock.release()
