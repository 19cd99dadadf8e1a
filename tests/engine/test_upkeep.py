"""git's automatic maintenance never runs in a git command of ours; the engine packs refs and objects itself,
while idle, and says so."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from git_balanced.engine.upkeep import LOOSE_REFS, pack_if_loose
from git_balanced.files import Flock
from git_balanced.git import Repo, packing
from tests.support.builders import commit, git, make_repo
from tests.support.cli import balanced
from tests.support.plans import engine, lead_repo
from tests.support.wait import wait_until


def packs(repo: Path) -> list[str]:
    return sorted(p.name for p in (repo / ".git" / "objects" / "pack").glob("*.pack"))


def loose_everywhere(repo: Path) -> None:
    """Loose objects enough for `gc --auto` with gc.auto=1: it counts those in objects/17/ (more than one)."""
    lead = Repo.discover(repo)
    k = 0
    while len(list((repo / ".git" / "objects" / "17").glob("*"))) < 3:
        lead.write_blob(f"loose {k}\n".encode())
        k += 1


def test_a_lead_git_command_never_starts_an_automatic_gc(tmp_path: Path) -> None:
    lead = make_repo(tmp_path / "lead")
    git(lead, "config", "gc.auto", "1")
    git(lead, "config", "gc.autoDetach", "false")  # a gc would run inside the command, not after it
    loose_everywhere(lead)
    source = make_repo(tmp_path / "source")
    new = commit(source, {"more.txt": "one commit\n"}, "one more")
    twin = tmp_path / "twin"
    shutil.copytree(lead, twin)
    git(twin, "fetch", "-q", str(source), "main:refs/heads/fetched")
    assert packs(twin), "plain git, same config and objects: its fetch ran a gc, which packed them"
    before = packing.loose(Repo.discover(lead)).objects
    res = Repo.discover(lead).fetch(str(source), ["main:refs/heads/fetched"])
    assert res.ok, res
    assert git(lead, "rev-parse", "refs/heads/fetched") == new
    assert packs(lead) == [], "no gc ran inside our fetch: nothing was packed"
    assert packing.loose(Repo.discover(lead)).objects >= before, "every loose object is still loose"


def test_loose_refs_and_objects_are_packed_and_read_the_same(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    repo = Repo.discover(root)
    head = git(root, "rev-parse", "HEAD")
    git(root, "update-ref", "--stdin", input="".join(f"create refs/balanced/jobs/j{k:02d} {head}\n" for k in range(30)))
    for k in range(40):
        repo.write_blob(f"blob {k}\n".encode())
    listed = repo.list_refs("refs/balanced/")
    assert pack_if_loose(repo, refs=100, objects=100) is None, "under the limits nothing is packed"
    with Flock(repo.state_dir / "landing.lock"):
        assert pack_if_loose(repo, refs=10, objects=20) is None, "a landing holds the lock: not now"
    line = pack_if_loose(repo, refs=10, objects=20)
    said = "Packed while idle: 31 loose refs into packed-refs and 43 loose objects into a pack, in "
    assert line and line.startswith(said), line
    after = packing.loose(repo)
    assert (after.refs, after.objects, after.packs) == (0, 0, 1), after
    assert repo.list_refs("refs/balanced/") == listed, "every ref reads as before, from packed-refs"
    assert repo.cas_ref("refs/balanced/jobs/j00", head, head), "a packed ref is swapped as a loose one"


def test_the_idle_engine_packs_the_refs_and_says_so_in_its_log(tmp_path: Path) -> None:
    root = lead_repo(tmp_path)
    head = git(root, "rev-parse", "HEAD")
    git(root, "update-ref", "--stdin",
        input="".join(f"create refs/remotes/old/b{k:04d} {head}\n" for k in range(LOOSE_REFS + 1)))
    assert engine(root, "--until-idle").code == 0
    assert packing.loose(Repo.discover(root)).refs > LOOSE_REFS, "an engine that ends when idle leaves them"
    assert balanced(root, "engine", "--detach").code == 0
    try:
        log = root / ".git" / "balanced" / "engine.log"
        said = wait_until(lambda: "[balanced] Packed while idle: " in log.read_text(), 60, "the idle engine packed",
                          said=log.read_text)
        assert said and " loose refs into packed-refs, in " in log.read_text()
    finally:
        assert balanced(root, "engine", "--stop").code == 0
    assert packing.loose(Repo.discover(root)).refs < 10, "every loose ref was packed (but the engine's own since)"
    assert git(root, "rev-parse", "refs/remotes/old/b0000") == head


def test_a_packing_that_fails_on_another_writers_lock_leaves_that_lock_alone(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    repo = Repo.discover(root)
    lock = root / ".git" / "packed-refs.lock"
    lock.write_text("")  # another git writing packed-refs right now
    assert not packing.pack_refs(repo, 60.0), "git cannot pack while another writer holds packed-refs"
    assert lock.exists(), "and the writer's lock is still its own"


def test_what_a_packing_ended_at_its_timeout_left_is_removed(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    repo = Repo.discover(root)
    head = git(root, "rev-parse", "HEAD")
    lock = root / ".git" / "packed-refs.lock"
    lock.write_text("")
    os.utime(lock, (time.time() - 3600, time.time() - 3600))
    start = time.time()
    assert packing.left_behind(repo, start) == [], "a lock older than the packing is another writer's"
    lock.unlink()
    lock.write_text("")
    (root / ".git" / "objects" / "pack" / "tmp_pack_x").write_text("half a pack")
    (root / ".git" / "packed-refs.new").write_text("half of the new packed-refs")  # git refuses to write over it
    assert sorted(Path(p).name for p in packing.left_behind(repo, start)) == [
        "packed-refs.lock", "packed-refs.new", "tmp_pack_x"]
    git(root, "update-ref", "--stdin", input="".join(f"create refs/balanced/jobs/j{k:03d} {head}\n"
                                                     for k in range(300)))
    packing.pack_refs(repo, 0.001)  # ended at once, or done: either way nothing of it is in the way
    assert not lock.exists()
    # The lock of the one ref it was pruning when ended may be left (removed once stale, as any): that ref stays loose.
    assert packing.pack_refs(repo, 60.0) and packing.loose(repo).refs <= 1
