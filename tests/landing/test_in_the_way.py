"""The lead's own untracked or modified file blocks only the landing that would overwrite it: the other pieces
land, the board and the inbox name the file and the piece, and `engine --until-idle` returns, saying so."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.builders import git
from tests.support.cli import balanced
from tests.support.plans import board, engine, inbox_text, jobs_of, lead_repo, piece, plan


def _two_pieces(repo: Path) -> None:
    r = plan(repo, [piece("alpha", "echo from-alpha > src/a.txt && echo more >> src/base.txt"),
                    piece("beta", "echo from-beta > src/b.txt")], "--start")
    assert r.code == 0, r


@pytest.mark.parametrize("kind", ["untracked", "modified"])
def test_only_the_landing_that_would_overwrite_the_file_waits(tmp_path: Path, kind: str) -> None:
    repo = lead_repo(tmp_path)
    _two_pieces(repo)
    if kind == "untracked":
        mine, words = repo / "src" / "a.txt", "your untracked file src/a.txt"
    else:
        mine, words = repo / "src" / "base.txt", "your uncommitted change to src/base.txt"
    mine.write_text("mine, not committed\n")
    before = git(repo, "rev-parse", "main")

    r = engine(repo, "--until-idle", timeout=120)  # it returns: nothing else can move
    assert r.code == 1, r
    assert "alpha waits: " + words in r.err and "or with `git balanced land balanced/alpha`" in r.err, r.err
    assert mine.read_text() == "mine, not committed\n", "the lead's file is untouched"
    assert (repo / "src" / "b.txt").read_text() == "from-beta\n", "beta landed all the same"
    [alpha], [beta] = jobs_of(repo, "alpha"), jobs_of(repo, "beta")
    assert beta["state"] == "landed" and alpha["state"] == "finished", (alpha, beta)
    assert git(repo, "rev-list", "--count", f"{before}..main") == "2", "beta's merge only"
    data = board(repo)
    [now] = [r for r in data["now"] if r.get("piece") == "alpha"]  # type: ignore[union-attr, attr-defined]
    assert now["in_the_way"] == [str(mine.relative_to(repo))] and words in now["reason"], now
    shown = balanced(repo, "board").out
    assert f"alpha: {words} is in the way" in shown, shown
    text = inbox_text(repo)
    assert f"balanced/alpha waits: {words} is in the way" in text
    assert text.count("balanced/alpha waits:") == 1, "said once, not on every pass"

    # The same again: still in the way, still said once, still exit 1.
    assert engine(repo, "--until-idle").code == 1
    assert inbox_text(repo).count("balanced/alpha waits:") == 1

    # Out of the way, it lands; nothing waits any more.
    if kind == "untracked":
        mine.unlink()
    else:
        git(repo, "checkout", "--", "src/base.txt")
    r = engine(repo, "--until-idle")
    assert r.code == 0, r
    assert [j["state"] for j in jobs_of(repo, "alpha")] == ["landed"]
    assert (repo / "src" / "a.txt").read_text() == "from-alpha\n"
    assert (repo / "src" / "base.txt").read_text() == "ok\nmore\n"
    assert git(repo, "status", "--porcelain") == "", "the checkout matches the lead's branch"


def test_a_file_where_a_folder_would_land_is_in_the_way(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    r = plan(repo, [piece("tree", "mkdir -p src/new && echo x > src/new/file.txt")], "--start")
    assert r.code == 0, r
    (repo / "src" / "new").write_text("a file of mine\n")
    r = engine(repo, "--until-idle")
    assert r.code == 1 and "your untracked file src/new" in r.err, r
    assert (repo / "src" / "new").read_text() == "a file of mine\n"


def test_until_idle_says_which_pieces_failed_and_exits_1(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path, extra="attempts = 1\n")
    r = plan(repo, [piece("good", "echo g > src/g.txt"), piece("bad", "exit 7"),
                    piece("later", "echo l > src/l.txt", after=["bad"])], "--start")
    assert r.code == 0, r
    r = engine(repo, "--until-idle")
    assert r.code == 1, r
    assert "bad failed: " in r.err and "later never started: it comes after bad" in r.err, r.err
    assert "good" not in r.err.replace("`git balanced", ""), "a landed piece is not named"
    # A later run that sees only new, landing work ends 0: the old plan is done and not counted again.
    assert plan(repo, [piece("next", "echo n > src/n.txt")], "--start").code == 0
    r = engine(repo, "--until-idle")
    assert r.code == 0, r


def test_with_no_check_a_finished_piece_waits_for_land_and_until_idle_returns(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path, check=None)
    assert plan(repo, [piece("solo", "echo s > src/s.txt")], "--start").code == 0
    r = engine(repo, "--until-idle")
    assert r.code == 1 and "solo waits: it waits for `git balanced land" in r.err, r
    assert balanced(repo, "land", "balanced/solo").code == 0
