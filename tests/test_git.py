"""The one door to git (git_balanced/git/): the reads done in-process, against real repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from git_balanced.errors import GitError
from git_balanced.git import ZERO, PackedRefs, Repo, found_in_process, refs_from_files
from git_balanced.state import refs
from tests.support.builders import commit, git, make_repo


def by_git(root: Path, prefix: str) -> dict[str, str]:
    """What `git for-each-ref PREFIX` lists, as list_refs returns it."""
    out = git(root, "for-each-ref", "--format=%(objectname) %(refname)", prefix)
    return {name: sha for sha, _, name in (line.partition(" ") for line in out.splitlines())}


def test_show_file_reads_a_branch_a_commit_a_tag_and_any_revision(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {".magnum/settings.toml": "x = 1\né\n", "f": "blob\n"})
    git(root, "tag", "-a", "v1", "-m", "a tag")
    head = git(root, "rev-parse", "HEAD")
    repo = Repo.discover(root)
    for rev in ("main", head, "refs/tags/v1", "refs/heads/main", "HEAD", "main~0"):
        assert repo.show_file(rev, ".magnum/settings.toml") == "x = 1\né\n", rev
    assert repo.show_file("main", "missing") is None, "no such file"
    assert repo.show_file("main", "f/under-a-file") is None, "a path through a file"
    assert repo.show_file("main", ".magnum") is None, "a folder is not a file"
    assert repo.show_file("no-such-branch", "f") is None, "no such revision"
    assert repo.show_file("main~1", "f") is None, "a revision before the first commit"


def test_remote_refs_are_listed_loose_and_packed(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"f": "x\n"})
    head = git(root, "rev-parse", "HEAD")
    for ref in ("refs/remotes/alpha/balanced/p1", "refs/remotes/beta/balanced/x/y"):
        git(root, "update-ref", ref, head)
    git(root, "pack-refs", "--all")
    git(root, "update-ref", "refs/remotes/gamma/balanced/p1", head)
    repo = Repo.discover(root)
    assert list(repo.list_refs("refs/remotes/")) == [
        "refs/remotes/alpha/balanced/p1", "refs/remotes/beta/balanced/x/y", "refs/remotes/gamma/balanced/p1"]
    assert repo.list_refs("refs/nothing/") == {}


def test_a_first_ref_in_a_folder_another_writer_just_made_is_written(tmp_path: Path, monkeypatch) -> None:
    """Two writers making the first refs of one folder at once: dulwich checks that the reflog folder is missing,
    the other writer makes it, and dulwich's bare mkdir fails. Our swap makes the folder first."""
    import os.path

    import dulwich.repo

    path = make_repo(tmp_path / "r")
    repo = Repo.discover(path)
    head = repo.rev_parse("HEAD")
    assert head
    folder = str(repo.common_dir / "logs" / "refs" / "balanced" / "jobs")
    real_exists = os.path.exists

    def racing_exists(p: object) -> bool:
        if str(p) == folder and not real_exists(folder):  # the other writer makes it just after this check
            os.makedirs(folder)
            return False
        return real_exists(p)  # type: ignore[arg-type]

    monkeypatch.setattr(dulwich.repo.os.path, "exists", racing_exists)
    assert repo.cas_ref("refs/balanced/jobs/a", head, None)
    monkeypatch.undo()
    assert git(path, "rev-parse", "refs/balanced/jobs/a") == head


def test_the_branch_and_a_branch_tip_read_without_git_agree_with_git(tmp_path: Path) -> None:
    lead = make_repo(tmp_path / "lead")
    repo = Repo.discover(lead)
    assert repo.current_branch() == "main"
    tip = git(lead, "rev-parse", "HEAD")
    assert repo.rev_parse("refs/heads/main") == tip
    assert repo.rev_parse("refs/heads/nothing") is None
    first = commit(lead, {"b.txt": "b\n"})
    assert repo.rev_parse("refs/heads/main") == first, "read again, never kept"
    assert repo.rev_parse("refs/heads/main~1") == tip, "rev syntax still goes to git"
    git(lead, "pack-refs", "--all")
    assert repo.rev_parse("refs/heads/main") == first, "a packed branch"
    git(lead, "tag", "main")  # a tag of the same name: git would shorten the branch to heads/main
    assert repo.current_branch() == "main"
    git(lead, "checkout", "-q", "--detach")
    assert repo.current_branch() is None
    git(lead, "checkout", "-q", "-b", "feat/x-1")
    assert repo.current_branch() == "feat/x-1"
    wt = tmp_path / "wt"
    git(lead, "worktree", "add", "-q", "-b", "other", str(wt))
    assert Repo.discover(wt).current_branch() == "other"
    assert Repo.discover(wt).rev_parse("refs/heads/feat/x-1") == first


def test_one_listing_answers_as_a_listing_per_kind_does_and_a_write_lists_again(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "r"))
    for ref in ("refs/balanced/jobs/j1", "refs/balanced/jobs/j2", "refs/balanced/plans/p1",
                "refs/balanced/inbox/main", "refs/balanced/inbox/main%2Fui", "refs/balanced/jobsx/odd"):
        refs.append(repo, ref, "note", "a note")
    prefixes = ("refs/balanced/jobs/", "refs/balanced/jobs", "refs/balanced/plans/", "refs/balanced/questions/",
                "refs/balanced/inbox/main", "refs/balanced/inbox/mai", "refs/balanced/", "refs/heads/")
    each = {prefix: repo.list_refs(prefix) for prefix in prefixes}
    for prefix in prefixes:
        assert each[prefix] == by_git(repo.root, prefix), prefix
    calls: list[str] = []
    real = repo._for_each_ref

    def counted(prefix: str) -> dict[str, str]:
        calls.append(prefix)
        return real(prefix)

    repo._for_each_ref = counted  # type: ignore[method-assign]
    with repo.listing_once():
        for prefix in prefixes:
            assert repo.list_refs(prefix) == each[prefix], prefix
        assert len(repo.list_refs("refs/balanced/")) == 6
        assert calls == ["refs/balanced/jobs/", "refs/balanced/jobs", "refs/balanced/plans/",
                         "refs/balanced/questions/", "refs/balanced/inbox/", "refs/balanced/", "refs/heads/",
                         "refs/balanced/"], "each kind's folder listed once; what is not one kind's, as asked"
        refs.append(repo, "refs/balanced/jobs/j3", "note", "written within")  # through this object: seen at once
        assert set(repo.list_refs("refs/balanced/jobs/")) == {f"refs/balanced/jobs/j{i}" for i in (1, 2, 3)}
        tip = repo.read_ref("refs/balanced/plans/p1")
        assert "refs/balanced/plans/p1" in repo.list_refs("refs/balanced/plans/")
        git(repo.root, "update-ref", "-d", "refs/balanced/plans/p1")  # another writer: seen at the next listing
        assert "refs/balanced/plans/p1" in repo.list_refs("refs/balanced/plans/")
        repo.update_ref("refs/balanced/plans/p2", tip or "", ZERO, message="p2")  # git writes: listed again
        assert set(repo.list_refs("refs/balanced/plans/")) == {"refs/balanced/plans/p2"}
    calls.clear()
    repo.list_refs("refs/balanced/jobs/")
    repo.list_refs("refs/balanced/jobs/")
    assert len(calls) == 2, "outside the block, every listing reads the refs again"


def test_a_listing_read_from_the_ref_files_is_what_for_each_ref_lists(tmp_path: Path) -> None:
    origin = make_repo(tmp_path / "origin")
    git(origin, "tag", "-a", "v1", "-m", "an annotated tag")  # listed with the tag's own id, as git does
    git(origin, "tag", "light")
    root = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(root))  # refs/remotes/origin/HEAD: a symbolic ref
    head = commit(root, {"a": "a\n"})
    first = git(root, "rev-parse", "HEAD~1")
    for ref in ("refs/balanced/jobs/j1", "refs/balanced/jobs/j2", "refs/balanced/jobs/deep/j3",
                "refs/balanced/inbox/main", "refs/balanced/inbox/main%2Fui", "refs/balanced/jobsx/odd"):
        git(root, "update-ref", ref, first)
    git(root, "pack-refs", "--all")
    git(root, "update-ref", "refs/balanced/jobs/j1", head)  # loose over packed: the loose one counts
    git(root, "update-ref", "refs/balanced/jobs/j4", head)
    git(root, "update-ref", "-d", "refs/balanced/jobs/j2")  # gone from packed-refs
    (root / ".git" / "refs" / "balanced" / "jobs" / "j5.lock").write_text(head + "\n")  # a writer's lock
    repo = Repo.discover(root)
    packed = PackedRefs(repo.common_dir / "packed-refs")
    for prefix in ("refs/balanced/", "refs/balanced/jobs/", "refs/balanced/jobs", "refs/balanced/inbox/main",
                   "refs/balanced/inbox/mai", "refs/balanced/nothing/", "refs/heads/", "refs/tags/", "refs/remotes/",
                   "refs/"):
        read = refs_from_files(repo.common_dir, prefix, packed)
        assert read is not None and read == by_git(root, prefix), prefix
        assert list(read) == list(by_git(root, prefix)), f"{prefix}: in git's order"
    assert set(refs_from_files(repo.common_dir, "refs/balanced/jobs/", packed) or {}) == {
        "refs/balanced/jobs/j1", "refs/balanced/jobs/j4", "refs/balanced/jobs/deep/j3"}
    # What git would judge goes to git: a pattern, a worktree's own refs, a file that is no id, a link.
    for prefix in ("refs/balanced/jobs/j*", "refs/bisect/"):
        assert refs_from_files(repo.common_dir, prefix, packed) is None, prefix
    broken = root / ".git" / "refs" / "balanced" / "jobs" / "broken"
    broken.write_text("not an id\n")
    assert refs_from_files(repo.common_dir, "refs/balanced/", packed) is None
    assert repo.list_refs("refs/balanced/jobs/") == by_git(root, "refs/balanced/jobs/"), "git answers, and skips it"
    broken.unlink()
    (root / ".git" / "refs" / "balanced" / "jobs" / "linked").symlink_to(root / ".git" / "refs" / "heads" / "main")
    assert refs_from_files(repo.common_dir, "refs/balanced/", packed) is None
    assert repo.list_refs("refs/balanced/jobs/") == by_git(root, "refs/balanced/jobs/")
    # A packed-refs file that is not what git writes: left to git too.
    odd = PackedRefs(tmp_path / "packed-refs")
    odd.path.write_text("# pack-refs with: peeled\nnot-an-id refs/heads/x\n")
    assert odd.refs() is None
    odd.path.write_text(f"{head} refs/heads/x\n")
    assert odd.refs() == {"refs/heads/x": head}, "read again once the file changed"


def discovered_by_git(where: Path) -> tuple[Path, Path, Path] | None:
    res = subprocess.run(["git", "rev-parse", "--path-format=absolute", "--is-bare-repository", "--git-dir",
                          "--git-common-dir", "--show-toplevel"], cwd=where, capture_output=True, text=True)
    if res.returncode != 0:
        return None
    bare, git_dir, common, *top = res.stdout.splitlines()
    return None if bare == "true" else (Path(top[0]), Path(git_dir), Path(common))


def test_a_checkout_found_without_git_is_the_one_git_finds(tmp_path: Path) -> None:
    lead = make_repo(tmp_path / "lead", {"sub/deeper/f": "x\n"})
    git(lead, "worktree", "add", "-q", "-b", "other", str(tmp_path / "wt"))
    (tmp_path / "wt" / "new" / "folder").mkdir(parents=True)
    inner = make_repo(tmp_path / "inner")
    git(lead, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(inner), "mod")
    (tmp_path / "link").symlink_to(lead / "sub")
    for where in (lead, lead / "sub" / "deeper", tmp_path / "wt", tmp_path / "wt" / "new" / "folder",
                  tmp_path / "link" / "deeper"):
        found = found_in_process(where)
        assert found is not None and found == discovered_by_git(where), where
        repo = Repo.discover(where)
        assert (repo.root, repo.git_dir, repo.common_dir, repo.bare) == (*found, False), where
    # Where git has more to say, git says it: a bare repository, inside a git folder, outside any repository,
    # a config that moves the working tree (a submodule's does).
    assert found_in_process(lead / "mod") is None
    mod = Repo.discover(lead / "mod")
    assert (mod.root, mod.git_dir, mod.common_dir) == discovered_by_git(lead / "mod")
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    outside = tmp_path / "outside"
    outside.mkdir()
    for where in (bare, lead / ".git" / "refs", outside):
        assert found_in_process(where) is None, where
    assert Repo.discover(bare).bare and Repo.discover(bare).git_dir == bare
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    moved = make_repo(tmp_path / "moved")
    git(moved, "config", "core.worktree", str(elsewhere))
    assert found_in_process(moved) is None
    assert Repo.discover(moved / ".git").root == elsewhere, "git's answer, core.worktree followed"


def test_a_checkout_of_another_user_is_left_to_git(tmp_path: Path) -> None:
    """git refuses a repository another user owns unless safe.directory names it: that is git's to judge."""
    import os

    if os.geteuid() != 0:
        pytest.skip("giving the folder to another user needs root")
    lead = make_repo(tmp_path / "lead")
    assert found_in_process(lead) is not None
    os.chown(lead / ".git", 65534, 65534)
    assert found_in_process(lead) is None


def test_a_full_id_is_resolved_in_process_as_git_resolves_it(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"f": "x\n"})
    git(root, "tag", "-a", "v1", "-m", "an annotated tag")
    repo = Repo.discover(root)
    head = git(root, "rev-parse", "HEAD")
    ids = {"commit": head, "tag": git(root, "rev-parse", "v1"), "tree": git(root, "rev-parse", "HEAD^{tree}"),
           "blob": git(root, "rev-parse", "HEAD:f"), "missing": "1" * 40}
    for kind, sha in ids.items():
        commit_res = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{sha}^{{commit}}"], cwd=root,
                                    capture_output=True, text=True)
        assert repo.rev_parse(sha) == (commit_res.stdout.strip() or None), kind
        tree_res = subprocess.run(["git", "rev-parse", f"{sha}^{{tree}}"], cwd=root, capture_output=True, text=True)
        if tree_res.returncode == 0:
            assert repo.tree_of(sha) == tree_res.stdout.strip(), kind
        else:
            with pytest.raises(GitError):
                repo.tree_of(sha)
    assert repo.rev_parse(ids["tag"]) == head, "a tag peeled to its commit"


def test_git_is_run_through_repos_named_methods_only() -> None:
    """git_balanced/git/ is the one door to git (STYLE.md): the rest of the package asks `Repo` for what it wants
    by name (`count_commits`, `diff_tree`, `commit_tree`, ...), not for a git command line of its own making."""
    import re

    package = Path(__file__).resolve().parents[1] / "git_balanced"
    # a Repo's git, by name or by its private doors
    raw = re.compile(r"\.git\(\s*(?:f?\"|\*)|repo\._git\(|repo\._?run\(|\brun_git\(")
    # run_git where no Repo can do it: a worker copy set up and run in before it is a checkout (git_in);
    # the scope core.hooksPath is set in, for the words that say how to unset it
    allowed = {"git_balanced/machines/reach/workcopy.py": 2, "git_balanced/hooks/precommit.py": 1}
    found = [f"{p.relative_to(package.parent)}:{n}" for p in sorted(package.rglob("*.py"))
             if p.parent != package / "git"
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if raw.search(line)]
    for path, most in allowed.items():
        mine = [f for f in found if f.startswith(path + ":")]
        assert len(mine) == most, f"{path} runs git by hand {len(mine)} times, {most} allowed: {mine}"
        found = [f for f in found if f not in mine]
    assert not found, f"git run by hand outside git_balanced/git/; give Repo a named method instead: {found}"
    assert not hasattr(Repo, "git"), "Repo.git is the git package's own (Repo._git)"
    assert not hasattr(Repo, "run"), "Repo.run is the git package's own (Repo._run)"


def test_the_named_methods_say_what_git_says(tmp_path: Path) -> None:
    path = make_repo(tmp_path / "r", {"a.txt": "a\n", "b.txt": "bee\n"})
    repo = Repo.discover(path)
    base = repo.rev_parse("HEAD")
    assert base
    commit(path, {"a.txt": "a changed\n", "c.txt": "sea\n"}, "change a, add c")
    git(path, "rm", "-q", "b.txt")
    git(path, "commit", "-qm", "remove b")
    tip = repo.rev_parse("HEAD")
    assert tip
    assert repo.count_commits(base, tip) == 2 and repo.count_commits(tip, base) == 0
    assert repo.commits(tip, base) == [tip, git(path, "rev-parse", "HEAD~1")]
    assert repo.commits(tip, base, first_parent=True, most=1) == [tip]
    assert repo.merge_base(base, tip) == base
    assert repo.subject(tip) == "remove b"
    changed = {c.path: c.status for c in repo.diff_tree(base, tip)}
    assert changed == {"a.txt": "M", "b.txt": "D", "c.txt": "A"}
    sizes = repo.object_sizes([c.new for c in repo.diff_tree(base, tip) if c.status != "D"])
    assert sorted(sizes) == [4, len("a changed\n")]
    assert sorted(repo.numstat(base, tip)) == [(0, 1, "b.txt"), (1, 0, "c.txt"), (1, 1, "a.txt")]
    assert repo.files_in(tip, ["a.txt", "b.txt", "nope"]) == ["a.txt"]
    assert repo.git_path("hooks") == path.resolve() / ".git" / "hooks"
    assert repo.remotes() == [] and repo.upstream("main") is None
    assert repo.config_value("core.hooksPath") is None
    git(path, "config", "core.hooksPath", ".githooks")
    assert repo.config_value("core.hooksPath") == ".githooks"
    made = repo.commit_tree(repo.write_index_tree(), [tip], "a probe")
    assert repo.tree_of(made) == repo.tree_of(tip) and repo.subject(made) == "a probe"
    side = "refs/heads/side"
    git(path, "branch", "side", tip)
    assert not repo.update_ref(side, base, base, message="moved") and repo.read_ref(side) == tip, "it moved meanwhile"
    assert repo.update_ref(side, base, tip, message="moved") and repo.read_ref(side) == base
    assert not repo.delete_ref(side, tip) and repo.delete_ref(side, base) and repo.read_ref(side) is None
    (path / "new.txt").write_text("n\n")
    (path / "a.txt").write_text("a again\n")
    assert sorted(repo.status_entries()) == [(" M", "a.txt"), ("??", "new.txt")]
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(path, "remote", "add", "origin", str(bare))
    assert repo.remotes() == ["origin"]
    assert repo.push("origin", ["main:refs/heads/main"]).ok and git(bare, "rev-parse", "main") == tip
    assert repo.fetch("origin", ["+refs/heads/main:refs/remotes/origin/main"]).ok
    assert repo.read_ref("refs/remotes/origin/main") == tip
    log = repo.first_parent_log(f"{base}..{tip}", "%s", oldest_first=True)
    assert log.splitlines() == ["change a, add c", "remove b"]


def test_the_named_methods_for_worktrees_and_config_say_what_git_says(tmp_path: Path) -> None:
    path = make_repo(tmp_path / "r", {"a.txt": "a\n", ".gitignore": "*.env\n"})
    repo = Repo.discover(path)
    tip = repo.rev_parse("HEAD")
    assert tip and repo.root_commits("HEAD") == [tip] and repo.kept_by_a_ref(tip)
    assert repo.is_ignored("x.env") and not repo.is_ignored("a.txt")
    git(path, "config", "balanced.someKey", "one")
    assert ("balanced.somekey", "one") in repo.config_values("^balanced\\.")
    assert (repo.committer_ident() or "").startswith(git(path, "var", "GIT_COMMITTER_IDENT").rsplit(" ", 2)[0])
    wt = tmp_path / "wt"
    git(path, "worktree", "add", "-q", "-b", "side", str(wt))
    assert repo.head_at(wt) == (tip, "side") and repo.branch_tips_at(wt) == [(tip, "main"), (tip, "side")]
    assert repo.common_dir_at(wt) == repo.common_dir.resolve() and repo.status_at(wt).out == ""
    (wt / "b.txt").write_text("b\n")
    assert repo.status_at(wt).out.strip() == "?? b.txt"
    assert not repo.remove_worktree(wt).ok and wt.exists(), "git refuses a worktree with changes"
    (wt / "b.txt").unlink()
    assert repo.remove_worktree(wt).ok and not wt.exists()
    git(path, "worktree", "add", "-q", "--detach", str(wt))
    import shutil

    shutil.rmtree(wt)
    assert "Removing worktrees/wt" in repo.prune_worktrees(dry_run=True).err
    assert repo.prune_worktrees().ok and "wt" not in git(path, "worktree", "list")
    assert repo.delete_ref("refs/heads/side", None) and repo.read_ref("refs/heads/side") is None
