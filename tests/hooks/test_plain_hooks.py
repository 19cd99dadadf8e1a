"""The plain git hooks of hooks/, installed by `init --hooks git` (in .git/hooks, or where core.hooksPath
says), guarding real `git merge` and `git push` as the pre-commit route does; a hook of the user's is kept."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from git_balanced.bundled import HOOK_SCRIPTS, hook_script
from git_balanced.hooks.plain import MARK
from tests.support.builders import commit, git, make_remote, make_repo
from tests.support.cli import balanced
from tests.support.landing import branch, branches, check_runs, landed_subjects, project

ROOT = Path(__file__).resolve().parents[2]


def hooks_folder(repo: Path, hooks_path: str | None) -> Path:
    return repo / hooks_path if hooks_path else repo / ".git" / "hooks"


def plain_project(tmp_path: Path, hooks_path: str | None) -> Path:
    """A project with a check, its hooks installed by `init --hooks git`, all committed and approved."""
    repo = project(tmp_path)
    if hooks_path:
        git(repo, "config", "core.hooksPath", hooks_path)
    r = balanced(repo, "init", "--hooks", "git")
    where = ".git/hooks" if hooks_path is None else f"{hooks_path} (core.hooksPath)"
    assert r.code == 0 and f"Installed the pre-merge-commit and pre-push hooks in {where}." in r.out, r
    for name in HOOK_SCRIPTS:
        script = hooks_folder(repo, hooks_path) / name
        assert os.access(script, os.X_OK), f"{script} is executable"
        assert script.read_text() == (ROOT / "hooks" / name).read_text(), "the script of hooks/, as it is"
    assert not (repo / ".pre-commit-config.yaml").exists(), "pre-commit is left out of it"
    if hooks_path:  # hooks kept in the repository are committed with it, as a team shares them
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "balanced hooks")
    assert git(repo, "status", "--porcelain") == ""
    return repo


def run(repo: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=env)


ROUTES = pytest.mark.parametrize("hooks_path", [None, ".githooks"], ids=["git-dir", "core.hooksPath"])


@ROUTES
def test_a_hand_merge_must_pass_the_check(tmp_path: Path, sealed: Path, hooks_path: str | None) -> None:
    repo = plain_project(tmp_path, hooks_path)
    branches(repo, 2, bad={2})
    runs = check_runs(sealed)
    cp = run(repo, "merge", "--no-ff", "-m", "merge f1 by hand", "f1")
    said = cp.stdout + cp.stderr
    assert cp.returncode == 0 and "Check passed" in said, said
    assert landed_subjects(repo)[0] == "merge f1 by hand"
    assert check_runs(sealed) == runs + 1, "the check ran on the merge's tree"

    git(repo, "reset", "-q", "--hard", "HEAD~1")
    cp = run(repo, "merge", "--no-ff", "-m", "merge f1 again", "f1")
    said = cp.stdout + cp.stderr
    assert cp.returncode == 0 and "This merge's tree passed" in said, said
    assert check_runs(sealed) == runs + 1, "a tree with a passing note goes through without a check"

    tip = git(repo, "rev-parse", "main")
    cp = run(repo, "merge", "--no-ff", "-m", "merge f2 by hand", "f2")
    said = cp.stdout + cp.stderr
    assert cp.returncode != 0 and "fails" in said and "merge --abort" in said, said
    assert git(repo, "rev-parse", "main") == tip, "the failing merge was not committed"
    git(repo, "merge", "--abort")


@ROUTES
def test_a_push_of_unchecked_lead_commits_is_refused(tmp_path: Path, hooks_path: str | None) -> None:
    repo = plain_project(tmp_path, hooks_path)
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    cp = run(repo, "push", "-q", "origin", "main")
    tip = git(repo, "rev-parse", "--short=7", "main")
    said = cp.stdout + cp.stderr
    assert cp.returncode != 0 and f"git balanced check {tip}" in said and "to origin" in said, said
    assert git(bare, "for-each-ref") == "", "nothing was pushed"

    assert balanced(repo, "check", "main").code == 0
    git(repo, "push", "-q", "origin", "main")
    assert git(bare, "rev-parse", "main") == git(repo, "rev-parse", "main")

    sneaky = commit(repo, {"src/new.txt": "new\n"}, "unchecked")
    git(repo, "push", "-q", "origin", "main:refs/heads/balanced/x")  # a worker branch is not gated
    assert git(bare, "rev-parse", "balanced/x") == sneaky
    cp = run(repo, "push", "-q", "origin", "main")
    assert cp.returncode != 0 and f"git balanced check {sneaky[:7]}" in cp.stderr, cp.stderr


def test_every_ref_of_one_push_is_gated(tmp_path: Path) -> None:
    """Run by git itself, the hook reads git's whole list of refs: a worker branch pushed first does not
    carry an unchecked lead's branch through (pre-commit passes on only one ref)."""
    repo = plain_project(tmp_path, None)
    assert balanced(repo, "check").code == 0
    bare = make_remote(tmp_path, repo)
    branch(repo, "balanced/notes", {"notes.txt": "n\n"})
    sneaky = commit(repo, {"src/sneaky.txt": "never checked\n"}, "sneaky")
    cp = run(repo, "push", "origin", "balanced/notes:balanced/try-out", "main")
    assert cp.returncode != 0 and f"git balanced check {sneaky[:7]}" in cp.stderr, cp.stderr
    assert git(bare, "rev-parse", "main") != sneaky


@ROUTES
def test_a_hook_of_the_users_is_kept(tmp_path: Path, hooks_path: str | None) -> None:
    repo = make_repo(tmp_path / "repo", {"package.json": "{}\n"})
    if hooks_path:
        git(repo, "config", "core.hooksPath", hooks_path)
    folder = hooks_folder(repo, hooks_path)
    folder.mkdir(parents=True)
    mine = folder / "pre-push"
    mine.write_text("#!/bin/sh\necho 'my own pre-push'\n")
    mine.chmod(0o755)
    r = balanced(repo, "init", "--hooks", "git")
    assert r.code == 1 and "Traceback" not in r.err, r
    assert f"error: {mine} is already there and is not git balanced's hook, so it was left as it is" in r.err
    assert f"hint: move it aside (`mv {mine} {mine}.mine`)" in r.err and "`git balanced hook pre-push`" in r.err
    assert mine.read_text() == "#!/bin/sh\necho 'my own pre-push'\n", "the user's hook is untouched"
    assert not (folder / "pre-merge-commit").exists(), "nothing installed while one hook is the user's"

    mine.rename(folder / "pre-push.mine")
    r = balanced(repo, "init", "--hooks", "git")
    assert r.code == 0 and "Installed the pre-merge-commit and pre-push hooks" in r.out, r
    assert (folder / "pre-push.mine").read_text().endswith("'my own pre-push'\n")


def test_pre_commits_hooks_get_their_own_hint(tmp_path: Path) -> None:
    repo = project(tmp_path)
    assert balanced(repo, "init").code == 0, "the pre-commit route first"
    r = balanced(repo, "init", "--hooks", "git")
    assert r.code == 1 and "are not git balanced's hooks" in r.err, r
    assert "those are pre-commit's" in r.err and "pre-commit uninstall -t pre-merge-commit -t pre-push" in r.err


def test_again_changes_nothing_and_an_older_copy_is_replaced(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    assert balanced(repo, "init", "--hooks", "git").code == 0
    hooks = repo / ".git" / "hooks"
    stamp = (hooks / "pre-push").stat().st_mtime_ns
    r = balanced(repo, "init", "--hooks", "git")
    assert r.code == 0 and ".git/hooks has the balanced hooks already." in r.out, r
    assert (hooks / "pre-push").stat().st_mtime_ns == stamp, "not even rewritten"
    (hooks / "pre-merge-commit").write_text(f"#!/bin/sh\n{MARK}\nexec git balanced hook pre-merge-commit\n")
    r = balanced(repo, "init", "--hooks", "git")
    assert r.code == 0 and "Installed the pre-merge-commit hook in .git/hooks." in r.out, r
    assert (hooks / "pre-merge-commit").read_text() == (ROOT / "hooks" / "pre-merge-commit").read_text()


def test_without_git_balanced_on_path_the_hook_refuses_and_says_why(tmp_path: Path) -> None:
    repo = plain_project(tmp_path, None)
    branches(repo, 1)
    git_dir = Path(subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True).stdout).parent
    env = dict(os.environ, PATH=f"{git_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    if subprocess.run(["sh", "-c", "command -v git-balanced"], env=env, capture_output=True).returncode == 0:
        pytest.skip("git-balanced is installed system-wide on this machine")
    tip = git(repo, "rev-parse", "main")
    cp = run(repo, "merge", "--no-ff", "-m", "merge f1", "f1", env=env)
    assert cp.returncode != 0 and "git-balanced is not on PATH" in cp.stderr, cp.stderr
    assert git(repo, "rev-parse", "main") == tip
    git(repo, "merge", "--abort")


def test_the_shipped_scripts_carry_the_mark() -> None:
    for name in HOOK_SCRIPTS:
        text = hook_script(name).read_text(encoding="utf-8")
        assert text.startswith("#!/bin/sh\n") and MARK in text, f"hooks/{name}: init knows it as its own"
        assert f'exec git balanced hook {name} "$@"' in text
        assert os.access(ROOT / "hooks" / name, os.X_OK), f"hooks/{name} is executable in the repository"


def test_an_older_pre_commit_script_known_by_its_template_hash_gets_the_same_hint(tmp_path: Path) -> None:
    repo = project(tmp_path)
    folder = repo / ".git" / "hooks"
    folder.mkdir(exist_ok=True)
    for name in ("pre-merge-commit", "pre-push"):  # the oldest templates carry their hash, not pre-commit's name
        (folder / name).write_text("#!/usr/bin/env python\n# ID: 138fd403232d2ddd5efb44317e38bf03\nimport sys\n")
    r = balanced(repo, "init", "--hooks", "git")
    assert r.code == 1 and "those are pre-commit's" in r.err, r
