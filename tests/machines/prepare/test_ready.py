"""`git balanced ready`: a new machine gets the copy, the identity and the base; what is wrong is named."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from git_balanced.machines.reach.transport import Transport
from tests.support.builders import commit, git, make_repo
from tests.support.cli import balanced
from tests.support.sshd import Machines, sshd_machines

pytestmark = pytest.mark.sshd  # every test here starts sshd machines

SHELL = '[worktree]\ncheck = "true"\n\n[balanced]\nagent = "shell"\n'


@pytest.fixture
def machines(tmp_path: Path) -> Iterator[Machines]:
    with sshd_machines(tmp_path, ["alpha", "beta"]) as ms:
        yield ms


def there(name: str, *argv: str) -> str:
    t = Transport(name)
    res = t.run(list(argv))
    assert res.ok, f"{argv} on {name}: {res.err}"
    return res.out.strip()


def test_ready_on_a_new_machine(machines: Machines, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj", {"README.md": "sample\n", ".magnum/settings.toml": SHELL})
    alpha = machines.by_name("alpha")
    assert balanced(repo, "tick", "alpha").code == 0
    # Without a terminal and without --yes, what is yours to decide is not done: that machine is not ready.
    ran = balanced(repo, "ready")
    assert ran.code == 1, ran
    assert "alpha  not ready: git does not know who commits there" in ran.out, ran.out
    assert "`git balanced ready alpha --yes` sets it to Ada Lead <ada@example.com>" in ran.out
    assert ran.out.strip().endswith("Balanced: ready on 1 machine; not ready: alpha (git does not know who "
                                    "commits there)"), ran.out
    state = json.loads((repo / ".git" / "balanced" / "ready.json").read_text())
    assert state["alpha"]["ready"] is False and state["alpha"]["why"] == "git does not know who commits there"

    ran = balanced(repo, "ready", "--yes")
    assert ran.code == 0, ran
    copy = f"{alpha.home}/proj"
    assert "alpha  ready · git " in ran.out and f"{copy} (copied now; repository " in ran.out, ran.out
    assert ran.out.strip().endswith("Balanced: ready on 2 machines")
    tip = git(repo, "rev-parse", "HEAD")
    assert there("alpha", "git", "-C", copy, "rev-parse", "refs/balanced/base/main") == tip, "the base is there"
    assert there("alpha", "sh", "-c", f"ls {copy}") == "", "nothing is checked out there: a push of ours never " \
        "runs the filters a worker could name in the copy's config"
    assert there("alpha", "git", "-C", copy, "config", "user.name") == "Ada Lead"
    assert there("alpha", "git", "-C", copy, "config", "user.email") == "ada@example.com"
    assert there("alpha", "sh", "-c", "git config --global user.name || echo unset") == "unset", \
        "the identity is set in the copy only, not for everything that user does"
    rec = json.loads((repo / ".git" / "balanced" / "ready.json").read_text())["alpha"]
    assert rec["ready"] and rec["home"] == str(alpha.home) and rec["repo_path"] == copy and rec["base"] == tip
    assert rec["identity"] == "Ada Lead <ada@example.com>" and rec["free_bytes"] > 1 << 30

    # Later, only the new base goes, over the same connection.
    new = commit(repo, {"more.txt": "more\n"}, "more")
    ran = balanced(repo, "ready", "alpha")
    assert ran.code == 0 and f"(base moved from {tip[:7]} to {new[:7]}; repository " in ran.out, ran.out
    assert there("alpha", "git", "-C", copy, "rev-parse", "refs/balanced/base/main") == new
    ran = balanced(repo, "ready", "alpha")
    assert ran.code == 0 and f"(up to date at {new[:7]}; repository " in ran.out, ran.out
    assert alpha.accepted() == 1, "four `ready` runs, git pushes included: one SSH connection"
    assert machines.by_name("beta").accepted() == 0, "an unticked machine is left alone"


def test_each_machine_that_is_not_ready_says_why(machines: Machines, tmp_path: Path) -> None:
    # No settings: the agent is claude, which these machines do not have.
    repo = make_repo(tmp_path / "proj")
    alpha, beta = machines.by_name("alpha"), machines.by_name("beta")
    assert balanced(repo, "tick", "alpha", "beta").code == 0
    (beta.home / "proj").mkdir()  # something of the user's own, in the copy's place
    (beta.home / "proj" / "notes.txt").write_text("mine\n")
    ran = balanced(repo, "ready")  # without --yes (and no terminal to ask on), nothing is installed
    assert ran.code == 1, ran
    assert "alpha  not ready: claude, the agent of this repository's settings, is not installed there" in ran.out
    assert "`git balanced ready alpha --yes` installs Claude Code 2.1.332 into ~/.local there (with npm)" in ran.out
    assert "beta   not ready: claude, the agent of this repository's settings, is not installed there" in ran.out
    short = json.loads((repo / ".git" / "balanced" / "id").read_text())["id"][:8]
    assert f"{beta.home}/proj is not a git repository of its own: this repository's copy there is " \
           f"{beta.home}/proj-{short}" in ran.out, "what is in the copy's place is not used: the keyed name is"
    assert (beta.home / "proj" / "notes.txt").read_text() == "mine\n", "what was there is untouched"
    assert "Balanced: ready on 1 machine; not ready: alpha (claude, " in ran.out
    alpha.kill()
    ran = balanced(repo, "ready", "alpha")
    assert ran.code == 1 and "alpha  not ready: it cannot be reached" in ran.out, ran.out
    assert "hint: Try `ssh -F" in ran.out
    seats = balanced(repo, "machines", "--json")
    rows = {r["name"]: r for r in json.loads(seats.out)}
    assert not rows["alpha"]["ready"] and rows["alpha"]["why_not"].startswith("it cannot be reached")


def test_named_machines_must_be_known_and_need_not_be_ticked(machines: Machines, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj", {".magnum/settings.toml": SHELL})
    ran = balanced(repo, "ready", "nowhere")
    assert ran.code == 1 and "No machine named nowhere" in ran.err and "machines add nowhere" in ran.err
    assert balanced(repo, "machines", "add", "beta").code == 0
    ran = balanced(repo, "ready", "beta", "--yes")
    assert ran.code == 0 and "(not ticked: `git balanced tick beta`)" in ran.out, ran.out
    assert ran.out.strip().endswith("Balanced: ready on 1 machine")
