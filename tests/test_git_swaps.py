"""The state's refs swapped as git swaps a loose ref (git/refs.write_loose), alone or in a batch with one fsync."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from git_balanced.git import Repo
from git_balanced.state import refs
from tests.support.builders import git, make_repo


def test_a_swap_is_a_compare_and_swap_git_reads(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    repo = Repo.discover(root)
    a = git(root, "rev-parse", "HEAD")
    b = git(root, "commit-tree", f"{a}^{{tree}}", "-p", a, "-m", "b")
    ref = "refs/balanced/jobs/one"
    assert repo.cas_ref(ref, a, None), "made where absent"
    assert not repo.cas_ref(ref, b, None), "not made again over a ref that is there"
    assert not repo.cas_ref(ref, b, "0" * 40), "not swapped from a value it does not hold"
    assert repo.cas_ref(ref, b, a, message="balanced: moved\nover two lines")
    assert git(root, "rev-parse", ref) == b
    assert git(root, "log", "-g", "--format=%H %gs", ref).splitlines() == [f"{b} balanced: moved over two lines",
                                                                          f"{a} git balanced"]
    git(root, "pack-refs", "--all", "--prune")
    assert not (root / ".git" / ref).exists()
    assert not repo.cas_ref(ref, a, a), "a packed ref is read under the lock too"
    assert repo.cas_ref(ref, a, b), "and swapped from its packed value"
    assert git(root, "rev-parse", ref) == a
    lock = root / ".git" / f"{ref}.lock"
    lock.write_text("")
    assert not repo.cas_ref(ref, b, a), "a fresh lock is another writer's: a lost race"
    lock.unlink()
    (root / ".git" / ref).write_text("ref: refs/heads/main\n")
    assert repo.cas_ref(ref, b, a), "a symbolic ref is left to dulwich, which swaps what it names"
    assert git(root, "rev-parse", "refs/heads/main") == b
    assert git(root, "fsck", "--no-dangling") == ""


CHILD = textwrap.dedent("""
    import sys
    from git_balanced.git import Repo
    from git_balanced.state import refs
    repo = Repo.discover(sys.argv[1])
    with repo.batch():
        for k in range(100000):
            refs.append(repo, f"refs/balanced/jobs/j{k % 8}", "noted", f"event {k}", {"k": k})
            if k == 20:
                print("going", flush=True)
""")


def test_a_kill_within_a_batch_leaves_every_chain_whole(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    with subprocess.Popen([sys.executable, "-c", CHILD, str(root)], env=env, stdout=subprocess.PIPE) as child:
        assert child.stdout and child.stdout.readline() == b"going\n"
        time.sleep(0.3)  # at whatever point of a swap it is then
        child.kill()
    repo = Repo.discover(root)
    chains = {ref: refs.events_of(repo, ref) for ref in repo.list_refs("refs/balanced/jobs/")}
    assert len(chains) == 8
    seen = sorted(e.data["k"] for events in chains.values() for e in events)
    assert len(seen) > 21 and seen == list(range(len(seen))), "every swap made before the kill is whole, in order"
    assert git(root, "fsck", "--no-dangling") == "", "no ref names a missing object"
    assert len(list((root / ".git" / "refs" / "balanced").rglob("*.lock"))) <= 1, "at most the lock of the swap cut"


def test_swaps_in_a_batch_are_seen_at_once(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    repo = Repo.discover(root)
    with repo.batch():
        ev = refs.append(repo, "refs/balanced/jobs/x", "noted", "first", {})
        assert git(root, "rev-parse", "refs/balanced/jobs/x") == ev.sha, "renamed into place, not held back"
        with repo.batch():
            refs.append(repo, "refs/balanced/jobs/x", "noted", "second", {})
        assert repo._unsynced, "an inner batch leaves the fsync to the outer one"
    assert repo._unsynced is None, "made durable at the end"
    assert [e.event for e in refs.events_of(repo, "refs/balanced/jobs/x")] == ["noted", "noted"]
