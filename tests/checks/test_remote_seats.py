"""The check seats of a machine reached over SSH: its workers' checks (`git balanced seat`, the runner's own script
there, stdlib only) share its budget, the second waits and hears who holds the seat, and `machines` asks the
machine's runner how many are in use."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from git_balanced import jobs as J
from git_balanced.git import Repo
from tests.support.builders import make_repo
from tests.support.cli import balanced
from tests.support.plans import plan
from tests.support.sshd import sshd_machines, wire_lead
from tests.support.wait import wait_until

pytestmark = pytest.mark.sshd


def test_workers_on_one_machine_share_its_check_seats(tmp_path: Path) -> None:
    with sshd_machines(tmp_path, ["alpha"]) as machines:
        repo = make_repo(tmp_path / "proj", {"README.md": "sample\n"})
        wire_lead(repo, machines, '[balanced]\nagent = "shell"\ncheck_seats = 1\n')
        pieces = [{"id": p, "task": f"Write {p}.", "agent": "shell", "machine": "alpha", "check": "sleep 2",
                   "run": f"echo {p} > {p}.txt && git add -A && git commit -qm {p} && git balanced seat 'sleep 2'"}
                  for p in ("a", "b")]
        assert plan(repo, pieces, "--start").code == 0
        log = tmp_path / "engine.err"
        with log.open("w") as err:
            eng = subprocess.Popen([sys.executable, "-m", "git_balanced.cli", "engine", "--until-idle"], cwd=repo,
                                   env=dict(os.environ), stdout=err, stderr=err, stdin=subprocess.DEVNULL)
        try:
            def held() -> dict | None:
                listed = balanced(repo, "machines", "--json")
                alpha = next(r for r in json.loads(listed.out) if r["name"] == "alpha")["check_seats"]
                return alpha if alpha and alpha.get("in_use") == 1 else None

            alpha = wait_until(held, 90, "a worker's check to hold alpha's only seat", said=log.read_text)
            assert alpha["budget"] == 1 and alpha["holders"][0]["command"] == "sleep 2", alpha
            assert alpha["holders"][0]["who"].startswith("the worker of "), alpha
            assert eng.wait(120) in (0, 1), log.read_text()
        finally:
            if eng.poll() is None:
                eng.kill()
                eng.wait()
        jobs = J.all_jobs(Repo.discover(repo)).values()
        assert sorted((j.piece, [c["command"] for c in j.checks]) for j in jobs) == [("a", ["sleep 2"]),
                                                                                   ("b", ["sleep 2"])]
        waited = [j for j in jobs if j.checks[0]["waited"] >= 1]
        assert len(waited) == 1, [j.checks for j in jobs]
        other = next(j for j in jobs if j is not waited[0])
        said = balanced(repo, "logs", waited[0].id).out
        assert (f"All 1 check seats of this machine are taken (the worker of {other.piece} (job {other.id}) "
                "runs `sleep 2` since") in said, said
        row = next(r for r in json.loads(balanced(repo, "board", "--json").out)["jobs"] if r["id"] == waited[0].id)
        assert "its own check `sleep 2` passed" in row["reason"] and "after waiting" in row["reason"], row
