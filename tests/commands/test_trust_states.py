"""`allow`, `trust` and `check` tell the same story in every state of the commands: none set, set and never
approved, approved, changed since approved, denied."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.builders import make_repo
from tests.support.cli import balanced

SETTINGS = ".magnum/settings.toml"


def _none(repo: Path) -> None:
    (repo / SETTINGS).write_text("[balanced]\nagent = \"shell\"\n")


def _unknown(repo: Path) -> None:
    (repo / SETTINGS).write_text("[worktree]\ncheck = \"true\"\n")


def _allowed(repo: Path) -> None:
    _unknown(repo)
    assert balanced(repo, "allow", "--yes").code == 0


def _changed(repo: Path) -> None:
    _allowed(repo)
    (repo / SETTINGS).write_text("[worktree]\ncheck = \"true && true\"\n")


def _denied(repo: Path) -> None:
    _unknown(repo)
    assert balanced(repo, "deny").code == 0


# state: (how to get there, what trust says, allow's exit and words, check's exit and words)
STATES = {
    "none": (_none, "nothing to approve", (0, "nothing to approve"), (1, "There is no check command")),
    "unknown": (_unknown, "not approved yet", (1, "not approved yet and need your approval"),
                (1, "not approved yet")),
    "allowed": (_allowed, "are allowed.", (0, "Allowed already"), (0, "Check passed")),
    "changed": (_changed, "changed since you approved them", (1, "changed since you approved them and need"),
                (1, "changed since you approved them")),
    "denied": (_denied, "denied", (1, "denied and need your approval"), (1, "You refused")),
}


@pytest.mark.parametrize("state", sorted(STATES))
def test_allow_trust_and_check_agree(tmp_path: Path, state: str) -> None:
    get_there, trust_says, (allow_code, allow_says), (check_code, check_says) = STATES[state]
    repo = make_repo(tmp_path / "r", {SETTINGS: "\n"})
    get_there(repo)
    r = balanced(repo, "trust", "--json")
    assert r.code == 0 and json.loads(r.out)["state"] == state, r
    r = balanced(repo, "trust")
    assert r.code == 0 and trust_says in r.out, r
    r = balanced(repo, "check")
    assert r.code == check_code and check_says in r.out + r.err, r
    r = balanced(repo, "allow")  # no terminal, no --yes: it says, never approves by itself
    assert r.code == allow_code and allow_says in r.out + r.err, r
    assert json.loads(balanced(repo, "trust", "--json").out)["state"] == state, "asking changed nothing"


def test_the_hint_of_no_check_works_on_the_existing_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {SETTINGS: "\n"})
    _none(repo)
    r = balanced(repo, "check")
    assert "`git balanced init --check 'pytest -q'`" in r.err, r
    assert balanced(repo, "init", "--hooks", "git", "--check", "pytest -q").code == 0
    assert json.loads(balanced(repo, "trust", "--json").out)["state"] == "unknown"
    assert (repo / SETTINGS).read_text().startswith('[balanced]\nagent = "shell"\n'), "the rest kept"
