"""One dulwich object store per objects folder in a process (git/objects.py): every Repo and thread on a repository
reads through it, a pack's index is mapped once, and a missed object lists the pack folder only when it changed."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from git_balanced import process
from git_balanced.git import Repo
from git_balanced.landing.rounds import PerThread
from tests.support.builders import commit, git, make_repo


def _mapped(path: Path) -> int:
    """How many mappings of `path` this process holds."""
    real = os.path.realpath(path)
    with open("/proc/self/maps") as fh:
        return sum(1 for line in fh if line.rstrip("\n").endswith(" " + real))


def _packed_repo(tmp_path: Path) -> tuple[Path, list[str], Path]:
    root = make_repo(tmp_path / "r", {"a.txt": "a\n"})
    shas = [commit(root, {f"f{i}.txt": f"{i}\n"}) for i in range(5)]
    git(root, "gc", "-q")
    idx = next((root / ".git" / "objects" / "pack").glob("*.idx"))
    return root, shas, idx


def test_repos_and_threads_on_one_repository_read_through_one_store_and_map_its_pack_once(tmp_path: Path) -> None:
    root, shas, idx = _packed_repo(tmp_path)
    lead = Repo.discover(root)
    other = Repo.discover(root)
    git(root, "worktree", "add", "-q", "--detach", str(tmp_path / "wt"))
    linked = Repo.discover(tmp_path / "wt")
    assert lead.store is other.store is linked.store
    per = PerThread(lead)
    got: list[str] = []
    errors: list[BaseException] = []

    def read() -> None:
        try:
            for _ in range(50):
                for sha in shas:
                    got.append(per.get().store[sha.encode()].id.decode())
        except BaseException as exc:  # handed to the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=read) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and sorted(set(got)) == sorted(shas) and len(got) == 6 * 50 * len(shas)
    assert other.tree_of(shas[0]) == git(root, "rev-parse", f"{shas[0]}^{{tree}}")
    assert _mapped(idx) == 1
    process.forget()  # what a process ending does: the shared store closed, its pack unmapped
    assert _mapped(idx) == 0


def test_a_missed_object_lists_the_pack_folder_only_when_it_changed(tmp_path: Path) -> None:
    root, shas, _ = _packed_repo(tmp_path)
    repo = Repo.discover(root)
    objects = repo.store
    listings: list[int] = []
    listing = objects._list_packs

    def counted() -> list[object]:
        listings.append(1)
        return list(listing())

    objects._list_packs = counted  # type: ignore[method-assign]
    pack_dir = root / ".git" / "objects" / "pack"
    os.utime(pack_dir, (1_000_000_000, 1_000_000_000))  # settled: changed long ago
    assert repo.tree_of(shas[0])  # the first read lists the packs
    loose = repo.write_blob(b"written loose after the store opened\n")
    for _ in range(5):
        assert objects[loose.encode()].data == b"written loose after the store opened\n"
    assert len(listings) == 1  # a miss in the packs, found loose, without listing the folder again
    # git packs it (the loose file removed): the folder changed, so the miss lists it and finds the new pack
    git(root, "tag", "kept", loose)
    git(root, "repack", "-adq")
    git(root, "prune-packed")
    os.utime(pack_dir, (1_000_000_100, 1_000_000_100))
    assert not (root / ".git" / "objects" / loose[:2] / loose[2:]).exists()
    assert objects[loose.encode()].data == b"written loose after the store opened\n"
    assert len(listings) == 2
    # within SETTLED_SECONDS of a change, the folder is listed at each miss, its time notwithstanding
    os.utime(pack_dir)
    fresh = git(root, "hash-object", "-w", "--stdin", input="by git\n")
    objects[fresh.encode()]
    objects[fresh.encode()]
    assert len(listings) == 4


def test_packed_refs_are_parsed_once_a_process_and_a_packed_branch_or_notes_ref_is_swapped_as_git_would(
        tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    first = git(root, "rev-parse", "HEAD")
    second = commit(root, {"b.txt": "b\n"})
    git(root, "notes", "--ref=balanced", "add", "-m", "a note", first)
    notes = git(root, "rev-parse", "refs/notes/balanced")
    git(root, "pack-refs", "--all")  # the branch and the notes ref now only in packed-refs
    a, b = Repo.discover(root), Repo.discover(root)
    assert a._packed is b._packed
    assert a.read_ref("refs/heads/main") == second and a.read_ref("refs/notes/balanced") == notes
    assert a.read_ref("refs/heads/nothing") is None
    assert not a.cas_ref("refs/heads/main", first, first, message="balanced land")  # not what it holds: refused
    assert a.cas_ref("refs/heads/main", first, second, message="balanced land")
    assert git(root, "rev-parse", "refs/heads/main") == first == b.read_ref("refs/heads/main")
    assert git(root, "reflog", "-1", "--format=%gs", "refs/heads/main") == "balanced land"
    assert b.cas_ref("refs/notes/balanced", first, notes, message="balanced: notes")
    assert git(root, "rev-parse", "refs/notes/balanced") == first
    git(root, "fsck", "--no-dangling")
