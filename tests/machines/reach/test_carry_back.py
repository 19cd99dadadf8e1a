"""A worker's branch brought back from its own copy on this machine without a fetch (git/handback.py, through
LocalHost.fetch_back_many), and fetched as before wherever that cannot be trusted to be whole: real repositories."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from git_balanced import process
from git_balanced.errors import BalancedError
from git_balanced.git import Repo, initseed
from git_balanced.machines.reach import workcopy
from git_balanced.machines.reach.hosts import LocalHost
from tests.support.builders import commit, git, make_repo


def _worker(tmp_path: Path, branch: str, files: dict[str, str]) -> tuple[Path, Repo, Path, str, str]:
    """A lead, the branch's copy set to the lead's tip, a worktree of it with one commit of `files`: (lead, its
    Repo, the copy, the base, the worker's tip)."""
    lead = tmp_path / "lead"
    if not lead.exists():
        make_repo(lead, {"a.txt": "a\n"})
    repo = Repo.discover(lead)
    base = git(lead, "rev-parse", "HEAD")
    copy = workcopy.ensure(repo, workcopy.WORKERS, branch)
    workcopy.set_base(copy, branch, base, None)
    wt = tmp_path / f"wt-{branch.replace('/', '-')}"
    git(copy, "worktree", "add", "-q", str(wt), branch)
    tip = commit(wt, files, "the worker's work")
    return lead, repo, copy, base, tip


def test_branches_come_back_whole_in_one_ref_update_and_a_second_time_as_well(tmp_path: Path) -> None:
    lead, repo, _, base, one = _worker(tmp_path, "balanced/one", {"b.txt": "bee\n", "dir/c.txt": "sea\n"})
    many = {f"many/{i}.txt": f"{i}\n" for i in range(110)}  # past UNPACK_MOST objects: kept as a pack
    _, _, _, _, two = _worker(tmp_path, "balanced/two", many)
    got = LocalHost(repo).fetch_back_many(["balanced/one", "balanced/two", "balanced/none"])
    assert got == {"balanced/one": "refs/heads/balanced/one", "balanced/two": "refs/heads/balanced/two",
                   "balanced/none": None}
    assert git(lead, "rev-parse", "refs/heads/balanced/one", "refs/heads/balanced/two").split() == [one, two]
    git(lead, "fsck", "--connectivity-only", "--no-dangling")  # every object of both is here
    assert git(lead, "show", f"{one}:dir/c.txt") == "sea" and git(lead, "show", f"{two}:many/109.txt") == "109"
    assert git(lead, "count-objects", "-v").count("packs: 1"), "the larger one came as a pack"
    assert "fetch: back from the worker copy" in git(lead, "reflog", "show", "refs/heads/balanced/one")
    wt = tmp_path / "wt-balanced-one"
    again = commit(wt, {"b.txt": "bee again\n"}, "more work")
    assert LocalHost(repo).fetch_back_many(["balanced/one"]) == {"balanced/one": "refs/heads/balanced/one"}
    assert git(lead, "rev-parse", "refs/heads/balanced/one") == again
    assert git(lead, "merge-base", base, again) == base


def test_what_cannot_be_carried_whole_is_fetched_and_comes_back_the_same(tmp_path: Path) -> None:
    """A base the worker moved past its own commits leaves them out of the pack: the lead refuses the pack (an
    object it names is missing here) and fetches instead. A link in the copy's objects: fetched."""
    lead, repo, copy, _, tip = _worker(tmp_path, "balanced/one", {"b.txt": "bee\n"})
    second = commit(tmp_path / "wt-balanced-one", {"b.txt": "bee 2\n"}, "second")
    git(copy, "update-ref", "refs/balanced/bases/balanced/one", tip)  # what the worker could write there
    assert workcopy.carry_back(repo, copy, "balanced/one") is None, "a pack missing its first commit is refused"
    assert subprocess.run(["git", "cat-file", "-e", tip], cwd=lead).returncode != 0, "nothing of it written"
    assert LocalHost(repo).fetch_back_many(["balanced/one"]) == {"balanced/one": "refs/heads/balanced/one"}
    assert git(lead, "rev-parse", "refs/heads/balanced/one") == second
    git(lead, "fsck", "--connectivity-only", "--no-dangling")
    git(lead, "worktree", "add", "-q", str(tmp_path / "users"), "balanced/one")  # you have it checked out
    commit(tmp_path / "wt-balanced-one", {"b.txt": "bee 3\n"}, "third")
    assert workcopy.carry_back(repo, copy, "balanced/one") is None, "left to git's fetch, which refuses it"
    with pytest.raises(BalancedError, match="refusing to fetch into branch"):
        LocalHost(repo).fetch_back_many(["balanced/one"])
    assert git(lead, "rev-parse", "refs/heads/balanced/one") == second, "not moved under your checkout"
    _, _, other, _, two = _worker(tmp_path, "balanced/two", {"c.txt": "sea\n"})
    os.symlink("/dev/zero", other / ".git" / "objects" / "zero")
    assert workcopy.carry_back(repo, other, "balanced/two") is None, "not read through a link"
    assert LocalHost(repo).fetch_back_many(["balanced/two"]) == {"balanced/two": "refs/heads/balanced/two"}
    assert git(lead, "rev-parse", "refs/heads/balanced/two") == two


def test_a_copy_made_for_a_job_holds_its_base_and_branch_from_the_start(tmp_path: Path) -> None:
    """Written before the copy takes its place (git/freshcopy.py); a copy there already is set through git, and
    a branch a worker planted in it is put back to the lead's record."""
    lead = make_repo(tmp_path / "lead", {"a.txt": "a\n"})
    repo = Repo.discover(lead)
    base = git(lead, "rev-parse", "HEAD")
    earlier = git(lead, "commit-tree", f"{base}^{{tree}}", "-p", base, "-m", "earlier attempt")
    git(lead, "update-ref", "refs/heads/balanced/one", earlier)
    LocalHost(repo).prepare_base("balanced/one", base)
    copy = workcopy.for_branch(repo, "balanced/one")
    assert git(copy, "rev-parse", "refs/balanced/bases/balanced/one", "refs/heads/balanced/one").split() == [
        base, earlier], "the base, and the branch at the earlier work the lead holds"
    assert "balanced: the base" in git(copy, "reflog", "show", "refs/heads/balanced/one")
    planted = git(copy, "commit-tree", f"{base}^{{tree}}", "-m", "planted")
    git(copy, "update-ref", "refs/heads/balanced/one", planted)
    LocalHost(repo).prepare_base("balanced/one", base)
    assert git(copy, "rev-parse", "refs/heads/balanced/one") == earlier
    git(copy, "fsck", "--connectivity-only", "--no-dangling")


def test_what_a_copy_takes_of_the_leads_config_is_read_at_once(tmp_path: Path) -> None:
    lead = make_repo(tmp_path / "lead", {"a.txt": "a\n"})
    repo = Repo.discover(lead)
    assert workcopy.copy_config(repo) == (workcopy.carried_config(repo), "")
    git(lead, "config", "user.name", "Lead Person")
    git(lead, "config", "core.hooksPath", ".first")
    git(lead, "config", "--add", "core.hooksPath", ".husky")  # the last one is git's
    assert workcopy.copy_config(repo) == ({**workcopy.carried_config(repo), "user.name": "Lead Person"}, ".husky")
    assert git(lead, "config", "--get", "core.hooksPath") == ".husky"



def test_repositories_after_the_first_of_a_folder_are_laid_out_as_git_made_it(tmp_path: Path) -> None:
    """git inits the first repository of a folder; the next are laid out by hand alike (git/initseed.py), file
    for file and mode for mode, and git takes them as its own. (The copies of the test above: the second one of
    each lead was laid out so, and its worktree, commit and bring-back worked.)"""
    first, second = tmp_path / "copies" / "a", tmp_path / "copies" / "b"
    assert initseed.init(first, tmp_path) is None
    assert process.part(initseed._Laid).get(str(first.parent)) is not None, "what git laid out, kept"
    assert initseed.init(second, tmp_path) is None

    def layout(repo: Path) -> dict[str, tuple[int, bytes | None]]:
        return {str(p.relative_to(repo)): (p.stat().st_mode, None if p.is_dir() else p.read_bytes())
                for p in (repo / ".git").rglob("*")}

    assert layout(first) == layout(second) and {".git/HEAD", ".git/config", ".git/objects/pack"} <= set(layout(second))
    git(second, "commit", "-q", "--allow-empty", "-m", "a commit in it")
    git(second, "fsck", "--no-dangling")
    assert git(second, "rev-parse", "--is-bare-repository") == "false"


def test_a_copy_made_a_partial_clone_runs_nothing_when_its_branch_comes_back(tmp_path: Path) -> None:
    """The worker's copy names a "promisor" remote whose upload-pack command is the worker's, and commits a tree
    naming a blob it lacks: bringing the branch back must not fetch that blob (which would run the command here,
    outside the fence). The pack is refused, the fetch fails as a fetch of a broken branch does, nothing ran."""
    lead, repo, copy, _, _ = _worker(tmp_path, "balanced/one", {"b.txt": "bee\n"})
    ran = tmp_path / "ran"
    for key, value in (("core.repositoryformatversion", "1"), ("extensions.partialclone", "origin"),
                       ("remote.origin.url", str(lead)), ("remote.origin.promisor", "true"),
                       ("remote.origin.uploadpack", f"touch {ran}; git-upload-pack")):
        git(copy, "config", key, value)
    wt = tmp_path / "wt-balanced-one"
    missing = "1234567890abcdef1234567890abcdef12345678"
    tree = subprocess.run(["git", "mktree", "--missing"], cwd=wt, input=f"100644 blob {missing}\tgone.txt\n",
                          capture_output=True, text=True, check=True).stdout.strip()
    tip = git(wt, "commit-tree", tree, "-p", "HEAD", "-m", "names a blob it lacks")
    git(wt, "update-ref", "refs/heads/balanced/one", tip)
    try:
        LocalHost(repo).fetch_back_many(["balanced/one"])
    except BalancedError:
        pass  # the branch cannot come back whole: said as a failed fetch is
    assert not ran.exists(), "a command the worker's copy named ran outside the fence"
    here = subprocess.run(["git", "rev-parse", "-q", "--verify", "refs/heads/balanced/one"], cwd=lead,
                          capture_output=True, text=True).stdout.strip()
    assert here != tip, "a branch naming an object the lead lacks came back"


def test_a_fifo_where_the_branch_ref_should_be_does_not_hang_the_engine(tmp_path: Path) -> None:
    """A worker can make its branch's loose ref in its copy a FIFO: reading it must not block (peek reads plain
    files only); the branch is asked of git instead, which reads no FIFO either."""
    lead, repo, copy, _, tip = _worker(tmp_path, "balanced/one", {"b.txt": "bee\n"})
    from git_balanced.git import peek

    ref = copy / ".git" / "refs" / "heads" / "balanced" / "one"
    ref.unlink()
    os.mkfifo(ref)
    assert peek.ref_id(str(copy / ".git"), "refs/heads/balanced/one") == peek.UNSURE
    ref.unlink()
    (copy / ".git" / "packed-refs").unlink(missing_ok=True)
    os.mkfifo(copy / ".git" / "packed-refs")
    assert peek.ref_id(str(copy / ".git"), "refs/heads/balanced/one") == peek.UNSURE


def test_a_new_copy_keeps_its_base_packed_and_its_config_written_once(tmp_path: Path) -> None:
    """In a copy made for a job the base is in packed-refs (no folders, lock or reflog of its own: git keeps no
    reflog of a ref outside refs/heads/ either), the branch is loose with its reflog, and the config holds the
    lead's values: for the copy git made and for the one laid out after it, with them, alike."""
    lead = make_repo(tmp_path / "lead", {"a.txt": "a\n"})
    repo = Repo.discover(lead)
    base = git(lead, "rev-parse", "HEAD")
    git(lead, "config", "user.name", "Lead Person")
    for branch in ("balanced/one", "balanced/two"):  # git inits the first; the second is laid out
        LocalHost(repo).prepare_base(branch, base)
        copy = workcopy.for_branch(repo, branch)
        dot_git = copy / ".git"
        packed = (dot_git / "packed-refs").read_text()
        assert packed == f"# pack-refs with: sorted \n{base} refs/balanced/bases/{branch}\n"
        assert not (dot_git / "refs" / "balanced").exists() and not (dot_git / "logs" / "refs" / "balanced").exists()
        assert (dot_git / "refs" / "heads" / branch).read_text() == f"{base}\n"
        assert git(copy, "for-each-ref", "--format=%(objectname) %(refname)") == \
            f"{base} refs/balanced/bases/{branch}\n{base} refs/heads/{branch}"
        assert "balanced: the base" in git(copy, "reflog", "show", f"refs/heads/{branch}")
        assert git(copy, "config", "gc.auto") == "0" and git(copy, "config", "user.name") == "Lead Person"
        git(copy, "update-ref", f"refs/balanced/bases/{branch}", base, base)  # git moves it as any packed ref
        git(copy, "fsck", "--connectivity-only", "--no-dangling")
    assert process.part(initseed._Laid).get(str(copy.parent)) is not None, "the second copy was laid out"
