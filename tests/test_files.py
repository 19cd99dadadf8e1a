"""Files written whole: a reader in another process never sees half of one, a failed write leaves the old
file, and permissions are the umask's or the ones asked for."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from git_balanced.files import Flock, json_objects, write_atomic, write_json
from git_balanced.git import Repo
from git_balanced.state import cache, refs
from tests.support.builders import make_repo

READER = """
import json, sys
from pathlib import Path
path, stop = Path(sys.argv[1]), Path(sys.argv[2])
reads = torn = 0
print("ready", flush=True)
while True:
    done = stop.exists()
    try:
        json.loads(path.read_text())
    except ValueError:
        torn += 1
    reads += 1
    if done:
        break
print(reads, torn)
"""


def test_a_reader_never_sees_half_a_file(tmp_path: Path) -> None:
    path, stop = tmp_path / "state.json", tmp_path / "stop"
    write_json(path, {"n": -1})
    reader = subprocess.Popen([sys.executable, "-c", READER, str(path), str(stop)], stdout=subprocess.PIPE,
                              text=True)
    assert reader.stdout is not None and reader.stdout.readline() == "ready\n"
    for n in range(200):  # large enough that one write takes many syscalls
        write_json(path, {"n": n, "pad": "x" * (100_000 + n * 1000)})
    stop.touch()
    out, _ = reader.communicate(timeout=60)
    reads, torn = map(int, out.split())
    assert reads > 0 and torn == 0, f"{torn} of {reads} reads saw a half-written file"
    assert json.loads(path.read_text())["n"] == 199
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json", "stop"], "no temporary file is left"


def test_a_failed_write_leaves_the_old_file_and_no_temporary_one(tmp_path: Path) -> None:
    path = tmp_path / "cursor"
    write_atomic(path, "old\n")
    with pytest.raises(UnicodeEncodeError):
        write_atomic(path, "new \ud800\n")  # a lone surrogate cannot be written as UTF-8
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["cursor"]


def test_the_mode_is_the_umasks_unless_asked(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("x")
    write_atomic(tmp_path / "ours", "x")
    assert stat.S_IMODE(os.stat(tmp_path / "ours").st_mode) == stat.S_IMODE(os.stat(tmp_path / "plain").st_mode)
    write_atomic(tmp_path / "script", "#!/bin/sh\n", mode=0o750)
    assert stat.S_IMODE(os.stat(tmp_path / "script").st_mode) == 0o750


def test_the_state_cache_of_a_real_repository_is_written_whole(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "r"))
    refs.append(repo, "refs/balanced/jobs/a", "placed", "a placed", {"piece": "p"}, state="queued")
    assert cache.read_all(repo, "jobs")["a"]["fields"] == {"piece": "p"}
    files = sorted(p.name for p in repo.state_dir.rglob("*") if p.is_file())
    assert files and not [f for f in files if f.endswith(".tmp")], files
    assert all(json.loads(p.read_text()) is not None for p in repo.state_dir.rglob("*.json")), "every file whole"


def test_json_objects_pass_over_what_is_not_an_object() -> None:
    text = 'warning: noise\n{"a": 1}\n  {"b": 2}  \n[1, 2]\n{"broken": \n\n{"c": {"d": 3}}\n'
    assert json_objects(text) == [{"a": 1}, {"b": 2}, {"c": {"d": 3}}]


def test_a_flock_has_one_holder_and_a_dead_holder_holds_nothing(tmp_path: Path) -> None:
    import threading

    path = tmp_path / "x.lock"
    one, two = Flock(path), Flock(path)
    assert one.take(wait=False) and one.held
    assert not two.take(wait=False) and not two.held, "another holder (a thread, here) waits its turn"
    got = threading.Event()
    waiter = threading.Thread(target=lambda: (two.take(), got.set()))
    waiter.start()
    assert not got.wait(0.2), "a waiting take waits"
    one.release()
    assert got.wait(5), "and takes it once it is let go"
    waiter.join()
    two.release()
    killed = subprocess.Popen([sys.executable, "-c", "import sys, time; from git_balanced.files import Flock; "
                               f"Flock({str(path)!r}).take(); print(flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)
    assert killed.stdout is not None and killed.stdout.readline() == "\n"
    assert not one.take(wait=False), "held by the other process"
    killed.kill()
    killed.wait()
    assert one.take(wait=False), "a killed holder holds nothing"
    one.release()
    assert path.exists(), "the file stays: a lock never removed cannot be taken twice by two makers"
