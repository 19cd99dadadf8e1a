"""`init` leaves alone when a repository's own pre-commit hooks run: the real pre-commit, a real commit, merge
and push, counted on the same repository set up without `init` and with it, for configs found in the wild
and hook types installed before `init` or after it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from pre_commit.clientlib import STAGES, load_config

from git_balanced.hooks import precommit
from tests.support.builders import git, make_remote, make_repo
from tests.support.cli import balanced


def hook(hook_id: str, stages: str = "") -> str:
    """A local hook that writes its id to $STAMPS each time it runs."""
    more = f"\n        stages: {stages}" if stages else ""
    return f"""\
      - id: {hook_id}
        name: {hook_id}
        entry: sh -c 'echo {hook_id} >> "$STAMPS"'
        language: system
        pass_filenames: false
        always_run: true{more}
"""


LOCAL = "repos:\n  - repo: local\n    hooks:\n"
CONFIGS = {
    "stage-less": "# our hooks\n" + LOCAL + hook("plain"),
    "own pre-push hook": LOCAL + hook("plain") + hook("pushy", "[pre-push]"),
    "default_stages": "default_stages: [pre-commit, pre-push]\n" + LOCAL + hook("plain"),
    "default_install_hook_types": "default_install_hook_types: [pre-commit, pre-push]\n" + LOCAL + hook("plain"),
    "flow style": ("{repos: [{repo: local, hooks: [{id: plain, name: plain, entry: 'sh -c \"echo plain >> "
                   "$STAMPS\"', language: system, pass_filenames: false, always_run: true}]}]}\n"),
    "old stage names": LOCAL + hook("plain") + hook("pushy", "[push]") + hook("early", "[commit]"),
}
# How the person set up pre-commit: not yet (they run `pre-commit install` after `init`), as the file says,
# or with the pre-push hook type too.
INSTALLS = {"later": None, "as the file says": [], "with pre-push": ["-t", "pre-commit", "-t", "pre-push"]}
# What runs after `init` and did not before: hooks whose own stages (or the file's own default_stages) name a
# hook type `init` installed first. `init` names each of them.
EXTRA = {
    ("own pre-push hook", "later"): {"push": ["pushy"]},
    ("own pre-push hook", "as the file says"): {"push": ["pushy"]},
    ("default_stages", "later"): {"push": ["plain"]},
    ("default_stages", "as the file says"): {"push": ["plain"]},
    ("old stage names", "later"): {"push": ["pushy"]},
    ("old stage names", "as the file says"): {"push": ["pushy"]},
}
PRE_COMMIT = str(Path(sys.executable).parent / "pre-commit")


def run(repo: Path, *args: str) -> None:
    env = {**os.environ, "STAMPS": str(repo / ".git" / "stamps"),
           "SKIP": ",".join(precommit.HOOK_IDS)}  # what the balanced hooks do is tested elsewhere
    cp = subprocess.run(args, cwd=repo, env=env, capture_output=True, text=True)
    assert cp.returncode == 0, f"{args}: {cp.stdout}{cp.stderr}"


def taken(repo: Path) -> list[str]:
    """The hook ids that ran since the last look."""
    stamps = repo / ".git" / "stamps"
    ran = stamps.read_text().split() if stamps.exists() else []
    stamps.unlink(missing_ok=True)
    return sorted(ran)


def what_runs(repo: Path) -> dict[str, list[str]]:
    """The repository's own hooks that run on a commit, on a merge and on a push."""
    out = {}
    (repo / "a.txt").write_text("a\n")
    run(repo, "git", "add", "a.txt")
    taken(repo)
    run(repo, "git", "commit", "-q", "-m", "a")
    out["commit"] = taken(repo)
    run(repo, "git", "switch", "-q", "-c", "side")
    (repo / "b.txt").write_text("b\n")
    run(repo, "git", "add", "b.txt")
    run(repo, "git", "commit", "-q", "--no-verify", "-m", "b")
    run(repo, "git", "switch", "-q", "main")
    taken(repo)
    run(repo, "git", "merge", "-q", "--no-ff", "-m", "merge side", "side")
    out["merge"] = taken(repo)
    run(repo, "git", "push", "-q", "origin", "main")
    out["push"] = taken(repo)
    return out


def project(root: Path, config: str) -> Path:
    repo = make_repo(root / "repo", {".pre-commit-config.yaml": config, "src/x.txt": "x\n"})
    make_remote(root, repo)
    return repo


@pytest.fixture(scope="module")
def runs_without_init(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, list[str]], dict[str, list[str]]]:
    """What runs in a repository set up without `init`, for a config and a `pre-commit install`: looked at once for
    each pair (installing "later" and "as the file says" are the same `pre-commit install` when there is no init)."""
    seen: dict[tuple[str, tuple[str, ...]], dict[str, list[str]]] = {}

    def before(name: str, how: list[str]) -> dict[str, list[str]]:
        key = (name, tuple(how))
        if key not in seen:
            without = project(tmp_path_factory.mktemp("without"), CONFIGS[name])
            run(without, PRE_COMMIT, "install", *how)
            seen[key] = what_runs(without)
        return seen[key]

    return before


@pytest.mark.parametrize("install", sorted(INSTALLS))
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_init_keeps_where_the_repositorys_own_hooks_run(tmp_path: Path, name: str, install: str,
                                                        runs_without_init: Callable[[str, list[str]],
                                                                                    dict[str, list[str]]]) -> None:
    config, how = CONFIGS[name], INSTALLS[install]
    before = runs_without_init(name, how or [])

    with_init = project(tmp_path / "with", config)
    if how is not None:
        run(with_init, PRE_COMMIT, "install", *how)
    r = balanced(with_init, "init", "--check", "true")
    assert r.code == 0, r
    if how is None:
        run(with_init, PRE_COMMIT, "install")
    assert load_config(str(with_init / ".pre-commit-config.yaml")), "pre-commit reads the edited file"
    git(with_init, "commit", "-q", "--no-verify", "-am", "balanced hooks")
    after = what_runs(with_init)

    extra = EXTRA.get((name, install), {})
    expected = {action: sorted(ran + extra.get(action, [])) for action, ran in before.items()}
    assert after == expected, f"before init: {before}"
    for hook_id in extra.get("push", []):
        assert f"Your hook {hook_id} will run at pre-push from now on" in r.out, r.out


def test_stage_less_hooks_keep_running_at_push_when_it_was_installed(tmp_path: Path) -> None:
    """The case that once silenced a person's hooks at push: `init` adds no `default_stages` then."""
    repo = project(tmp_path / "repo", CONFIGS["stage-less"])
    run(repo, PRE_COMMIT, "install", *INSTALLS["with pre-push"])
    run(repo, PRE_COMMIT, "install", "-t", "pre-merge-commit")
    assert balanced(repo, "init", "--check", "true").code == 0
    assert "default_stages" not in (repo / ".pre-commit-config.yaml").read_text()


def test_the_stages_known_are_pre_commits() -> None:
    assert precommit.STAGES == STAGES
