"""Workers on SSH machines: the runner sent over the master, branches pushed and fetched, plans landing."""

from __future__ import annotations

import json
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from git_balanced.engine.workers import RUNS_DIR
from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.lead import Lead
from git_balanced.machines.reach import sessions
from git_balanced.machines.reach.remote import RemoteHost
from git_balanced.machines.reach.transport import MAX_SESSIONS
from tests.support.builders import git, make_repo
from tests.support.cli import balanced
from tests.support.sshd import Machine, Machines, sshd_machines, wire_lead
from tests.support.wait import wait_until

pytestmark = pytest.mark.sshd  # every test here starts sshd machines

CHECK = """\
#!/bin/sh
# Every f<N>.txt holds N: a piece that wrote the wrong thing fails here.
for f in f*.txt; do
    [ -e "$f" ] || continue
    n=${f#f}; n=${n%.txt}
    [ "$(cat "$f")" = "$n" ] || { echo "$f is wrong"; exit 1; }
done
"""
SETTINGS = '[worktree]\ncheck = "sh check.sh"\n\n[balanced]\nagent = "shell"\n'


@pytest.fixture
def machines(tmp_path: Path) -> Iterator[Machines]:
    with sshd_machines(tmp_path, ["alpha", "beta"]) as ms:
        yield ms


@pytest.fixture
def project(machines: Machines, tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "proj", {"README.md": "sample\n", "check.sh": CHECK})
    wire_lead(repo, machines, SETTINGS)
    return repo


def landings(repo: Path) -> list[dict]:
    """The landing notes on the lead's first-parent history, newest first."""
    out = git(repo, "log", "--first-parent", "--notes=balanced", "--format=%N", "main")
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def plan_file(tmp_path: Path, pieces: list[dict]) -> Path:
    path = tmp_path / f"plan-{uuid.uuid4().hex[:6]}.yaml"
    path.write_text(json.dumps({"task": "Spread it", "pieces": pieces}))  # JSON is YAML
    return path


def test_a_remote_worker_survives_the_lead_closing_its_connection(
        machines: Machines, project: Path) -> None:
    alpha = machines.by_name("alpha")
    host = RemoteHost(Lead(Repo.discover(project), "main"), "alpha")
    assert host.repo_path() == f"{alpha.home}/proj", "the copy ~/<repository>, as an absolute path"
    wt = host.worktree_path("job1")
    assert wt.startswith(f"{alpha.home}/.balanced/worktrees/proj-") and wt.endswith("/job1"), wt
    base = git(project, "rev-parse", "HEAD")
    host.prepare_base("balanced/slow", base)
    gate = alpha.home / "go"  # the worker runs until the test opens it, after the lead went away
    answer = host.call("start", {
        "job": "job1", "repo": host.repo_path(), "worktree": wt, "branch": "balanced/slow", "base": base,
        "argv": ["sh", "-c", f"until [ -e {gate} ]; do sleep 0.05; done; echo done > out.txt"],
        "commit_leftovers": True,
        "commit_message": "slow: out\n", "runs_dir": RUNS_DIR, "own_copy": True})
    status = {"jobs": ["job1"], "runs_dir": RUNS_DIR}
    assert host.call("status", status)["jobs"]["job1"]["state"] == "running"
    parent = int(Path(f"/proc/{answer['pid']}/stat").read_text().rsplit(")", 1)[1].split()[1])
    assert "sshd" not in Path(f"/proc/{parent}/comm").read_text(), "the runner hangs from no SSH session"
    host.transport.close()  # the lead goes away while the worker runs
    assert not host.transport.check()
    gate.touch()
    st = wait_until(lambda: (now := host.call("status", status)["jobs"]["job1"])["state"] != "running" and now, 20,
                    "the worker to end without the lead")
    assert st["state"] == "finished" and st["result"]["exit_code"] == 0 and st["result"]["commits"] == 1, st
    ref = host.fetch_back("balanced/slow")
    assert ref == "refs/remotes/alpha/balanced/slow"
    assert git(project, "show", f"{ref}:out.txt") == "done", "one fetch from the branch's own copy brings it back"
    assert git(project, "log", "-1", "--format=%an", ref) == "Ada Lead", "committed as the identity `ready` set"
    git(project, "update-ref", "-d", ref)
    got = host.fetch_back_many(["balanced/never-made", "balanced/slow", "balanced/not-either"])
    assert got == {"balanced/never-made": None, "balanced/slow": ref, "balanced/not-either": None}, \
        "the fetches go at once; one that fails is None for its branch, not an error for them all"
    assert git(project, "show", f"{ref}:out.txt") == "done"
    with pytest.raises(BalancedError, match="Could not fetch balanced/never-made back from alpha"):
        host.fetch_back("balanced/never-made")  # the engine fetches it again alone, and says why


def test_a_plan_spread_over_local_and_both_machines_lands_through_the_check(
        machines: Machines, project: Path, tmp_path: Path) -> None:
    pieces = [{"id": f"p{i}", "task": f"Write f{i}.txt", "agent": "shell", "run": f"echo {i} > f{i}.txt"}
              for i in range(6)]
    pieces.append({"id": "last", "task": "After all, on beta", "agent": "shell", "machine": "beta",
                   "after": [f"p{i}" for i in range(6)], "run": "ls f*.txt | wc -l | tr -d ' ' > count.txt"})
    ran = balanced(project, "plan", str(plan_file(tmp_path, pieces)), "--start")
    assert ran.code == 0, ran
    placed = {line.split()[0]: line.split()[1].rstrip(":") for line in ran.out.splitlines()[1:7]}
    assert sorted(placed.values()) == ["alpha", "alpha", "beta", "beta", "local", "local"], ran.out
    ran = balanced(project, "engine", "--until-idle")
    assert ran.code == 0, ran
    notes = {n["piece"]: n for n in landings(project)}
    assert sorted(notes) == ["last", *[f"p{i}" for i in range(6)]], notes
    assert {n["piece"]: n["machine"] for n in notes.values() if n["piece"] != "last"} == placed
    assert notes["last"]["machine"] == "beta" and all(n["result"] == "pass" for n in notes.values())
    assert git(project, "show", "main:count.txt") == "6", "the last piece started from what the others landed"
    for i in range(6):
        assert git(project, "show", f"main:f{i}.txt") == str(i)
    assert git(project, "rev-parse", "refs/remotes/alpha/" + next(
        f"balanced/{p}" for p, m in placed.items() if m == "alpha"))
    inbox = balanced(project, "inbox").out
    assert "Plan 'Spread it' is done: 7 landed" in inbox, inbox
    for m in machines:
        assert m.accepted() == 1, f"{m.name}: ready, pushes, starts, polls and fetches rode one connection"
        left = list((m.home / ".balanced" / "worktrees").glob("proj-*/*"))
        assert left == [], f"landed workers' worktrees are removed on {m.name}: {left}"


def _sessions(m: Machine) -> int:
    """Commands running in SSH sessions there now: children of the user's own sshd process."""
    stat = {}
    for pid in m.processes():
        try:
            text = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        comm, rest = text.split("(", 1)[1].rsplit(")", 1)
        stat[pid] = (comm, int(rest.split()[1]))
    return sum(1 for comm, ppid in stat.values() if stat.get(ppid, ("",))[0] == "sshd")


def test_dispatch_shares_one_connection_and_a_python_per_session(machines: Machines, tmp_path: Path) -> None:
    alpha = machines.by_name("alpha")
    repo = make_repo(tmp_path / "wide", {"README.md": "sample\n", "check.sh": CHECK})
    wire_lead(repo, machines, SETTINGS + "cap = 16\n", tick=["alpha"])
    # A slow machine: every python3 there takes 0.3 s more to start, and says so in a file.
    site = subprocess.run(["/usr/bin/python3", "-c", "import site; print(site.getusersitepackages())"],
                          env={"HOME": str(alpha.home)}, capture_output=True, text=True).stdout.strip()
    assert site.startswith(str(alpha.home)), site
    Path(site).mkdir(parents=True)
    starts = alpha.home / "python-starts"
    Path(site, "usercustomize.py").write_text(
        f"import time\nwith open({str(starts)!r}, 'a') as f:\n    f.write('started\\n')\ntime.sleep(0.3)\n")
    pieces = [{"id": f"d{i}", "task": f"Write f{i}.txt", "agent": "shell", "machine": "alpha",
               "run": f"echo {i} > f{i}.txt"} for i in range(16)]
    assert balanced(repo, "plan", str(plan_file(tmp_path, pieces)), "--start").code == 0
    peak, done = [0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _sessions(alpha))
            time.sleep(0.002)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        ran = balanced(repo, "engine", "--once")  # one pass: all sixteen are started
    finally:
        done.set()
        sampler.join()
    assert ran.code == 0, ran
    states = {j["piece"]: j["state"] for j in json.loads(balanced(repo, "board", "--json", "--all").out)["jobs"]}
    assert states == {f"d{i}": "running" for i in range(16)}, states
    pythons = starts.read_text().count("started") if starts.exists() else 0
    assert 1 <= pythons <= sessions.SIZE, f"sixteen starts rode the runner sessions: {pythons} python3 starts"
    assert 1 <= peak[0] <= MAX_SESSIONS, f"sessions at once on alpha: {peak[0]}, never more than {MAX_SESSIONS}"
    assert alpha.accepted() == 1, "sixteen starts over the one master `ready` opened"


def test_a_machine_is_sent_a_base_once_and_each_finished_branch_comes_back_from_its_own_copy(
        machines: Machines, tmp_path: Path) -> None:
    alpha = machines.by_name("alpha")
    repo = make_repo(tmp_path / "once", {"README.md": "sample\n", "check.sh": CHECK})
    # Landing checks on idle alpha would push it their candidates too (tests/landing/test_machine_checks.py): off,
    # so that each push counted here is a worker's base.
    wire_lead(repo, machines, SETTINGS + "cap = 8\ncheck_machines = false\n", tick=["alpha"])
    before = len(alpha.commands())
    pieces = [{"id": f"o{i}", "task": f"Write f{i}.txt", "agent": "shell", "machine": "alpha",
               "run": f"echo {i} > f{i}.txt"} for i in range(6)]
    assert balanced(repo, "plan", str(plan_file(tmp_path, pieces)), "--start").code == 0
    assert balanced(repo, "engine", "--once").code == 0  # one pass: the six start
    wait_until(lambda: len(list((alpha.home / ".balanced" / "runs").glob("*/result.json"))) >= 6, 30,
               "the six workers on alpha to finish")
    ran = balanced(repo, "engine", "--until-idle")  # its first pass finds all six finished
    assert ran.code == 0, ran
    states = {j["piece"]: j["state"] for j in json.loads(balanced(repo, "board", "--json", "--all").out)["jobs"]}
    assert states == {f"o{i}": "landed" for i in range(6)}, states
    cmds = alpha.commands()[before:]
    # Named with the copy's hooks and programs turned off (untrusted.machine_program): `git -c … receive-pack`.
    pushes = [c for c in cmds if c.startswith(("git-receive-pack ", "git ")) and " receive-pack " in f" {c} "]
    fetches = [c for c in cmds if c.startswith(("git-upload-pack ", "git ")) and " upload-pack " in f" {c} "]
    assert all("core.hooksPath=/dev/null" in c for c in pushes + fetches), pushes + fetches
    runners = [c for c in cmds if c.startswith("python3 -c ")]
    probes = [c for c in cmds if c == "true"]
    assert len(pushes) == 1, f"six pieces on one base: the base was pushed once, not {len(pushes)} times"
    assert sorted(c.rsplit("-workers/", 1)[-1].strip("'") for c in fetches) == [f"balanced+o{i}" for i in range(6)], \
        f"each of the six branches came back in one fetch from its own copy: {fetches}"
    assert runners and all(c.endswith(" serve") for c in runners), \
        f"every runner request (starts, status reads, logs, cleanups) rode a session: {runners}"
    assert len(runners) <= 2 * sessions.SIZE, f"{len(runners)} runner sessions for two engine runs"
    assert len(probes) == 1, f"placing the plan asked once whether alpha answers: {probes}"
    assert len(cmds) == len(pushes) + len(fetches) + len(runners) + 1, f"nothing else ran there: {cmds}"


TRICKY = ("Say \"hi\" & it's $(touch {m}/a) `touch {m}/b`; touch {m}/c | touch {m}/d\n"
          "then $HOME and \\n and {{worktree}} %h %r -oProxyCommand=touch\n\ttabbed \u00e9 '; touch {m}/e; '")


def test_injection_in_names_ids_and_task_text_leaves_no_trace(
        machines: Machines, project: Path, tmp_path: Path, sealed: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    remote_marks = {m.name: m.home / "marks" for m in machines}
    task = TRICKY.format(m=marks) + "".join(" " + TRICKY.format(m=p) for p in remote_marks.values())
    refused = [
        [{"id": "x", "task": "t", "agent": "shell", "run": "true", "machine": f"-oProxyCommand=touch {marks}/f"}],
        [{"id": f"x;touch {marks}/g", "task": "t", "agent": "shell", "run": "true"}],
        [{"id": "x", "task": "t", "agent": "shell", "run": "true", "machine": f"alpha;touch {marks}/h"}],
    ]
    for pieces in refused:
        ran = balanced(project, "plan", str(plan_file(tmp_path, pieces)))
        assert ran.code == 1 and "Traceback" not in ran.err, ran
    ran = balanced(project, "worker", "t", "--run", "true", "--machine", f"-oProxyCommand=touch {marks}/i")
    assert ran.code == 1 and "Traceback" not in ran.err, ran
    ran = balanced(project, "ready", "--", f"-oProxyCommand=touch {marks}/j")
    assert ran.code == 1 and "No machine named" in ran.err, ran

    pieces = [{"id": f"t-{m.name}", "task": task, "agent": "shell", "machine": m.name,
               "run": 'printf "%s" "$BALANCED_TASK" > task-$(id -un).txt'} for m in machines]
    ran = balanced(project, "plan", str(plan_file(tmp_path, pieces)), "--start")
    assert ran.code == 0, ran
    ran = balanced(project, "engine", "--until-idle")
    assert ran.code == 0, ran
    for m in machines:
        assert git(project, "show", f"main:task-{m.user}.txt") == task, "the task arrived there untouched"
        message = git(project, "log", "-1", "--format=%B", f"refs/remotes/{m.name}/balanced/t-{m.name}")
        assert "$(touch" in message and "{worktree}" in message, message
    assert not any(marks.iterdir()), f"nothing ran here: {list(marks.iterdir())}"
    for name, path in remote_marks.items():
        assert not path.exists(), f"nothing ran on {name}"
    found = subprocess.run(["find", str(sealed), str(tmp_path), *(str(m.home) for m in machines), "-name", "[a-j]",
                            "-path", "*marks*"], capture_output=True, text=True).stdout
    assert found == "", found


def test_a_piece_named_to_a_machine_waits_for_it_and_never_falls_back(
        machines: Machines, project: Path, tmp_path: Path) -> None:
    assert balanced(project, "untick", "beta").code == 0
    pieces = [{"id": "pinned", "task": "On beta only", "agent": "shell", "machine": "beta", "run": "echo 1 > f1.txt"}]
    ran = balanced(project, "plan", str(plan_file(tmp_path, pieces)), "--start")
    assert ran.code == 0 and "beta: named by the plan, but it is not ticked; it waits for that machine" in ran.out
    for _ in range(2):
        assert balanced(project, "engine", "--once").code == 0
    inbox = balanced(project, "inbox").out
    assert inbox.count("pinned waits for beta, the machine its plan names: Machine beta is not ticked") == 1, inbox
    assert not landings(project) and machines.by_name("beta").accepted() == 1, "nothing was sent to beta"
    assert balanced(project, "tick", "beta").code == 0
    assert balanced(project, "engine", "--until-idle").code == 0
    assert [(n["piece"], n["machine"]) for n in landings(project)] == [("pinned", "beta")]
