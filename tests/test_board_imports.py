"""`board` and `inbox` read in full (something changed since their kept answer) without importing what they do not
use: not `typing`, nor `json` (its files are read and written by json's C parts, files.py), nor `threading`, nor
`hashlib` and `zlib` (git/objects.py imports them to write an object), nor `contextlib`. Each read runs as the
console script starts it, in a fresh interpreter, with a variable of the GIT_ family no run had (what the kept
answer's stamp names), so it is the full read that is looked at."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from itertools import count
from pathlib import Path

import pytest

from tests.support.plans import lead_repo, piece, plan
from tests.test_files_json import read_alike

READS = [["board"], ["board", "--json"], ["board", "--all"], ["inbox"], ["inbox", "--json"]]
NOT_IMPORTED = ("typing", "json", "threading", "hashlib", "zlib", "contextlib")
CHANGE = "GIT_BALANCED_TEST_LOOK"  # a variable of the family the kept answer's stamp names: set anew, a change
LOOKS = count()
SCRIPT = ("import io, sys\nfrom git_balanced import front\nout, sys.stdout = sys.stdout, io.StringIO()\n"
          "code = front.main(sys.argv[1:])\nprinted, sys.stdout = sys.stdout.getvalue(), out\n"
          "found = sorted(sys.modules)\nimport json\nprint(json.dumps([code, printed, found]))\n")
# ^ json is imported to say what was found, after the read


@pytest.fixture(scope="module")
def lead(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A lead with a plan stored and not started, and a line in its inbox."""
    from git_balanced.channel import inbox
    from git_balanced.git import Repo

    repo = lead_repo(tmp_path_factory.mktemp("board-imports"))
    assert plan(repo, [piece("later", "echo l > l.txt")], task="Waits to start").code == 0
    inbox.post(Repo.discover(repo), "main", "The plan waits to start: é ✓", kind="note")
    # The refs' folders as they are a few seconds on: a listing of a folder changed within the last second is not
    # kept (state/listed.py), and every read would list, and fold, again
    settled = time.time() - 5
    for folder, _, _ in os.walk(repo / ".git" / "refs"):
        os.utime(folder, (settled, settled))
    for args in READS:  # the caches made (a cold one folds every chain, as it must): the claim is of warm ones
        read(repo, args)
    return repo


def read(lead: Path, args: list[str]) -> tuple[int, str, list[str]]:
    """`git balanced ARGS` read in full in a fresh interpreter: its exit code, what it printed, its modules."""
    env = {**os.environ, CHANGE: f"{os.getpid()}-{next(LOOKS)}", "GIT_BALANCED_NO_FENCE": "1"}
    # ^ the fence's probe (which starts processes) is not what is looked at: the board says the fence is off
    cp = subprocess.run([sys.executable, "-c", SCRIPT, *args], cwd=lead, env=env, capture_output=True, text=True,
                        timeout=60)
    assert cp.returncode == 0, cp.stderr
    code, printed, modules = json.loads(cp.stdout)
    return code, printed, modules


def test_the_state_files_read_as_json_reads_them(lead: Path) -> None:
    """What the reads read (the caches, the lists, the inbox's, the kept answers' stamps, the fence's answer):
    files.loads gives json.loads' answer for each file of the lead's `.git/balanced/`."""
    found = sorted(p for p in (lead / ".git" / "balanced").rglob("*") if p.is_file())
    assert any(p.name.endswith(".json") for p in found), found
    read_alike(found)


@pytest.mark.parametrize("args", READS, ids=" ".join)
def test_the_full_read_imports_none_of_them(lead: Path, args: list[str]) -> None:
    code, printed, modules = read(lead, args)
    assert code == 0 and printed.strip()
    assert f"git_balanced.commands.{args[0]}" in modules, "the read was the full one, not the answer kept"
    assert [m for m in NOT_IMPORTED if m in modules] == [], f"`git balanced {' '.join(args)}` imports them again"
