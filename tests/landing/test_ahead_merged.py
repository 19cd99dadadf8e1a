"""The landing's own cost, cut: the chain a next round may need is merged while this round's checks run, a chain
checked ahead lands in the same move as the prefix before its culprit, and a move's landing notes are one notes
commit."""

from __future__ import annotations

from pathlib import Path

from git_balanced.git import Repo
from git_balanced.landing.bisect import Search
from git_balanced.landing.named import resolve
from git_balanced.landing.queue import Queue
from git_balanced.landing.speculate import later
from git_balanced.lead import Lead
from git_balanced.state import notes
from tests.support.builders import git, make_repo
from tests.support.landing import branches, landed_subjects, project


def test_later_names_the_first_chain_each_way_the_round_can_end() -> None:
    # 16 branches, 4 slots, round 1 checks prefixes 4, 8, 12, 16: if 4 is the first to fail, round 2 checks
    # ahead for culprit 1; if 8, for 5; and so on. The whole batch passing needs none.
    assert later(Search(16), [4, 8, 12, 16], 4) == [1, 5, 9, 13]
    # Round 2 on 5..8 checks ahead for 5 itself, and however it ends, the search ends: nothing more to merge.
    assert later(Search(16, {4: True, 8: False}), [5, 6, 7], 4) == []
    # 32 branches: whichever of 8, 16, 24 fails first, round 2 splits its 8 on all four slots: none is spare.
    assert later(Search(32), [8, 16, 24, 32], 4) == []
    assert later(Search(16), [16], 1) == [], "the serial queue merges nothing ahead"
    assert later(Search(16, {16: False}), [8], 1) == []


def test_a_moves_landing_notes_are_one_notes_commit(tmp_path: Path) -> None:
    path = make_repo(tmp_path / "r")
    repo = Repo.discover(str(path))
    one = git(path, "rev-parse", "HEAD")
    git(path, "commit", "-q", "--allow-empty", "-m", "two")
    two = git(path, "rev-parse", "HEAD")
    assert notes.add_json_many(repo, notes.LANDINGS, {}) is None, "nothing to add writes nothing"
    notes.add_json_many(repo, notes.LANDINGS, {one: {"branch": "a"}, two: {"branch": "b"}})
    notes.add_json_many(repo, notes.LANDINGS, {two: {"branch": "c"}})
    assert git(path, "rev-list", "--count", notes.LANDINGS) == "2", "one notes commit each"
    assert [r["branch"] for r in notes.read_json(repo, notes.LANDINGS, one)] == ["a"]
    assert sorted(r["branch"] for r in notes.read_json(repo, notes.LANDINGS, two)) == ["b", "c"], "added to"


def test_the_chain_after_a_possible_culprit_is_merged_during_the_round(tmp_path: Path) -> None:
    path = project(tmp_path, extra="[balanced]\ncheck_slots = 4\n")
    names = branches(path, 8, bad={3})
    lead = Lead(Repo.discover(str(path)), "main")
    tip = git(path, "rev-parse", "main")
    q = Queue(lead)
    verdicts = q.run(resolve(lead, names, False, yes=False))
    assert [(v.branch, v.status) for v in verdicts] == [(f"f{i}", "check_failed" if i == 3 else "landed")
                                                         for i in range(1, 9)], "in the chain's order"
    assert landed_subjects(path)[:7] == [f"Land f{i}" for i in (8, 7, 6, 5, 4, 2, 1)]
    # Round 2 checked, beside prefix 3, the chain f4..f8 on prefix 2: it passed, so f1, f2 and that chain land in
    # one move of the branch, to that checked tree, with no third round.
    assert len(git(path, "rev-list", "--walk-reflogs", "main").splitlines()) == 2, "the first commit, one move"
    assert q.rounds == 2
    tips = {name: git(path, "rev-parse", name) for name in names}
    # Round 1 checked prefixes 2, 4, 6, 8; while it ran, the chains for the first culprit of each range it could
    # find failing began to merge: after f1 on the lead's tip, after f3 on prefix 2, and so on. No check and no
    # later round asks for the one after f1: only that round's guesses do.
    assert (tip, tuple(tips[f"f{i}"] for i in range(2, 9))) in q.checker.stops
    prefix2 = git(path, "rev-parse", "main~5")  # Land f2, under f4 ... f8
    assert (prefix2, tuple(tips[f"f{i}"] for i in range(4, 9))) in q.checker.built, "the chain that landed"
