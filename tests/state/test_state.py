"""State in refs: event chains and their ids, and compare-and-swap under contention (fold, cache and sync have
their own files)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from git_balanced.git import Repo
from git_balanced.state import cache, notes, refs
from git_balanced.state.events import new_id
from tests.support.builders import commit, git, make_repo

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


def test_a_writer_that_loses_the_race_builds_again_on_the_new_tip(tmp_path: Path) -> None:
    path = make_repo(tmp_path / "r")
    repo = Repo.discover(path)
    ref = "refs/balanced/jobs/j1"
    first = refs.append(repo, ref, "placed", "j1 placed", state="queued").sha
    tree = git(path, "rev-parse", "HEAD^{tree}")
    seen: list[str | None] = []

    def build(tip: str | None) -> str:
        seen.append(tip)
        if len(seen) == 1:  # another writer moves the ref between this writer's read and its swap
            theirs = git(path, "commit-tree", tree, "-p", first, "-m", "theirs")
            git(path, "update-ref", ref, theirs, first)
        return git(path, "commit-tree", tree, *(["-p", tip] if tip else []), "-m", "mine")

    mine = refs.update_with_retry(repo, ref, build, "test")
    theirs = git(path, "rev-parse", f"{ref}^")
    assert seen == [first, theirs], "built once on the tip it read, once more on the tip that won"
    assert mine == git(path, "rev-parse", ref) and git(path, "log", "--format=%s", ref).splitlines() == \
        ["mine", "theirs", "j1 placed"], "nothing lost: one linear chain"
    assert refs.update_with_retry(repo, ref, lambda tip: None, "test") is None
    assert git(path, "rev-parse", ref) == mine, "a build that declines leaves the ref alone"

def test_eight_writers_to_one_note_lose_no_line(tmp_path: Path) -> None:
    path = make_repo(tmp_path / "r")
    head = git(path, "rev-parse", "HEAD")
    script = ("import sys\nfrom git_balanced.git import Repo\nfrom git_balanced.state import notes\n"
              "repo = Repo.discover(sys.argv[1])\nfor i in range(10):\n"
              "    notes.add_json(repo, notes.LANDINGS, sys.argv[2], {'writer': sys.argv[3], 'i': i})\n")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(path), head, str(w)]) for w in range(8)]
    assert all(p.wait(timeout=240) == 0 for p in procs), "every writer finished"
    got = notes.read_json(Repo.discover(path), notes.LANDINGS, head)
    assert sorted((r["writer"], r["i"]) for r in got) == [(str(w), i) for w in range(8) for i in range(10)]

def test_landing_notes_are_read_along_first_parents(tmp_path: Path) -> None:
    path = make_repo(tmp_path / "r")
    repo = Repo.discover(path)
    assert notes.landings(repo, "main") == [], "no notes ref yet: nothing landed"
    first = commit(path, {"a.txt": "a\n"}, "Land a")
    git(path, "switch", "-q", "-c", "side", "main~1")
    side = commit(path, {"s.txt": "s\n"}, "side work")
    git(path, "switch", "-q", "main")
    plain = commit(path, {"b.txt": "b\n"}, "by hand")
    git(path, "merge", "-q", "--no-ff", "-m", "Land side", "side")
    merge = git(path, "rev-parse", "HEAD")
    notes.add_json(repo, notes.LANDINGS, first, {"piece": "a", "attempt": 1})
    notes.add_line(repo, notes.LANDINGS, first, "not json: passed over")
    notes.add_json(repo, notes.LANDINGS, side, {"piece": "inner"})
    notes.add_json(repo, notes.LANDINGS, merge, {"piece": "side", "attempt": 2})
    got = notes.landings(repo, "main")
    assert [(x.commit, x.subject, x.records) for x in got] == [
        (merge, "Land side", [{"piece": "side", "attempt": 2}]), (first, "Land a", [{"piece": "a", "attempt": 1}])
    ], "newest first, only commits with notes, only the lead's own line of commits"
    assert [x.commit for x in notes.landings(repo, "main", oldest_first=True)] == [first, merge]
    assert [x.commit for x in notes.landings(repo, f"{first}..main")] == [merge]
    assert [x.commit for x in notes.landings(repo, "main", most=2)] == [merge], "two commits looked at"
    assert plain not in [x.commit for x in got]
