"""A machine's copy belongs to one repository: two repositories of the same folder name (one project cloned
twice, or two unrelated projects) get two copies on one machine, and each lands only in its own main."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from git_balanced.errors import GitError
from git_balanced.git import Repo
from git_balanced.lead import Lead
from git_balanced.machines.reach.remote import MachineNotReady, RemoteHost
from git_balanced.machines.reach.transport import Transport
from git_balanced.shipped.branchcopy import own_copy_path
from tests.support.builders import git, make_repo
from tests.support.cli import balanced
from tests.support.sshd import Machines, sshd_machines, wire_lead

pytestmark = pytest.mark.sshd  # every test here starts sshd machines

SETTINGS = '[worktree]\ncheck = "true"\n\n[balanced]\nagent = "shell"\n'


@pytest.fixture
def machines(tmp_path: Path) -> Iterator[Machines]:
    with sshd_machines(tmp_path, ["alpha"]) as ms:
        yield ms


def there(*argv: str) -> str:
    res = Transport("alpha").run(list(argv))
    assert res.ok, f"{argv}: {res.err}"
    return res.out.strip()


def ident(repo: Path) -> str:
    return str(json.loads((repo / ".git" / "balanced" / "id").read_text())["id"])


def run_piece(repo: Path, tmp_path: Path, text: str) -> None:
    """One piece on alpha, always named `p` (so both repositories use the branch balanced/p there)."""
    plan = tmp_path / f"plan-{repo.parent.name}.yaml"
    plan.write_text(json.dumps({"task": "t", "pieces": [{"id": "p", "task": "write it", "agent": "shell",
                                                         "machine": "alpha", "run": f"echo {text} > out.txt"}]}))
    ran = balanced(repo, "plan", str(plan), "--start")
    assert ran.code == 0, ran
    ran = balanced(repo, "engine", "--until-idle")
    assert ran.code == 0, ran


def files_of(repo: Path) -> dict[str, str]:
    names = git(repo, "ls-tree", "--name-only", "main").split()
    return {n: git(repo, "show", f"main:{n}") for n in names if n.endswith(".txt")}


def test_one_project_cloned_twice_gets_two_copies_and_each_lands_in_its_own_main(
        machines: Machines, tmp_path: Path) -> None:
    alpha = machines.by_name("alpha")
    x = make_repo(tmp_path / "x" / "app", {"README.md": "sample\n"})
    git(tmp_path, "clone", "-q", str(x), str(tmp_path / "y" / "app"))
    y = tmp_path / "y" / "app"
    wire_lead(x, machines, SETTINGS)
    out = wire_lead(y, machines, SETTINGS)
    assert ident(x) != ident(y), "a clone is another repository, with an id of its own"
    mine = f"{alpha.home}/app-{ident(y)[:8]}"
    assert f"{alpha.home}/app is the copy of another repository ({ident(x)[:8]}): this repository's copy there " \
           f"is {mine}" in out, out
    assert f"{mine} (copied now; repository {ident(y)[:8]})" in out, out
    assert there("git", "-C", f"{alpha.home}/app", "config", "balanced.repository") == ident(x)
    assert there("git", "-C", mine, "config", "balanced.repository") == ident(y)
    rows = {r["name"]: r for r in json.loads(balanced(y, "machines", "--json").out)}
    assert (rows["alpha"]["repo_path"], rows["alpha"]["repository"]) == (mine, ident(y)), rows["alpha"]

    run_piece(x, tmp_path, "from-x")
    run_piece(y, tmp_path, "from-y")
    assert files_of(x) == {"out.txt": "from-x"} and files_of(y) == {"out.txt": "from-y"}, \
        "each repository's piece landed in its own main only"
    # Each worker worked in its branch's own copy of its repository's copy (gone with its worktree): one branch
    # name, two copies, and neither worker wrote a machine copy.
    assert own_copy_path(f"{alpha.home}/app", "balanced/p") != own_copy_path(mine, "balanced/p")
    for copy in (f"{alpha.home}/app", mine):
        assert there("git", "-C", copy, "for-each-ref", "refs/heads/balanced/") == ""
    again = balanced(x, "ready", "alpha")
    assert again.code == 0 and f"{alpha.home}/app (base moved from " in again.out and "another" not in again.out


def test_an_unrelated_project_of_the_same_name_never_uses_the_others_copy(machines: Machines, tmp_path: Path) -> None:
    alpha = machines.by_name("alpha")
    x = make_repo(tmp_path / "x" / "app", {"README.md": "one project\n"})
    z = make_repo(tmp_path / "z" / "app", {"NOTES.md": "another project\n"})
    wire_lead(x, machines, SETTINGS)
    plain = f"{alpha.home}/app"
    # As a ready of before copies were keyed left it: marked as a copy, with no owner.
    there("git", "-C", plain, "config", "--unset", "balanced.repository")
    out = wire_lead(z, machines, SETTINGS)
    keyed = f"{plain}-{ident(z)[:8]}"
    assert f"{plain} is the copy of an unrelated project: this repository's copy there is {keyed}" in out, out
    run_piece(z, tmp_path, "from-z")
    ran = balanced(x, "ready", "alpha")  # x's own project: it takes its copy back
    assert ran.code == 0 and f"{plain} (" in ran.out, ran.out
    assert there("git", "-C", plain, "config", "balanced.repository") == ident(x)
    run_piece(x, tmp_path, "from-x")
    assert files_of(x) == {"out.txt": "from-x"} and files_of(z) == {"out.txt": "from-z"}
    assert "NOTES.md" not in git(x, "ls-tree", "--name-only", "main"), "nothing of z in x"
    with pytest.raises(GitError):  # z never got x's history
        Repo.discover(z).merge_base("main", git(x, "rev-parse", "main"))


def test_a_push_into_a_copy_that_became_another_repositorys_is_refused_whole(
        machines: Machines, tmp_path: Path) -> None:
    alpha = machines.by_name("alpha")
    x = make_repo(tmp_path / "x" / "app", {"README.md": "sample\n"})
    wire_lead(x, machines, SETTINGS)
    plain = f"{alpha.home}/app"
    before = there("git", "-C", plain, "rev-parse", "refs/balanced/base/main")
    # The copy was removed there and another repository made its own in the same place.
    there("sh", "-c", f"rm -rf {plain} && git init -q {plain} && cd {plain} "
                      "&& git -c user.name=O -c user.email=o@o commit -q --allow-empty -m o "
                      "&& git config balanced.repository 00000000ffffffff "
                      "&& git update-ref refs/balanced/repository $(echo other | git hash-object -w --stdin)")
    theirs = there("git", "-C", plain, "for-each-ref")
    host = RemoteHost(Lead(Repo.discover(x), "main"), "alpha")
    with pytest.raises(MachineNotReady, match="is no longer this repository's; nothing was pushed there"):
        host.prepare_base("balanced/q", before)
    assert there("git", "-C", plain, "for-each-ref") == theirs, "not one ref of the other repository moved"
    rows = {r["name"]: r for r in json.loads(balanced(x, "machines", "--json").out)}
    assert not rows["alpha"]["ready"] and "no longer this repository's" in rows["alpha"]["why_not"]
    ran = balanced(x, "ready", "alpha", "--yes")
    assert ran.code == 0 and f"{plain}-{ident(x)[:8]} (copied now" in ran.out, ran.out
    assert f"{plain} is the copy of another repository (00000000): this repository's copy there is" in ran.out


def test_doctor_removes_a_failed_jobs_worktree_there_with_its_branchs_copy(machines: Machines,
                                                                           tmp_path: Path) -> None:
    """A failed piece keeps its worktree on the machine, in its branch's own copy: doctor names that copy in
    the fix, and `--fix` removes the worktree from it, and the copy with it."""
    alpha = machines.by_name("alpha")
    repo = make_repo(tmp_path / "app", {"README.md": "sample\n"})
    wire_lead(repo, machines, '[worktree]\ncheck = "test ! -e out.txt"\n\n[balanced]\nagent = "shell"\nattempts = 1\n',
              tick=["alpha"])
    pieces = [{"id": "p", "task": "write it", "agent": "shell", "machine": "alpha", "run": "echo x > out.txt"}]
    assert balanced(repo, "plan", "-", "--start", input=json.dumps({"task": "t", "pieces": pieces})).code == 0
    assert "p failed: its check failed" in balanced(repo, "engine", "--until-idle").err
    own = own_copy_path(f"{alpha.home}/app", "balanced/p")
    assert Path(own).is_dir(), "a failed job's branch copy stays, with its worktree"
    listed = balanced(repo, "doctor")
    assert f"remove: ssh alpha git -C {own} worktree remove {alpha.home}/.balanced/worktrees/app-" in listed.out, \
        listed.out
    fixed = balanced(repo, "doctor", "--fix", "--yes")
    assert fixed.code == 0, fixed
    assert not list((alpha.home / ".balanced" / "worktrees").glob("app-*/*")), fixed.out
    assert not Path(own).exists(), "the branch's copy went with its worktree"
