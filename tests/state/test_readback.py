"""Event commits read back in the process that wrote or read them, and loose objects written without dulwich:
the same ids git gives, objects `git fsck --strict` takes, and a chain folded again after an append that reads
none of its objects from the store."""

from __future__ import annotations

import subprocess
from pathlib import Path

from git_balanced import process
from git_balanced.git import Repo
from git_balanced.state import refs
from git_balanced.state.events import MODE_FILE, MODE_TREE
from tests.support.builders import make_repo


def git(repo: Path, *args: str, input: bytes | None = None) -> str:
    return subprocess.run(["git", *args], cwd=repo, input=input, capture_output=True, check=True).stdout.decode()


def test_objects_written_here_have_gits_ids_and_pass_fsck(tmp_path: Path) -> None:
    path = make_repo(tmp_path / "r")
    repo = Repo.discover(path)
    blob = repo.write_blob(b"{\"event\": \"x\"}\n")
    assert blob == git(path, "hash-object", "--stdin", input=b"{\"event\": \"x\"}\n").strip()
    empty = git(path, "mktree", input=b"").strip()
    tree = repo.write_tree([("z.json", MODE_FILE, blob), ("attachments", MODE_TREE, empty),
                            ("attachments.txt", MODE_FILE, blob)])  # a folder sorts as if it ended in '/'
    listing = f"100644 blob {blob}\tattachments.txt\n040000 tree {empty}\tattachments\n100644 blob {blob}\tz.json\n"
    assert tree == git(path, "mktree", input=listing.encode()).strip()
    head = git(path, "rev-parse", "HEAD").strip()
    commit = repo.write_commit(tree, [head], "subject\n\nBalanced-Event: x\n", when=1_700_000_000.9)
    assert git(path, "cat-file", "-t", commit).strip() == "commit"
    assert f"parent {head}\n" in git(path, "cat-file", "commit", commit)
    assert repo.write_blob(b"{\"event\": \"x\"}\n") == blob, "an object already there is written again as itself"
    git(path, "update-ref", "refs/heads/kept", commit)
    git(path, "fsck", "--strict", "--no-dangling")
    loose = path / ".git" / "objects" / commit[:2] / commit[2:]
    assert oct(loose.stat().st_mode & 0o777) == "0o444", "read-only, as git leaves an object"
    assert not [p for p in loose.parent.iterdir() if p.name.startswith("tmp_obj_")]


def test_a_chain_read_after_an_append_reads_its_events_from_what_this_process_wrote(tmp_path: Path) -> None:
    path = make_repo(tmp_path / "r")
    repo = Repo.discover(path)
    ref = "refs/balanced/jobs/0000000000abcdef"
    for n in range(3):
        refs.append(repo, ref, "noted", f"note {n}", {"n": n})
    tip = repo.read_ref(ref)
    assert tip is not None
    written = refs.read_chain(repo, tip)
    process.forget()  # a new process: every event read from git
    again = Repo.discover(path)
    assert refs.read_chain(again, tip) == written
    assert [e.data["n"] for e in written] == [0, 1, 2] and [e.lamport for e in written] == [1, 2, 3]
    for sha in git(path, "rev-list", tip).split():  # gone from the disk: read back only from this process
        obj = path / ".git" / "objects" / sha[:2] / sha[2:]
        obj.chmod(0o644)
        obj.unlink()
    assert refs.read_chain(again, tip) == written, "what this process read once, it reads back"
    first = refs.read_chain(again, tip)[0]
    first.data["n"] = 99  # a reader that changes what it got changes nobody else's
    assert refs.read_chain(again, tip)[0].data["n"] == 0
    process.forget()


def test_the_narrator_says_an_event_this_process_wrote_as_its_commit_says_it(tmp_path: Path) -> None:
    from git_balanced.engine.narrate import _event_of

    path = make_repo(tmp_path / "r")
    repo = Repo.discover(path)
    ref = "refs/balanced/jobs/0000000000abcdef"
    refs.append(repo, ref, "noted", "  a   note\tof two words ", {"n": 1}, state="queued")
    refs.append(repo, ref, "ended", "the end", {"n": 2})
    tip = repo.read_ref(ref)
    assert tip is not None
    kept = _event_of(repo, tip)
    process.forget()
    read = _event_of(Repo.discover(path), tip)
    assert kept == read and kept is not None and kept.subject == "the end" and kept.parents
    process.forget()
    first = _event_of(Repo.discover(path), kept.parents[0])
    assert first is not None and (first.subject, first.state, first.lamport) == ("a note of two words", "queued", 1)
