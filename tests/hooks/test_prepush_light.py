"""`hook pre-push` started light (hooks/prepush.py, git/catfile.py): it answers only where the door's pre_push
(git_hooks.py) lets the push go without a word, reads the notes as state/notes.py reads them, and leaves every
refusal and every odd case to the door."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from git_balanced.errors import SettingsError
from git_balanced.git import Repo
from git_balanced.git.catfile import child_env, of_ours
from git_balanced.hooks import git_hooks, prepush
from git_balanced.landing.checks import CheckResult
from git_balanced.proc import no_git_env
from git_balanced.state import notes
from git_balanced.untrusted import folder_of_ours
from tests.support.builders import commit, git, make_repo
from tests.support.cli import Ran, _as_a_process

CHECK = "sh check.sh"
SETTINGS = {".magnum/settings.toml": f'[worktree]\ncheck = "{CHECK}"\n', "check.sh": "exit 0\n"}
ZERO = "0" * 40
NOT_LIGHT = ("pydantic", "dulwich", "subprocess", "json", "re", "typing", "git_balanced.settings",
             "git_balanced.landing", "git_balanced.state", "git_balanced.git.core")


def line(sha: str, ref: str = "refs/heads/main") -> str:
    return f"{ref} {sha} {ref} {ZERO}\n"


def light(repo: Path, stdin: str | None, env: dict[str, str | None] | None = None) -> int | None:
    with _as_a_process(repo, stdin, env or {}):
        return prepush.pre_push(stdin)


def door(repo: Path, stdin: str | None, env: dict[str, str | None] | None = None) -> Ran:
    with _as_a_process(repo, stdin, env or {}) as (out, err):
        code = git_hooks.pre_push(Repo.discover(repo), ["origin"], stdin)
    return Ran(code, out.getvalue(), err.getvalue())


def checked(repo: Path, tree: str, passed: bool, at: float | None = None, **odd: object) -> None:
    """A check record on `tree`, written as the landing writes one."""
    done = CheckResult(tree, CHECK, passed, 0 if passed else 1, 1.0, "", at or time.time())
    notes.add_json(Repo.discover(repo), notes.CHECKS, tree, {**done.record(), **odd})


def forget_notes(repo: Path) -> None:
    for ref in (notes.CHECKS, notes.LANDINGS):
        subprocess.run(["git", "update-ref", "-d", ref], cwd=repo, check=True)


@pytest.fixture(scope="module")
def lead(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("prepush") / "lead", SETTINGS)


def test_it_lets_go_what_the_door_lets_go_and_leaves_the_rest_to_it(lead: Path) -> None:
    tip = git(lead, "rev-parse", "HEAD")
    tree = git(lead, "rev-parse", "HEAD^{tree}")
    landed = commit(lead, {"src/a.txt": "a\n"}, "landed")
    # (what is recorded, what is pushed, whether the push goes)
    cases = [
        ("a passing check on the tip's tree", lambda: checked(lead, tree, True), line(tip), True),
        ("a newer failing check", lambda: (checked(lead, tree, True, 100.0), checked(lead, tree, False, 200.0)),
         line(tip), False),
        ("a newer passing check", lambda: (checked(lead, tree, False, 100.0), checked(lead, tree, True, 200.0)),
         line(tip), True),
        ("no note", lambda: None, line(tip), False),
        ("a landing note that passed", lambda: notes.add_json(
            Repo.discover(lead), notes.LANDINGS, landed, {"result": "pass", "check": CHECK}), line(landed), True),
        ("a landing note of another check", lambda: notes.add_json(
            Repo.discover(lead), notes.LANDINGS, landed, {"result": "pass", "check": "make"}), line(landed), False),
        ("a note git wrote (no fan-out)", lambda: git(
            lead, "notes", "--ref", notes.CHECKS, "add", "-m",
            json.dumps(CheckResult(tree, CHECK, True, 0, 1.0, "", 5.0).record()), tree), line(tip), True),
        ("junk lines around a record", lambda: git(
            lead, "notes", "--ref", notes.CHECKS, "add", "-m", "not json\n{\"command_hash\": 1}\n" +
            json.dumps(CheckResult(tree, CHECK, True, 0, 1.0, "", 5.0).record()) + "\n[1]", tree), line(tip), True),
        ("a record the door cannot read", lambda: checked(lead, tree, True, code="x"), line(tip), None),
        ("a worker's branch", lambda: None, line(landed, "refs/heads/balanced/x"), True),
        ("a deleted branch", lambda: None, f"refs/heads/main {ZERO} refs/heads/main {tip}\n", True),
        ("two branches, one unchecked", lambda: checked(lead, tree, True), line(tip) + line(landed, "refs/heads/b"),
         False),
        ("nothing pushed", lambda: None, "", True),
    ]
    for said, record, stdin, goes in cases:
        forget_notes(lead)
        record()
        fast = light(lead, stdin)
        if goes is None:
            assert fast is None, said
            with pytest.raises(ValueError):
                door(lead, stdin)
            continue
        slow = door(lead, stdin)
        assert slow.code == (0 if goes else 1), (said, slow)
        assert fast == (0 if goes else None), (said, fast)
        assert goes or "Refusing to push" in slow.err, (said, slow)


def test_pre_commits_variables_and_settings_without_a_check(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "lead", SETTINGS)
    tip, tree = git(repo, "rev-parse", "HEAD"), git(repo, "rev-parse", "HEAD^{tree}")
    checked(repo, tree, True)
    named = {"PRE_COMMIT_LOCAL_BRANCH": "main", "PRE_COMMIT_TO_REF": tip, "PRE_COMMIT_REMOTE_BRANCH": "refs/heads/main"}
    assert light(repo, None, named) == 0 and door(repo, None, named) == Ran(0, "", "")
    assert light(repo, None, {**named, "PRE_COMMIT_TO_REF": None}) is None, "a branch, not a commit: git names it"
    unchecked = commit(repo, {".magnum/settings.toml": "[worktree]\n"}, "no check")
    assert light(repo, line(unchecked)) == 0 and door(repo, line(unchecked)) == Ran(0, "", "")
    gone = commit(repo, {".magnum/settings.toml": None}, "no settings")
    assert light(repo, line(gone)) == 0 and door(repo, line(gone)) == Ran(0, "", "")
    bad = commit(repo, {".magnum/settings.toml": "[worktree]\ncheck = 3\n"}, "bad settings")
    assert light(repo, line(bad)) is None, "settings the model refuses are the door's to refuse"
    with pytest.raises(SettingsError, match="check"):
        door(repo, line(bad))


def test_a_push_after_the_first_reads_no_model_and_starts_no_door(lead: Path) -> None:
    """In a fresh interpreter, as git runs it: the settings are checked by their model on the first push and
    kept by their blob; the next push imports none of the model, dulwich, subprocess, json or re."""
    forget_notes(lead)
    tip, tree = git(lead, "rev-parse", "HEAD"), git(lead, "rev-parse", "HEAD^{tree}")
    checked(lead, tree, True)
    (lead / ".git" / "balanced" / "cache" / "settings" / prepush.CHECKED_FILE).unlink(missing_ok=True)
    probe = ("import sys\nfrom git_balanced.front import main\ncode = main()\n"
             f"sys.stderr.write(repr([m for m in sys.modules if m in {NOT_LIGHT!r} or "
             f"m.startswith({tuple(n + '.' for n in NOT_LIGHT)!r})]))\nsys.exit(code)\n")
    said = []
    for _ in range(2):
        cp = subprocess.run([sys.executable, "-c", probe, "hook", "pre-push", "origin"], cwd=lead, input=line(tip),
                            capture_output=True, text=True, timeout=60)
        assert cp.returncode == 0 and cp.stdout == "", cp
        said.append(ast.literal_eval(cp.stderr))
    assert "git_balanced.settings" in said[0], "the first push checks the settings by their model"
    assert said[1] == [], f"the second imported {said[1]}"
    kept = json.loads((lead / ".git" / "balanced" / "cache" / "settings" / prepush.CHECKED_FILE).read_text())
    blob = git(lead, "rev-parse", "HEAD:.magnum/settings.toml")
    assert kept["blobs"][blob]["check"] == CHECK


def test_its_git_gets_the_environment_the_door_gives_git_and_keeps_off_folders_of_ours(tmp_path: Path) -> None:
    environ = {"PATH": "/bin", "GIT_DIR": ".git", "GIT_INDEX_FILE": "x", "GIT_AUTHOR_NAME": "a", "HOME": "/h",
               "GIT_CONFIG_GLOBAL": "/g", "GIT_WORK_TREE": "/w", "GIT_SSH_COMMAND": "ssh"}
    assert child_env(environ) == no_git_env(environ)
    home = Path.home()
    for where in (home / ".balanced", home / ".balanced" / "copies" / "x", home / ".balancedx", tmp_path, home):
        assert of_ours(str(where)) == folder_of_ours(str(where)), where
    worker = make_repo(home / ".balanced" / "copies" / "w", SETTINGS)
    assert light(worker, line(git(worker, "rev-parse", "HEAD"))) is None, "a worker's copy: the door's to read"
