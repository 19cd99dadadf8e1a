"""This machine's worker copy of a lead repository (machines/reach/workcopy.py): what it carries over of the lead's
config and hooks, against real repositories."""

from __future__ import annotations

import os
from pathlib import Path

from git_balanced.git import Repo
from git_balanced.machines.reach import workcopy
from tests.support.builders import git, make_repo


def test_the_copy_carries_who_commits_and_how_in_the_leads_spelling(tmp_path: Path) -> None:
    lead = make_repo(tmp_path / "lead")
    git(lead, "config", "user.name", "Ada Lead")
    git(lead, "config", "user.email", "ada@example.com")
    git(lead, "config", "commit.gpgSign", "false")
    git(lead, "config", "user.signingKey", 'key "quoted" \\ and # not a comment')
    git(lead, "config", "gpg.format", "ssh")
    git(lead, "config", "core.editor", "vi")  # not carried
    copy = workcopy.ensure(Repo.discover(lead), workcopy.WORKERS, "balanced/piece")
    assert git(copy, "config", "--local", "user.name") == "Ada Lead"
    assert git(copy, "config", "--local", "user.email") == "ada@example.com"
    assert git(copy, "config", "--local", "commit.gpgsign") == "false"
    assert git(copy, "config", "--local", "user.signingkey") == 'key "quoted" \\ and # not a comment'
    assert git(copy, "config", "--local", "gpg.format") == "ssh"
    assert git(copy, "config", "--local", "gc.auto") == "0", "a gc there never drops what a worker holds"
    assert "editor" not in git(copy, "config", "--local", "--list")
    text = (copy / ".git" / "config").read_text()
    assert "signingKey" in text and "gpgSign" in text, "written as the lead spells the keys"


def test_a_lead_without_an_identity_gives_the_copy_none(tmp_path: Path) -> None:
    lead = make_repo(tmp_path / "lead")
    assert workcopy.carried_config(Repo.discover(lead)) == {}  # the sealed tests' identity is in the environment
    copy = workcopy.ensure(Repo.discover(lead), workcopy.WORKERS, "balanced/piece")
    assert git(copy, "config", "--local", "--list").count("user.") == 0


def test_hooks_are_the_leads_again_before_each_job_whatever_a_worker_set(tmp_path: Path) -> None:
    lead = make_repo(tmp_path / "lead")
    hook = lead / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o755)
    repo = Repo.discover(lead)
    copy = workcopy.ensure(repo, workcopy.WORKERS, "balanced/piece")
    workcopy.sync_hooks(repo, copy)
    assert (copy / ".git" / "hooks" / "pre-commit").read_text() == hook.read_text()
    # A worker points the copy's hooks elsewhere and writes one of its own: both are gone at the next job.
    git(copy, "config", "core.hooksPath", str(tmp_path / "theirs"))
    (copy / ".git" / "hooks" / "post-commit").write_text("#!/bin/sh\necho mine\n")
    workcopy.sync_hooks(repo, copy)
    assert "hookspath" not in git(copy, "config", "--local", "--list").lower()
    assert not (copy / ".git" / "hooks" / "post-commit").exists()
    # A lead whose hooks live in the worktree (`.husky`): the copy is pointed at the same relative folder.
    git(lead, "config", "core.hooksPath", ".husky")
    workcopy.sync_hooks(repo, copy)
    assert git(copy, "config", "core.hooksPath") == ".husky"


def test_a_lead_without_hooks_leaves_no_hooks_folder_in_the_copy(tmp_path: Path) -> None:
    """No hook to copy and no folder there: none is made (a folder made and removed again with each worker's copy);
    one a worker made is emptied of its hooks at the next job, and the lead's hooks, once it has some, come in."""
    lead = make_repo(tmp_path / "lead", {"a.txt": "a\n"})
    repo = Repo.discover(lead)
    copy = workcopy.ensure(repo, workcopy.WORKERS, "balanced/bare")
    workcopy.sync_hooks(repo, copy)
    assert not os.path.lexists(copy / ".git" / "hooks")
    (copy / ".git" / "hooks").mkdir()
    (copy / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    workcopy.sync_hooks(repo, copy)
    assert os.listdir(copy / ".git" / "hooks") == []
    hook = lead / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o755)
    workcopy.sync_hooks(repo, copy)
    assert (copy / ".git" / "hooks" / "pre-commit").read_text() == hook.read_text()


def test_each_branch_has_its_own_copy_and_starts_where_the_lead_says(tmp_path: Path) -> None:
    """Whatever a copy holds for a branch (a worker planted it), the lead sets the branch from its own record
    before a start: the earlier work it fetched back, else the base; unless a worktree there holds it."""
    lead = make_repo(tmp_path / "lead", {"a.txt": "a\n"})
    repo = Repo.discover(lead)
    base = git(lead, "rev-parse", "HEAD")
    one, two = (workcopy.ensure(repo, workcopy.WORKERS, b) for b in ("balanced/one", "balanced/two"))
    assert one != two and one.parent == two.parent == workcopy.path(repo)
    planted = git(one, "commit-tree", f"{base}^{{tree}}", "-p", base, "-m", "planted")
    git(one, "update-ref", "refs/heads/balanced/one", planted)
    workcopy.set_base(one, "balanced/one", base, None)
    assert git(one, "rev-parse", "refs/heads/balanced/one") == base, "the base, not the planted commit"
    earlier = git(lead, "commit-tree", f"{base}^{{tree}}", "-p", base, "-m", "earlier attempt")
    git(one, "update-ref", "refs/heads/balanced/one", planted)
    workcopy.set_base(one, "balanced/one", base, earlier)
    assert git(one, "rev-parse", "refs/heads/balanced/one") == earlier, "the earlier work the lead recorded"
    wt = tmp_path / "wt"
    git(one, "worktree", "add", "-q", str(wt), "balanced/one")
    (wt / "b.txt").write_text("b\n")
    git(wt, "add", "b.txt")
    git(wt, "commit", "-qm", "the running job's own")
    own = git(wt, "rev-parse", "HEAD")
    workcopy.set_base(one, "balanced/one", base, earlier)
    assert git(one, "rev-parse", "refs/heads/balanced/one") == own, "a branch a worktree holds is left as it is"
    assert workcopy.copy_of(repo, wt) == one and workcopy.copy_of(repo, lead) is None
    workcopy.forget(repo, "balanced/one")
    assert one.is_dir(), "kept while a worktree of it is left"
    git(one, "worktree", "remove", "--force", str(wt))
    workcopy.forget(repo, "balanced/one")
    assert not one.exists() and two.is_dir()
