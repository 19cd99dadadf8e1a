"""State in refs: event chains and their ids, and compare-and-swap under contention (fold, cache and sync have
their own files)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from git_balanced.git import Repo
from git_balanced.state import cache, refs
from git_balanced.state.events import new_id
from tests.support.builders import git, make_repo

WRITER = """
import sys
from git_balanced.git import Repo
from git_balanced.state import refs
repo = Repo.discover(sys.argv[1])
who, shared = sys.argv[2], sys.argv[3] == "shared"
for i in range(50):
    ref = "refs/balanced/jobs/shared" if shared else f"refs/balanced/jobs/w{who}"
    refs.append(repo, ref, "note", f"writer {who} event {i}", {f"w{who}-{i}": i})
"""


def test_event_commit_reads_as_history(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "r"))
    job = new_id()
    ref = refs.ref_for("jobs", job)
    refs.append(repo, ref, "placed", "orders-api: placed on local", {"piece": "orders-api"}, state="queued")
    refs.append(repo, ref, "landed", "orders-api: landed in main as 1a2b3c4", {"landed": "1a2b3c4"},
                state="landed")
    log = git(repo.root, "log", "--format=%s|%(trailers:key=Balanced-State,valueonly)", ref)
    assert log.splitlines()[0] == "orders-api: landed in main as 1a2b3c4|landed", log
    raw = git(repo.root, "show", f"{ref}:event.json")
    assert json.loads(raw)["data"] == {"landed": "1a2b3c4"}
    state = cache.read_one(repo, "jobs", job)
    assert state and state["state"] == "landed" and state["fields"]["piece"] == "orders-api"
    assert git(repo.root, "status", "--porcelain") == "", "state never touches the working tree"


def test_ids_sort_by_time() -> None:
    import time

    a = new_id()
    time.sleep(0.002)
    b = new_id()
    assert a < b and len(a) == 15


def _writers(repo: Path, shared: bool) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(repo), str(i), "shared" if shared else "own"])
             for i in range(8)]
    assert all(p.wait(timeout=240) == 0 for p in procs), "every writer finished"


def test_eight_writers_to_eight_refs_lose_nothing(tmp_path: Path) -> None:
    path = make_repo(tmp_path / "r")
    _writers(path, shared=False)
    repo = Repo.discover(path)
    states = cache.read_all(repo, "jobs")
    assert len(states) == 8
    for i in range(8):
        assert len(states[f"w{i}"]["fields"]) == 50, f"writer {i} kept all 50 events"


def test_eight_writers_to_one_ref_lose_nothing(tmp_path: Path) -> None:
    path = make_repo(tmp_path / "r")
    _writers(path, shared=True)
    repo = Repo.discover(path)
    events = refs.events_of(repo, "refs/balanced/jobs/shared")
    assert len(events) == 400, "8 x 50 events, none lost to a race"
    assert git(path, "rev-list", "--count", "refs/balanced/jobs/shared") == "400", "one linear chain"
