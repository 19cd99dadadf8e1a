"""The person's Now queue against real repositories: the lead puts its work (and ideas) to you, the board
numbers them, and ship, correct, not-now, go-ahead and `answer --allow` many answer them; the lead hears
each answer in its inbox, and `sync` carries rows and their attachments to another clone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_balanced import jobs as J
from git_balanced.channel import now, questions
from git_balanced.channel.inbox import entries
from git_balanced.landing import checks
from git_balanced.landing.now import put_to_you
from git_balanced.lead import Lead, open_lead
from tests.support.builders import commit, git, make_remote, make_repo
from tests.support.cli import balanced

SETTINGS = '[worktree]\ncheck = "test ! -e broken.txt"\n[balanced]\nagent = "shell"\n'


@pytest.fixture
def lead(tmp_path: Path) -> Lead:
    """A lead on main with an upstream on a bare remote, one commit ahead of it, its check approved."""
    repo = make_repo(tmp_path / "lead", {"README.md": "sample\n", ".magnum/settings.toml": SETTINGS})
    make_remote(tmp_path, repo)
    git(repo, "branch", "--set-upstream-to=origin/main")
    assert balanced(repo, "allow", "--yes").code == 0
    commit(repo, {"export.py": "def export():\n    return 1\n"}, "Add export")
    return open_lead(str(repo))


def heard(lead: Lead) -> list[str]:
    return [e["text"] for e in entries(lead.repo, lead.branch) if e.get("kind") == "now-answer"]


def board(lead: Lead) -> str:
    ran = balanced(lead.repo.root, "board")
    assert ran.code == 0, ran.err
    return ran.out


def test_put_to_you_is_a_row_under_now_with_what_ships_the_check_and_attachments(lead: Lead,
                                                                                   tmp_path: Path) -> None:
    shot = lead.repo.root / "shot.png"  # attachments come from the working tree (tests/channel/test_attachments.py)
    shot.write_bytes(b"\x89PNG fake screenshot")
    row = put_to_you(lead.repo, "Added the export button\nIt writes CSV.", [str(shot)])
    assert row["state"] == "waiting" and row["kind"] == "review"
    assert row["ships"]["summary"] == "1 commit · 1 file · +2 \u22120" and row["ships"]["upstream"] == "origin/main"
    assert row["check"]["state"] == "passed" and row["check"]["ran"] is True, "the check runs again on the branch"
    tree = lead.repo.tree_of("main")
    assert checks.cached(lead.repo, tree, "test ! -e broken.txt") is not None, "its result is recorded as a note"
    assert now.attachment(lead.repo, row["id"], "shot.png") == shot.read_bytes()
    text = board(lead)
    assert text.startswith("Now\n  1 ▸ review " + row["id"] + ": Added the export button\n"), text
    assert "ships 1 commit · 1 file · +2 \u22120 to origin/main · check passed (`test ! -e broken.txt`, " in text
    assert "attached: shot.png (20 B)" in text and "git balanced ship 1 | correct TEXT 1 | not-now 1" in text
    data = json.loads(balanced(lead.repo.root, "board", "--json").out)
    assert data["now"][0]["n"] == 1 and data["now"][0]["row"]["attachments"][0]["name"] == "shot.png"
    missing = balanced(lead.repo.root, "ship", "9")
    assert missing.code == 1 and "Nothing under Now is numbered 9 (waiting: 1)." in missing.err


def test_correct_sends_the_review_back_and_a_new_put_replaces_it(lead: Lead) -> None:
    first = put_to_you(lead.repo, "Added export")
    idea = now.idea(lead.repo, "Cache the parsed config")
    ran = balanced(lead.repo.root, "correct", "Keep the old flag working")
    assert ran.code == 0, ran.err
    assert f"review {first['id']} goes back to the lead" in ran.out and "Corrected once" in ran.out
    assert now.row(lead, first["id"])["state"] == "corrected"
    assert heard(lead) == [f"The person corrected your review {first['id']} (Added export): Keep the old flag "
                           "working · fix it, then put the work to them again."]
    assert now.row(lead, idea["id"])["state"] == "waiting", "a correction goes to the work, not to the idea"
    assert "Now\n  2 ✦ idea" in board(lead) and "\n  Corrected once" in board(lead), "the correction is counted"
    assert balanced(lead.repo.root, "not-now", idea["id"]).code == 0
    commit(lead.repo.root, {"flag.py": "OLD = True\n"}, "Keep the old flag")
    second = put_to_you(lead.repo, "Added export, old flag kept")
    third = put_to_you(lead.repo, "Added export, old flag kept, docs too")
    assert now.row(lead, second["id"])["state"] == "replaced", "a newer review replaces the one still waiting"
    assert [r["id"] for r in now.rows(lead)] == [third["id"]]
    late = balanced(lead.repo.root, "not-now", second["id"])
    assert late.code == 1 and f"Too late: {second['id']} was not changed" in late.err


def test_ideas_go_ahead_or_not_now_by_their_numbers(lead: Lead) -> None:
    review = put_to_you(lead.repo, "Added export")
    idea = now.idea(lead.repo, "Cache the parsed config")
    other = now.idea(lead.repo, "Drop Python 3.9")
    text = board(lead)
    assert f"  2 ✦ idea {idea['id']}: Cache the parsed config\n" in text and f"  3 ✦ idea {other['id']}" in text
    wrong = balanced(lead.repo.root, "go-ahead", "1")
    assert wrong.code == 1 and "1 is a review (answer it with ship, correct or not-now)" in wrong.err
    several = balanced(lead.repo.root, "not-now")
    assert several.code == 1 and "3 rows wait for an answer" in several.err
    ran = balanced(lead.repo.root, "go-ahead", "2", "only for the CLI")
    assert ran.code == 0 and f"Go ahead: idea {idea['id']}" in ran.out
    ran = balanced(lead.repo.root, "not-now", other["id"], "-m", "after the release")
    assert ran.code == 0 and f"Not now: idea {other['id']}" in ran.out
    assert heard(lead) == [
        f"The person said go ahead to your idea {idea['id']} (Cache the parsed config): only for the CLI · plan "
        "it and start it.",
        f"The person said not now to your idea {other['id']} (Drop Python 3.9): after the release."]
    assert [r["id"] for r in now.rows(lead)] == [review["id"]]


def test_ship_answers_the_review_only_once_pushed(lead: Lead) -> None:
    review = put_to_you(lead.repo, "Added export")
    refused = balanced(lead.repo.root, "ship", input="")
    assert refused.code == 1 and "Nothing was pushed" in refused.err
    assert now.row(lead, review["id"])["state"] == "waiting" and not heard(lead)
    put_at = git(lead.repo.root, "rev-parse", "--short=7", "main")
    commit(lead.repo.root, {"export.py": "def export():\n    return 2\n"}, "Export two")
    ran = balanced(lead.repo.root, "ship", "1", "--yes")
    assert ran.code == 0, ran.err
    assert f"main moved since {review['id']} was put to you (it was {put_at}); what ships is what is shown above." \
        in ran.out
    assert f"Answered {review['id']}: shipped" in ran.out
    assert git(lead.repo.root, "rev-parse", "origin/main") == git(lead.repo.root, "rev-parse", "main")
    assert heard(lead) == [f"The person shipped your review {review['id']} (Added export): pushed main to "
                           "origin/main, 2 commits · 1 file · +2 \u22120."]


def test_answer_allows_four_waiting_commands_with_one_command(lead: Lead) -> None:
    asked = []
    for piece in ("api", "ui", "docs", "db"):
        jid = J.place(lead.repo, {"plan": "p1", "piece": piece, "task": "t", "lead": "main", "machine": "local",
                                  "agent": "shell", "attempt": 1})
        qid = questions.ask(lead.repo, jid, f"npm install for {piece}", kind="command")
        assert questions.pass_on(lead.repo, qid, "passed on by the lead")
        asked.append(qid)
    review = put_to_you(lead.repo, "Added export")
    text = board(lead)
    assert f"  1 ? api asks to run: npm install for api · git balanced answer {asked[0]}" in text
    assert f"  5 ▸ review {review['id']}" in text
    mixed = balanced(lead.repo.root, "answer", "--allow", "1", "5")
    assert mixed.code == 1 and "5 is a review, not a worker's question" in mixed.err
    assert all(questions.find(lead.repo, q)["state"] == "passed" for q in asked), "no answer when one name is wrong"
    ran = balanced(lead.repo.root, "answer", "--allow", "1", "2", asked[2], "4", "fine by me")
    assert ran.code == 0, ran.err
    assert ran.out.splitlines() == [f"Answered {q} ({p}): allowed: fine by me"
                                    for q, p in zip(asked, ("api", "ui", "docs", "db"), strict=True)]
    assert all(questions.find(lead.repo, q)["state"] == "answered" for q in asked)
    typo = balanced(lead.repo.root, "answer", "--allow", asked[0], "qzzzzz")
    assert typo.code == 1 and "Nothing under Now is named qzzzzz." in typo.err, "a mistyped id is not a reason"
    again = balanced(lead.repo.root, "answer", "--deny", asked[0], asked[1])
    assert again.code == 1 and f"2 of 2 not answered:\n  {asked[0]}: Too late" in again.err
    one = balanced(lead.repo.root, "answer", "5", "yes")
    assert one.code == 1 and "5 is a review, not a worker's question." in one.err, "the review keeps its number"


def test_numbers_under_now_do_not_shift_when_rows_are_answered(lead: Lead) -> None:
    asked = []
    for piece in ("api", "ui", "docs"):
        jid = J.place(lead.repo, {"plan": "p1", "piece": piece, "task": "t", "lead": "main", "machine": "local",
                                  "agent": "shell", "attempt": 1})
        qid = questions.ask(lead.repo, jid, f"npm install for {piece}", kind="command")
        assert questions.pass_on(lead.repo, qid, "passed on by the lead")
        asked.append(qid)
    idea = now.idea(lead.repo, "Cache the parsed config")
    assert balanced(lead.repo.root, "answer", "--allow", "1").code == 0
    text = board(lead)
    assert "  1 ?" not in text and "  2 ? ui asks to run" in text and f"  4 ✦ idea {idea['id']}" in text, text
    ran = balanced(lead.repo.root, "answer", "--deny", "3", "not now")
    assert ran.code == 0 and ran.out.startswith(f"Answered {asked[2]} (docs): denied"), ran.out
    gone = balanced(lead.repo.root, "answer", "--allow", "1")
    assert gone.code == 1 and "Nothing under Now is numbered 1 (waiting: 2, 4)." in gone.err, gone.err
    late = questions.ask(lead.repo, J.place(lead.repo, {"plan": "p1", "piece": "db", "task": "t", "lead": "main",
                                                        "machine": "local", "agent": "shell", "attempt": 1}),
                         "psql", kind="command")
    assert questions.pass_on(lead.repo, late, "passed on by the lead")
    assert "  5 ? db asks to run: psql" in board(lead), "a question passed later takes the next number"
    assert [i["n"] for i in now.numbered(lead)] == [2, 4, 5]


def test_sync_carries_rows_and_attachments_to_another_clone(lead: Lead, tmp_path: Path) -> None:
    shot = lead.repo.root / "log.txt"
    shot.write_text("the tail of a log\n")
    row = put_to_you(lead.repo, "Added export", [str(shot)])
    assert balanced(lead.repo.root, "sync").code == 0
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(tmp_path / "origin.git"), str(other))
    ran = balanced(other, "sync")
    assert ran.code == 0, ran.err
    there = open_lead(str(other))
    assert [r["id"] for r in now.rows(there)] == [row["id"]]
    assert now.attachment(there.repo, row["id"], "log.txt") == b"the tail of a log\n"
