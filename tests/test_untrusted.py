"""The door to git in folders a worker could have written (untrusted.py, git.run_git, the runner's `_git`): for each
thing git would run from such a repository, planted as a worker would plant it, the same git command runs it in
a folder of the lead's own (so the plant is real) and runs nothing of it under `~/.balanced/`."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from git_balanced import untrusted
from git_balanced.git import run_git
from git_balanced.shipped import runfiles, runner
from tests.support.builders import commit, git, make_repo

Plant = Callable[[Path, Path], list[str]]  # (repository, marker) -> the git command that would run the plant


def script(path: Path, marker: Path, body: str = "") -> str:
    """An executable that leaves `marker` behind, then does `body` (or nothing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho ran >> '{marker}'\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def hook(repo: Path, marker: Path) -> list[str]:
    script(repo / ".git" / "hooks" / "post-checkout", marker)
    return ["checkout", "-q", "--detach", "--force", "HEAD"]


def hooks_path(repo: Path, marker: Path) -> list[str]:
    script(repo / "planted" / "post-checkout", marker)
    git(repo, "config", "core.hooksPath", str(repo / "planted"))
    return ["checkout", "-q", "--detach", "--force", "HEAD"]


def fsmonitor(repo: Path, marker: Path) -> list[str]:
    git(repo, "config", "core.fsmonitor", script(repo.parent / "fsmon", marker, "exit 1"))
    return ["status", "--porcelain"]


def included_fsmonitor(repo: Path, marker: Path) -> list[str]:
    inc = repo.parent / "included"
    inc.write_text(f"[core]\n\tfsmonitor = {script(repo.parent / 'fsmon2', marker, 'exit 1')}\n")
    git(repo, "config", "include.path", str(inc))
    return ["status", "--porcelain"]


def clean_filter(repo: Path, marker: Path) -> list[str]:
    git(repo, "config", "filter.evil.clean", script(repo.parent / "clean", marker, "cat"))
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("* filter=evil\n")
    (repo / "src" / "base.txt").write_text("changed\n")
    return ["add", "-A"]


def smudge_filter(repo: Path, marker: Path) -> list[str]:
    git(repo, "config", "filter.evil.smudge", script(repo.parent / "smudge", marker, "cat"))
    commit(repo, {".gitattributes": "* filter=evil\n", "src/other.txt": "x\n"}, "attributes")
    (repo / "src" / "other.txt").unlink()
    return ["checkout", "-q", "--force", "HEAD", "--", "."]


def process_filter(repo: Path, marker: Path) -> list[str]:
    commit(repo, {".gitattributes": "* filter=evil\n"}, "attributes")
    git(repo, "config", "filter.evil.process", script(repo.parent / "process", marker, "exit 1"))
    (repo / "src" / "base.txt").write_text("changed\n")
    return ["add", "-A"]


def textconv(repo: Path, marker: Path) -> list[str]:
    git(repo, "config", "diff.evil.textconv", script(repo.parent / "textconv", marker, 'cat "$1"'))
    commit(repo, {".gitattributes": "*.txt diff=evil\n", "src/base.txt": "two\n"}, "two")
    return ["diff", "HEAD~1", "HEAD"]


def external_diff(repo: Path, marker: Path) -> list[str]:
    git(repo, "config", "diff.external", script(repo.parent / "extdiff", marker))
    commit(repo, {"src/base.txt": "two\n"}, "two")
    return ["diff", "HEAD~1", "HEAD"]


def merge_driver(repo: Path, marker: Path) -> list[str]:
    git(repo, "config", "merge.evil.driver", script(repo.parent / "mergedrv", marker, "exit 1") + " %A %B")
    commit(repo, {".gitattributes": "*.txt merge=evil\n"}, "attributes")
    git(repo, "checkout", "-q", "-b", "side")
    commit(repo, {"src/base.txt": "side\n"}, "side")
    git(repo, "checkout", "-q", "main")
    commit(repo, {"src/base.txt": "main\n"}, "main")
    return ["merge", "-q", "--no-edit", "side"]


def ssh_command(repo: Path, marker: Path) -> list[str]:
    git(repo, "config", "core.sshCommand", script(repo.parent / "sshcmd", marker, "exit 1"))
    return ["fetch", "-q", "ssh://example.invalid/x.git"]


def pre_commit_hook(repo: Path, marker: Path) -> list[str]:
    script(repo / ".git" / "hooks" / "pre-commit", marker)
    (repo / "src" / "base.txt").write_text("changed\n")
    git(repo, "add", "-A")
    return ["commit", "-q", "-m", "a commit of ours"]


def reference_transaction(repo: Path, marker: Path) -> list[str]:
    script(repo / ".git" / "hooks" / "reference-transaction", marker)
    return ["update-ref", "refs/balanced/bases/x", "HEAD"]


def bom_config(repo: Path, marker: Path) -> list[str]:
    """A config that starts with a UTF-8 byte order mark, which git skips."""
    config = repo / ".git" / "config"
    body = f'[filter "evil"]\n\tclean = {script(repo.parent / "bomclean", marker, "cat")}\n'
    config.write_bytes(b"\xef\xbb\xbf" + body.encode() + config.read_bytes())
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("* filter=evil\n")
    (repo / "src" / "base.txt").write_text("changed\n")
    return ["add", "-A"]


def carriage_return_section(repo: Path, marker: Path) -> list[str]:
    """A section after a carriage return, which git reads as a space before it."""
    config = repo / ".git" / "config"
    body = f'\n\r[filter "evil"]\n\tclean = {script(repo.parent / "crclean", marker, "cat")}\n'
    config.write_bytes(config.read_bytes() + body.encode())
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("* filter=evil\n")
    (repo / "src" / "base.txt").write_text("changed\n")
    return ["add", "-A"]


def emptied_dot_git(repo: Path, marker: Path) -> list[str]:
    """`.git` replaced with an empty folder: git passes it by and uses the repository further up."""
    outer = repo.parent
    git(outer, "init", "-q", "-b", "main")
    git(outer, "config", "filter.evil.clean", script(outer / "upclean", marker, "cat"))
    (outer / ".git" / "info").mkdir(exist_ok=True)
    (outer / ".git" / "info" / "attributes").write_text("* filter=evil\n")
    shutil.rmtree(repo / ".git")
    (repo / ".git").mkdir()
    return ["add", "-A"]


def gitfile_second_line(repo: Path, marker: Path) -> list[str]:
    """A `.git` file naming a folder whose name holds a newline, beside a plain repository named as its first
    line: git reads the whole name."""
    evil = repo.parent / "g\nx"
    (repo / ".git").rename(evil)
    git(repo.parent, "init", "-q", "--bare", "g")
    git(evil, "config", "filter.evil.clean", script(repo.parent / "nlclean", marker, "cat"))
    (evil / "info").mkdir(exist_ok=True)
    (evil / "info" / "attributes").write_text("* filter=evil\n")
    (repo / ".git").write_bytes(b"gitdir: ../g\nx\n")
    (repo / "src" / "base.txt").write_text("changed\n")
    return ["add", "-A"]


def promisor_remote(repo: Path, marker: Path) -> list[str]:
    """The repository made a partial clone whose "promisor" remote names the upload-pack command: reading an
    object it lacks would fetch it from there, running that command."""
    for key, value in (("core.repositoryformatversion", "1"), ("extensions.partialclone", "origin"),
                       ("remote.origin.url", str(repo)), ("remote.origin.promisor", "true"),
                       ("remote.origin.uploadpack", f"{script(repo.parent / 'upload', marker)}; git-upload-pack")):
        git(repo, "config", key, value)
    return ["cat-file", "-p", "1234567890abcdef1234567890abcdef12345678"]


ROUTES: dict[str, Plant] = {f.__name__: f for f in (
    hook, hooks_path, fsmonitor, included_fsmonitor, clean_filter, smudge_filter, process_filter, textconv,
    external_diff, merge_driver, ssh_command, pre_commit_hook, reference_transaction, bom_config,
    carriage_return_section, emptied_dot_git, gitfile_second_line, promisor_remote)}


def planted(where: Path, route: Plant) -> tuple[Path, Path, list[str]]:
    repo = make_repo(where / "repo", {"src/base.txt": "ok\n"})
    marker = where / "marker"
    args = route(repo, marker)
    return repo, marker, args


@pytest.mark.parametrize("name", list(ROUTES))
def test_git_of_ours_runs_nothing_a_worker_planted_in_its_repository(name: str, tmp_path: Path) -> None:
    route = ROUTES[name]
    repo, marker, args = planted(tmp_path / "lead", route)
    run_git(args, cwd=repo)
    assert marker.exists(), f"the plant ({name}) runs in a repository of the lead's own: the test is real"

    home = Path(os.environ["HOME"]) / ".balanced" / "copies"
    repo, marker, args = planted(home / name, route)
    run_git(args, cwd=repo)
    assert not marker.exists(), f"git balanced's `git {' '.join(args)}` ran what a worker planted ({name})"


@pytest.mark.parametrize("name", list(ROUTES))
def test_the_runners_git_runs_nothing_a_worker_planted(name: str, tmp_path: Path) -> None:
    home = Path(os.environ["HOME"]) / ".balanced" / "copies"
    repo, marker, args = planted(home / name, ROUTES[name])
    runfiles._git(args, str(repo))
    assert not marker.exists(), f"the runner's `git {' '.join(args)}` ran what a worker planted ({name})"


def test_a_worktree_config_cannot_send_our_writes_elsewhere(tmp_path: Path) -> None:
    """`core.worktree` in a worktree's own config would point `git clean` of ours at another folder."""
    elsewhere = make_repo(tmp_path / "person", {"keep.txt": "mine\n"})
    (elsewhere / "untracked.txt").write_text("not committed, not to be cleaned\n")
    copy = make_repo(Path(os.environ["HOME"]) / ".balanced" / "copies" / "c", {"a.txt": "a\n"})
    git(copy, "config", "extensions.worktreeConfig", "true")
    git(copy, "config", "--worktree", "core.worktree", str(elsewhere))
    assert git(copy, "rev-parse", "--show-toplevel") == str(elsewhere), "the plant redirects plain git"
    run_git(["clean", "-ffdq"], cwd=copy)
    assert (elsewhere / "untracked.txt").exists(), "git balanced's clean followed the copy's core.worktree"


def test_only_folders_under_the_balanced_home_are_untrusted(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    assert untrusted.folder_of_ours(str(home / ".balanced" / "copies" / "x"))
    assert untrusted.folder_of_ours(str(home / ".balanced"))
    assert not untrusted.folder_of_ours(str(home / ".balanced-not"))
    assert not untrusted.folder_of_ours(str(tmp_path))
    link = tmp_path / "link"
    (home / ".balanced" / "worktrees").mkdir(parents=True, exist_ok=True)
    link.symlink_to(home / ".balanced" / "worktrees")
    assert untrusted.folder_of_ours(str(link)), "a link into the balanced home is judged by where it leads"


def test_the_runner_carries_the_rules_to_other_machines() -> None:
    """Sent as one script, the runner defines the door's functions itself (no git balanced there)."""
    space: dict[str, object] = {"__name__": "shipped"}
    exec(compile(runner.source(), "runner", "exec"), space)  # noqa: S102 - our own shipped source
    assert callable(space["safe_argv"]) and space["OVERRIDES"] == untrusted.OVERRIDES
    built = space["safe_argv"](["status"], "/", lambda a, c: (0, b""))  # type: ignore[operator]
    assert "core.hooksPath=/dev/null" in built and built[-1] == "status"


def test_drivers_of_the_users_own_config_stay(tmp_path: Path) -> None:
    """A driver the user's global config defines (git-lfs's) is the user's own program, and keeps working."""
    listing = b"global\0filter.lfs.smudge\ngit-lfs smudge -- %f\0local\0filter.evil.clean\nevil\0" \
              b"worktree\0diff.x.textconv\nx\0local\0merge.m.driver\nm\0"
    got = untrusted.driver_overrides(listing)
    assert "filter.evil.clean=" in got and "diff.x.textconv=" in got and "merge.m.driver=" in got
    assert not any(x.startswith("filter.lfs") for x in got), got
    assert shutil.which("git")


def test_a_config_that_defines_no_driver_is_not_listed_and_one_that_may_is(tmp_path: Path) -> None:
    """A folder whose config names no filter, diff or merge section and includes nothing costs no listing (a git
    process); once it names a driver, directly or in a file it includes, the driver is listed and emptied."""
    repo = make_repo(Path(os.environ["HOME"]) / ".balanced" / "copies" / "kept", {"src/base.txt": "ok\n"})
    calls: list[list[str]] = []

    def listing(argv: list[str], cwd: str) -> tuple[int, bytes]:
        calls.append(argv)
        return untrusted.safe_listing(argv, cwd, untrusted.safe_env(os.environ))

    untrusted.safe_argv(["status"], str(repo), listing)
    assert calls == [], "a plain config is read in-process"
    marker = tmp_path / "marker"
    git(repo, "config", "filter.late.clean", script(tmp_path / "late", marker, "cat"))
    assert "filter.late.clean=" in untrusted.safe_argv(["status"], str(repo), listing)
    git(repo, "config", "--unset", "filter.late.clean")
    inc = repo.parent / "included"
    inc.write_text(f"[filter \"inc\"]\n\tsmudge = {script(tmp_path / 'inc', marker, 'cat')}\n")
    git(repo, "config", "include.path", str(inc))
    assert "filter.inc.smudge=" in untrusted.safe_argv(["status"], str(repo), listing)
    assert len(calls) == 2


def test_the_safe_environment_names_no_other_repositorys_objects(tmp_path: Path) -> None:
    """A runner's own environment could carry variables that point git at other objects (a hook's quarantine,
    a caller's alternates): under the door, git sees the folder's objects and nothing else."""
    from tests.support.builders import make_repo

    here, other = make_repo(tmp_path / "here"), make_repo(tmp_path / "other", {"only-there.txt": "x\n"})
    theirs = git(other, "rev-parse", "HEAD")
    planted = {**os.environ, "GIT_OBJECT_DIRECTORY": str(other / ".git" / "objects"),
               "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(other / ".git" / "objects"), "GIT_NAMESPACE": "x"}
    seen = subprocess.run(["git", "cat-file", "-e", theirs], cwd=here, env=planted, capture_output=True)
    assert seen.returncode == 0, "the variables do reach another repository's objects when passed on"
    safe = subprocess.run(["git", "cat-file", "-e", theirs], cwd=here, env=untrusted.safe_env(planted),
                          capture_output=True)
    assert safe.returncode != 0, "not through the door"
