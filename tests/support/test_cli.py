"""`git balanced` in-process answers as the real process does, and leaves nothing behind for the next call."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from git_balanced import process
from git_balanced.machines.reach.routes import Reach
from git_balanced.state import cache
from tests.support.builders import make_repo
from tests.support.cli import balanced, balanced_process


def test_in_process_and_a_real_process_say_the_same(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {".magnum/settings.toml": '[worktree]\ncheck = "true"\n'})
    for args in (["trust", "--json"], ["board", "--json"], ["check", "nope"], ["no-such-command"]):
        here, there = balanced(repo, *args), balanced_process(repo, *args)
        assert (here.code, here.out, here.err) == (there.code, there.out, there.err), args


def test_a_call_leaves_the_folder_streams_and_environment_as_they_were(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    before = (os.getcwd(), sys.stdin, sys.stdout, sys.stderr, dict(os.environ))
    ran = balanced(repo, "board", env={"GIT_BALANCED_JOB": "1m8k0000000000x", "HOME": None})
    assert ran.code == 0, ran
    failed = balanced(tmp_path, "board")
    assert failed.code == 1 and "not inside a git repository" in failed.err
    assert (os.getcwd(), sys.stdin, sys.stdout, sys.stderr, dict(os.environ)) == before


def test_stdin_is_the_text_given_or_empty(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {".magnum/settings.toml": '[balanced]\nagent = "shell"\n'})
    piece = {"id": "a", "task": "A", "agent": "shell", "run": "true"}
    told = balanced(repo, "plan", "-", input=json.dumps({"task": "T", "pieces": [piece]}))
    assert told.code == 0 and json.loads(balanced(repo, "plans", "--json").out)[0]["task"] == "T", told
    empty = balanced(repo, "plan", "-")
    assert empty.code == 1 and "Traceback" not in empty.err, "an empty stdin, not the terminal's"


def test_each_call_starts_without_the_memory_of_the_one_before(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    process.part(Reach).push_once(("alpha", "/copy", "0" * 40), lambda: None)
    assert balanced(repo, "board", "--json").code == 0
    assert process.part(Reach).pushed() == set(), "bases pushed by an earlier engine are not taken as pushed"
    assert not process.has(cache.Kept), "cache files are read afresh"
