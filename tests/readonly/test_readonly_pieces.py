"""A piece with `writes: none` runs in a shared read-only checkout of its base, made once per base and removed
with its last job; anything it writes is refused; its report is its result, and nothing lands. Real git, the
real runner, the real Claude Code against the scripted model server."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.plans.planfile import load_plan
from git_balanced.shipped.readonly import readonly_acquire, readonly_path, readonly_release
from tests.support.builders import git, make_repo
from tests.support.model_server import run_shell, say, write_file
from tests.support.plans import engine, inbox_text, lead_repo, plan
from tests.support.real_agents import real_agents, rows

PLAN = "task: t\npieces:\n  - id: look\n    task: Look.\n    agent: claude\n"


def refusal(extra: str) -> str:
    with pytest.raises(BalancedError) as caught:
        load_plan(PLAN + extra, "plan.yaml")
    return f"{caught.value.message} | {caught.value.hint}"


def test_the_plan_file_reads_writes_none_and_refuses_anything_else() -> None:
    assert load_plan(PLAN + "    writes: none\n", "plan.yaml").pieces[0].writes == "none"
    assert load_plan(PLAN, "plan.yaml").pieces[0].writes is None
    said = refusal("    writes: all\n")
    assert said.startswith("plan.yaml:6: piece look, `writes`: \"all\" (text) is not a choice"), said
    assert "set `writes: none` in piece look" in said, said
    said = refusal("    writes: none\n    paths: ['src/**']\n")
    assert "piece look, `writes`: a piece that writes nothing has no `paths`" in said, said
    assert "piece look, `writes`: true (true/false) is not a choice" in refusal("    writes: true\n")


def test_one_checkout_per_base_shared_read_only_and_gone_with_its_last_job(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/a.txt": "a\n", "bin/run": "#!/bin/sh\n"})
    base = git(repo, "rev-parse", "HEAD")
    runs = tmp_path / "runs"
    where = readonly_path(str(tmp_path / "worktrees"), base)
    for job in ("j1", "j2"):
        (runs / job).mkdir(parents=True)
    assert readonly_acquire(str(repo), where, base, "j1") is True, "the first made it"
    assert readonly_acquire(str(repo), where, base, "j2") is False, "the second shared it"
    assert (Path(where) / "src" / "a.txt").read_text() == "a\n"
    assert not (Path(where) / ".git").exists(), "no repository, no index, no branch"
    modes = [(Path(where) / p).stat().st_mode & 0o222 for p in ("", "src", "src/a.txt", "bin/run")]
    assert modes == [0, 0, 0, 0], "read-only on disk"
    assert git(repo, "worktree", "list").count("\n") == 0, "no worktree was registered"
    assert readonly_release(where, "j1", str(runs)) is False, "j2 still uses it"
    (runs / "j1").rmdir()
    assert Path(where).is_dir()
    assert readonly_release(where, "j2", str(runs)) is True, "gone with its last job"
    assert not Path(where).exists() and not Path(where + ".users").exists()


def test_a_real_claude_reader_cannot_write_and_its_report_comes_to_the_lead(
        tmp_path: Path, agent_bin: str, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = lead_repo(tmp_path)
    checkout = readonly_path(str(Repo.discover(repo).worktrees_home()), git(repo, "rev-parse", "main"))
    turns = [write_file(f"{checkout}/src/base.txt", "changed\n"), run_shell("echo changed > src/new.txt"),
             say("Report: src/base.txt says ok.")]
    with real_agents(monkeypatch, agent_bin, {"claude": turns}):
        assert plan(repo, [{"id": "look", "task": "Read src/base.txt.", "agent": "claude", "writes": "none"}],
                    "--start").code == 0
        ran = engine(repo, "--until-idle", timeout=240)
        assert ran.code == 0, ran
    row = rows(repo)["look"]
    assert row["state"] == "reported", inbox_text(repo)
    assert row["reason"] == f"reported: Report: src/base.txt says ok. (`git balanced show {row['id']}`)", row
    inbox = inbox_text(repo)
    assert f"look finished and reported ({row['id']})" in inbox and ": Report: src/base.txt says ok." in inbox, inbox
    assert "Plan 'A test plan' is done: 0 landed, 1 reported" in inbox, inbox
    assert "balanced/look" not in git(repo, "branch", "--list"), "no branch to land"
    assert git(repo, "show", "main:src/base.txt") == "ok" and "src/new.txt" not in git(repo, "ls-files")
    assert not Path(checkout).exists(), "its checkout went with it"
