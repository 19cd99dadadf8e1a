"""What a lead attaches to a row under Now, through the real tool (`git balanced mcp --call put_to_you`): files
of the working tree that git does not ignore, or of a folder `[balanced] attach_from` names; never a key in
the home folder, through a symlink or `..`, nor git's own folder, nor a file past the size bound."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from git_balanced.channel import now
from git_balanced.channel.attachments import MOST_BYTES
from git_balanced.lead import open_lead
from tests.support.builders import commit, git, make_repo
from tests.support.cli import Ran, balanced

SETTINGS = '[worktree]\ncheck = "true"\n[balanced]\nagent = "shell"\n'


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A lead on main, its check approved, `.env` and `out/` ignored."""
    repo = make_repo(tmp_path / "lead", {"README.md": "sample\n", ".magnum/settings.toml": SETTINGS,
                                          ".gitignore": ".env\nout/\n"})
    assert balanced(repo, "allow", "--yes").code == 0
    return repo


def put(repo: Path, *files: str) -> Ran:
    """The put_to_you tool called as a lead without MCP calls it."""
    return balanced(repo, "mcp", "--call", "put_to_you",
                    json.dumps({"summary": "Added the export", "attachments": list(files)}))


def refused(ran: Ran) -> str:
    assert ran.code == 1, ran
    assert "Traceback" not in ran.err and ran.out == ""
    return ran.err


def a_key() -> Path:
    key = Path.home() / ".ssh" / "id_ed25519"
    key.parent.mkdir(exist_ok=True)
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n")
    return key


def test_a_file_of_the_working_tree_is_attached_and_read_back(repo: Path) -> None:
    (repo / "docs").mkdir()
    (repo / "docs" / "shot.png").write_bytes(b"\x89PNG fake")
    ran = put(repo, "docs/shot.png")
    assert ran.code == 0, ran.err
    row = json.loads(ran.out)
    assert [a["name"] for a in row["attachments"]] == ["shot.png"]
    assert now.attachment(open_lead(str(repo)), row["id"], "shot.png") == b"\x89PNG fake"


def test_a_key_in_the_home_folder_is_refused_with_where_attachments_may_come_from(repo: Path) -> None:
    key = a_key()
    err = refused(put(repo, str(key)))
    assert f"error: The attachment {key} is not in a place attachments come from: the repository's working " \
           f"tree {os.path.realpath(repo)} (files git does not ignore, outside .git) or a folder " \
           "`[balanced] attach_from` names (none yet)." in err, err
    assert "hint: attach a file from there, or name its folder in `[balanced] attach_from`" in err
    assert not now.rows(open_lead(str(repo))), "no row was stored"
    assert "secret" not in git(repo, "cat-file", "--batch-all-objects", "--batch-check")


def test_a_symlink_or_dots_out_of_the_tree_are_judged_where_they_lead(repo: Path) -> None:
    key = a_key()
    (repo / "shot.png").symlink_to(key)
    err = refused(put(repo, "shot.png"))
    assert f"The attachment shot.png (that is {key}) is not in a place attachments come from" in err, err
    (repo / "docs").mkdir()
    err = refused(put(repo, f"docs/../../../{os.path.relpath(key, repo.parent.parent)}"))
    assert f"(that is {key}) is not in a place attachments come from" in err, err


def test_git_own_folder_and_ignored_files_are_refused(repo: Path) -> None:
    assert "The attachment .git/config is inside git's own folder; attachments come only from" \
        in refused(put(repo, ".git/config"))
    (repo / ".env").write_text("TOKEN=abc\n")
    assert "The attachment .env is a file git ignores" in refused(put(repo, ".env"))


def test_folders_attach_from_names_are_taken_relative_or_absolute(repo: Path, tmp_path: Path) -> None:
    shots = tmp_path / "shots"
    shots.mkdir()
    (shots / "a.png").write_bytes(b"A")
    (repo / "out").mkdir()
    (repo / "out" / "b.log").write_text("B\n")
    assert "is a file git ignores" in refused(put(repo, "out/b.log"))
    assert "is not in a place attachments come from" in refused(put(repo, str(shots / "a.png")))
    commit(repo, {".magnum/settings.toml": SETTINGS + f'attach_from = ["out", "{shots}"]\n'}, "Attach from")
    ran = put(repo, "out/b.log", str(shots / "a.png"))
    assert ran.code == 0, ran.err
    assert [a["name"] for a in json.loads(ran.out)["attachments"]] == ["b.log", "a.png"]
    (repo / ".env").write_text("TOKEN=abc\n")
    assert "folder `[balanced] attach_from` names (out, " + str(shots) + ")" in refused(put(repo, ".env"))


def test_a_file_past_the_bound_is_refused_with_its_size(repo: Path) -> None:
    big = repo / "big.log"
    with open(big, "wb") as fh:
        fh.truncate(MOST_BYTES + 1)
    err = refused(put(repo, "big.log"))
    assert f"error: The attachment big.log has {MOST_BYTES + 1} bytes; at most {MOST_BYTES} bytes fit a row" in err


def test_attach_from_of_the_wrong_type_names_the_key(repo: Path) -> None:
    commit(repo, {".magnum/settings.toml": SETTINGS + 'attach_from = "docs"\n'}, "Bad")
    (repo / "a.txt").write_text("a\n")
    err = refused(put(repo, "a.txt"))
    assert "`balanced.attach_from` is \"docs\" (a string), but it must be a list of folders" in err, err
