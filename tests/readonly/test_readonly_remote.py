"""A piece that writes nothing on an SSH machine: the runner there makes the shared read-only checkout from the
machine's copy, the worker's writes are refused, its report comes back, and the checkout goes with its job."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_balanced import jobs as J
from git_balanced.git import Repo
from tests.support.builders import git, make_repo
from tests.support.plans import engine, inbox_text, piece, plan
from tests.support.real_agents import rows
from tests.support.sshd import sshd_machines, wire_lead

pytestmark = pytest.mark.sshd


def test_a_reader_on_an_ssh_machine_reports_from_a_read_only_checkout(tmp_path: Path) -> None:
    with sshd_machines(tmp_path, ["alpha"]) as machines:
        repo = make_repo(tmp_path / "proj", {"README.md": "sample\n"})
        wire_lead(repo, machines, '[balanced]\nagent = "shell"\n')
        run = "cat README.md; echo x >> README.md || echo REFUSED-EDIT; touch new.txt || echo REFUSED-NEW"
        assert plan(repo, [piece("look", run, writes="none", machine="alpha")], "--start").code == 0
        ran = engine(repo, "--until-idle", timeout=240)
        assert ran.code == 0, ran
        row = rows(repo)["look"]
        assert row["state"] == "reported" and row["machine"] == "alpha", inbox_text(repo)
        inbox = inbox_text(repo)
        base = git(repo, "rev-parse", "main")
        alpha = machines.by_name("alpha")
        [job] = J.all_jobs(Repo.discover(repo)).values()
        assert job.worktree.startswith(f"{alpha.home}/.balanced/worktrees/proj-"), job.worktree
        assert job.worktree.endswith(f"/readonly/{base}"), job.worktree
        assert "sample" in inbox and "REFUSED-EDIT" in inbox and "REFUSED-NEW" in inbox, inbox
        assert not list(Path(alpha.home).glob(f".balanced/worktrees/*/readonly/{base}")), "gone with its job"
