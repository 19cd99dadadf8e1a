"""A repository's own pre-commit hooks keep their meaning once `init` installed the balanced ones: a hook
without `stages:` runs where it ran before (on commit only here), `sync` runs no code hook, and `ship` shows
a refusing hook's words."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.builders import commit, git, make_remote, make_repo
from tests.support.cli import balanced

SETTINGS = '[worktree]\ncheck = "! grep -rq BAD src"\n'
# The user's own config, as found in the wild: a stage-less local hook, and one of their own on pre-push.
OWN = """\
# our hooks
repos:
  - repo: local
    hooks:
      - id: stamp
        name: stamp every run
        entry: sh -c 'echo ran >> "$HOME/stamps"'
        language: system
        pass_filenames: false
        always_run: true
      - id: no-friday-push
        name: no pushing on fridays
        entry: sh -c 'echo "Pushing waits for Monday, ask the release team."; exit 1'
        language: system
        stages: [pre-push]
        pass_filenames: false
        always_run: true
"""


def stamps(home: Path) -> int:
    p = home / "stamps"
    return len(p.read_text().splitlines()) if p.exists() else 0


def own_hooks_repo(tmp_path: Path) -> tuple[Path, Path]:
    """A project using pre-commit for its own hooks, with an upstream, then `git balanced init` on top."""
    repo = make_repo(tmp_path / "lead", {"src/base.txt": "ok\n", ".magnum/settings.toml": SETTINGS,
                                         ".pre-commit-config.yaml": OWN})
    bare = make_remote(tmp_path, repo)
    git(repo, "branch", "--set-upstream-to=origin/main")
    pre_commit = str(Path(sys.executable).parent / "pre-commit")
    subprocess.run([pre_commit, "install"], cwd=repo, check=True, capture_output=True)
    r = balanced(repo, "init")
    assert r.code == 0, r
    text = (repo / ".pre-commit-config.yaml").read_text()
    assert text.startswith("# our hooks\n# Hooks without `stages:` run at these"), text
    assert "Your hook no-friday-push will run at pre-push from now on" in r.out, r.out
    assert balanced(repo, "allow", "--yes").code == 0
    return repo, bare


def test_a_stage_less_hook_runs_on_commit_only(tmp_path: Path, sealed: Path) -> None:
    repo, bare = own_hooks_repo(tmp_path)
    commit(repo, {".pre-commit-config.yaml": (repo / ".pre-commit-config.yaml").read_text()}, "balanced hooks")
    assert stamps(sealed) == 1, "the user's hook ran on the commit"
    git(repo, "switch", "-q", "-c", "topic", "main~1")
    commit(repo, {"src/topic.txt": "topic\n"}, "topic")
    git(repo, "switch", "-q", "main")
    assert stamps(sealed) == 2
    cp = subprocess.run(["git", "merge", "--no-ff", "-m", "merge topic by hand", "topic"], cwd=repo,
                        capture_output=True, text=True)
    said = cp.stdout + cp.stderr
    assert cp.returncode == 0, said
    assert "check a merge into the lead's branch" in said, "the balanced hook ran on the merge"
    assert "stamp every run" not in said and stamps(sealed) == 2, "the user's commit hook did not"
    assert balanced(repo, "check").code == 0
    r = balanced(repo, "sync")
    assert r.code == 0, r
    assert stamps(sealed) == 2, "sync's push ran none of the repository's hooks"
    assert git(bare, "for-each-ref", "--format=%(refname)", "refs/notes/"), "the state reached the remote"


def test_ship_shows_the_pre_push_hooks_own_words(tmp_path: Path, sealed: Path) -> None:
    repo, bare = own_hooks_repo(tmp_path)
    commit(repo, {".pre-commit-config.yaml": (repo / ".pre-commit-config.yaml").read_text(),
                  "src/more.txt": "more\n"}, "more")
    assert balanced(repo, "check").code == 0
    before = git(bare, "rev-parse", "main")
    r = balanced(repo, "ship", "--yes")
    assert r.code == 1 and "The push to origin failed; nothing was shipped" in r.err, r
    assert "Pushing waits for Monday, ask the release team." in r.err, r.err
    assert "no pushing on fridays" in r.err and "error: failed to push" in r.err, r.err
    assert git(bare, "rev-parse", "main") == before, "nothing was pushed"
