"""A full disk during a landing, on a real small file system (a tmpfs mounted for the test): one message, exit
1, the lead's checkout, index and branch exactly as before, no temporary files left in .git/objects; and the
landing goes through once there is room."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.builders import git, make_repo
from tests.support.cli import balanced
from tests.support.plans import engine, jobs_of, piece, plan
from tests.support.wait import wait_until

SIZE = 24 << 20


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 24 MiB tmpfs of its own, unmounted on the way out."""
    where = tmp_path / "disk"
    where.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    cp = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE}", "tmpfs", str(where)], capture_output=True,
                        text=True)
    if cp.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {cp.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path, leave: int) -> Path:
    """Fill `disk` until `leave` bytes are free; the filler is returned, to be removed."""
    st = os.statvfs(disk)
    free = st.f_bavail * st.f_frsize
    filler = disk / "filler"
    with open(filler, "wb") as fh:
        fh.write(b"\0" * max(0, free - leave))
    return filler


def snapshot(repo: Path) -> dict[str, str]:
    """Every file of the checkout and the index, by content; HEAD and the branch."""
    seen = {}
    for root, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files + [d for d in dirs if not os.listdir(os.path.join(root, d))]:
            p = Path(root, name)
            rel = str(p.relative_to(repo))
            seen[rel] = hashlib.sha1(p.read_bytes()).hexdigest() if p.is_file() else "folder"
            seen[rel] += oct(p.lstat().st_mode)
    seen[".git/index"] = hashlib.sha1((repo / ".git" / "index").read_bytes()).hexdigest()
    seen["main"] = git(repo, "rev-parse", "main")
    return seen


def debris(repo: Path) -> list[Path]:
    objects = repo / ".git" / "objects"
    return sorted([*objects.glob("??/tmp_obj_*"), *objects.glob("??/*.lock"), *(repo / ".git").glob("*.lock")])


def lead_on(disk: Path, check: str = "test -d src") -> Path:
    settings = f"[worktree]\ncheck = {json.dumps(check)}\n[balanced]\nagent = \"shell\"\n"
    repo = make_repo(disk / "lead", {"src/base.txt": "ok\n", ".magnum/settings.toml": settings})
    assert balanced(repo, "allow", "--yes").code == 0
    return repo


def big_branch(repo: Path, name: str = "big", extra: dict[str, str] | None = None) -> None:
    """A branch that changes src/base.txt and adds 2 MiB (base64 of random bytes, so it packs to no less)."""
    git(repo, "switch", "-q", "-c", name)
    (repo / "src" / "base.txt").write_text("changed\n")
    (repo / "src" / "big.bin").write_bytes(__import__("base64").b64encode(os.urandom(3 << 19)))
    for path, text in (extra or {}).items():
        (repo / path).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", f"{name}: a big file")
    git(repo, "switch", "-q", "main")


def test_a_landing_that_does_not_fit_is_refused_before_anything_moves(small_disk: Path) -> None:
    repo = lead_on(small_disk)
    big_branch(repo)
    (repo / "notes.txt").write_text("mine, not committed\n")  # the person's own file, which a landing carries
    before = snapshot(repo)
    filler = fill(small_disk, 300 << 10)

    r = balanced(repo, "land", "big")
    assert r.code == 1, r
    assert "Traceback" not in r.err and r.err.startswith("error: The disk holding "), r.err
    assert f"mounted at {small_disk}" in r.err and "is full" in r.err and "nothing was left half-written" in r.err
    assert "hint: make room there" in r.err, r.err
    assert snapshot(repo) == before, "the checkout, the index and main are as they were"
    assert debris(repo) == [], "no temporary object files or locks are left"

    filler.unlink()
    r = balanced(repo, "land", "big")
    assert r.code == 0, r
    assert (repo / "src" / "base.txt").read_text() == "changed\n" and (repo / "src" / "big.bin").exists()
    assert (repo / "notes.txt").read_text() == "mine, not committed\n"
    assert git(repo, "status", "--porcelain") == "?? notes.txt"


def test_a_disk_that_fills_while_git_writes_is_rolled_back(small_disk: Path) -> None:
    """The estimate cannot see a smudge filter (Git LFS's, here one that adds 3 MiB): git runs out of room
    halfway through the files. What it wrote is taken back; the index is the old one."""
    repo = lead_on(small_disk)
    git(repo, "config", "filter.grow.smudge", "cat; head -c 3145728 /dev/zero")
    git(repo, "config", "filter.grow.clean", "tr -d '\\000'")
    big_branch(repo, extra={".gitattributes": "src/big.bin filter=grow\n", "src/zz.txt": "last\n"})
    before = snapshot(repo)
    filler = fill(small_disk, (2 << 20) + (1 << 20) + (512 << 10))  # the estimate fits; the grown file does not

    r = balanced(repo, "land", "big")
    assert r.code == 1, r
    assert "Traceback" not in r.err and "is full" in r.err and "nothing was left half-written" in r.err, r.err
    assert snapshot(repo) == before, "every file git wrote is taken back, the index and main are as they were"
    assert not (repo / "src" / "big.bin").exists() and not (repo / ".gitattributes").exists()
    assert git(repo, "status", "--porcelain") == ""
    assert debris(repo) == []

    filler.unlink()
    r = balanced(repo, "land", "big")
    assert r.code == 0, r
    assert (repo / "src" / "zz.txt").read_text() == "last\n"
    assert git(repo, "status", "--porcelain") == ""


def test_the_engine_says_it_once_and_lands_once_there_is_room(small_disk: Path) -> None:
    """The disk fills while the check runs (the check itself fills it): mid-landing, after the worker's branch
    came back. The engine does not die; once there is room, its next pass lands (the check is not run again)."""
    filler = small_disk / "filler"
    script = small_disk.parent / "fill.py"
    script.write_text("import os\n"
                      f"st = os.statvfs({str(small_disk)!r})\n"
                      f"open({str(filler)!r}, 'wb').write(bytes(st.f_bavail * st.f_frsize - (600 << 10)))\n")
    fill_it = f"python3 {script}"
    repo = lead_on(small_disk, check=f"test -d src && {fill_it}")
    blob = "$(head -c 1572864 /dev/urandom | base64 -w0)"
    assert plan(repo, [piece("big", f"echo {blob} > src/big.txt")], "--start").code == 0
    before = snapshot(repo)

    r = engine(repo, "--until-idle", timeout=120)
    assert r.code == 1, r
    assert filler.exists(), "the check filled the disk"
    assert "Traceback" not in r.err and "is full" in r.err, r.err
    assert snapshot(repo) == before
    assert debris(repo) == []
    assert jobs_of(repo, "big")[0]["state"] == "finished"

    filler.unlink()
    r = engine(repo, "--until-idle", timeout=120)
    assert r.code == 0, r
    assert not filler.exists(), "the check was not run again: its result is on record"
    assert jobs_of(repo, "big")[0]["state"] == "landed"
    assert (repo / "src" / "big.txt").stat().st_size > 2 << 20


def test_the_engine_waits_for_room_rather_than_dying(small_disk: Path, tmp_path: Path) -> None:
    """Full before the worker's branch comes back: the pass itself cannot write. `--until-idle` cannot wait for
    the person to make room: it says so once and ends, exit 1. A running engine says so once and tries again,
    and lands once there is room."""
    repo = lead_on(small_disk)
    blob = "$(head -c 1572864 /dev/urandom | base64 -w0)"
    assert plan(repo, [piece("big", f"echo {blob} > src/big.txt")], "--start").code == 0
    filler = fill(small_disk, 600 << 10)
    r = engine(repo, "--until-idle", timeout=120)
    assert r.code == 1, r
    assert "Traceback" not in r.err and (r.err + r.out).count("is full") == 1, r

    log = tmp_path / "engine.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "git_balanced.cli", "engine"], cwd=repo,
                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        wait_until(lambda: "is full" in log.read_text(), 60, "the engine to say the disk is full",
                   said=log.read_text)
        assert proc.poll() is None, "it goes on: " + log.read_text()
        filler.unlink()
        wait_until(lambda: jobs_of(repo, "big")[0]["state"] == "landed", 90, "the piece to land",
                   said=log.read_text)
        assert engine(repo, "--stop", timeout=60).code == 0
        assert proc.wait(timeout=60) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
    said = log.read_text()
    assert "Traceback" not in said and said.count("is full") == 1, said
    left = [(p, round(time.time() - p.stat().st_mtime, 2), p.stat().st_size) for p in debris(repo)]
    assert left == [], "no temporary object file is left (path, age, size)"


def test_any_command_on_a_full_disk_is_one_message_and_exit_1(small_disk: Path) -> None:
    repo = lead_on(small_disk)
    filler = fill(small_disk, 0)
    r = balanced(repo, "plan", "-", input=json.dumps({"task": "T", "pieces": [piece("p", "true")]}))
    assert r.code == 1, r
    assert "Traceback" not in r.err and "is full" in r.err and f"mounted at {small_disk}" in r.err, r.err
    assert "hint: make room there" in r.err
    filler.unlink()
    assert balanced(repo, "plan", "-", input=json.dumps({"task": "T", "pieces": [piece("p", "true")]})).code == 0


def test_the_mcp_plan_tool_on_a_full_disk_says_it_in_the_same_words(small_disk: Path) -> None:
    repo = lead_on(small_disk)
    filler = fill(small_disk, 0)
    doc = {"task": "T", "pieces": [piece("p", "true")]}
    r = balanced(repo, "mcp", "--call", "plan", json.dumps(doc))
    assert r.code == 1, r
    assert r.err.startswith("error: The disk holding ") and "is full" in r.err and "Errno" not in r.err, r.err
    filler.unlink()
