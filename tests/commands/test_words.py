"""Words the person did not write (a plan's task, a failing worker's output, a lead's idea, a settings' command)
reach the terminal shown plain: no escape sequence retitles or clears it, no bidirectional mark reorders it.
The same words stay exactly as they are in `--json`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_balanced.channel import now
from git_balanced.lead import open_lead
from tests.support.builders import git, make_remote
from tests.support.cli import Ran, balanced
from tests.support.plans import engine, lead_repo, piece, plan

EVIL = "\033]0;x\007\033[2J\u202eevil"
SHOWN = "\\x1b]0;x\\x07\\x1b[2J\\u202eevil"
# printf's own escapes for EVIL: ESC, BEL, and U+202E as its UTF-8 bytes
PRINTF = "\\033]0;x\\007\\033[2J\\342\\200\\256evil"


def plain(ran: Ran) -> str:
    """Both streams of a command that printed words, after checking they hold nothing a terminal obeys."""
    assert ran.code in (0, 1), ran
    text = ran.out + ran.err
    for c in ("\033", "\007", "\u202e"):
        assert c not in text, f"{c!r} reached the terminal raw:\n{text!r}"
    return text


@pytest.fixture
def run(tmp_path: Path) -> Path:
    """A plan whose task holds EVIL: one piece lands, one fails printing EVIL; the engine ran it out."""
    repo = lead_repo(tmp_path, check="! grep -rq BAD src # " + EVIL, extra="attempts = 1\n")
    stored = plan(repo, [piece("good", "echo ok > src/good.txt"),
                         piece("bad", f"printf '{PRINTF}\\n'; exit 1")], "--start", task="Ship it " + EVIL)
    assert SHOWN in plain(stored) and "Ship it " in stored.out
    return repo


def test_the_plan_the_engine_the_board_and_the_inbox_show_a_worker_s_words_plain(run: Path) -> None:
    ran = engine(run, "--until-idle")
    assert ran.code == 1, ran
    assert SHOWN in plain(ran), "the engine names the failing piece with its output's tail, shown plain"
    board = plain(balanced(run, "board"))
    assert SHOWN in board and "bad" in board
    data = json.loads(balanced(run, "board", "--json").out)
    assert any(EVIL in r["reason"] for r in data["jobs"]), "JSON keeps the words as they are"
    assert any(EVIL in p["task"] for p in data["plans"])
    assert SHOWN in plain(balanced(run, "inbox"))
    assert any(EVIL in e["text"] for e in json.loads(balanced(run, "inbox", "--json").out))
    assert SHOWN in plain(balanced(run, "plans"))
    assert any(EVIL in p["task"] for p in json.loads(balanced(run, "plans", "--json").out))


def test_log_shows_the_check_command_plain(run: Path) -> None:
    assert engine(run, "--until-idle").code == 1
    assert SHOWN in plain(balanced(run, "log"))
    rows = json.loads(balanced(run, "log", "--json").out)
    assert rows[0]["notes"][0]["check"].endswith(EVIL)
    assert SHOWN in plain(balanced(run, "allow", "--yes")), "what you approve is what you see"


def test_what_the_lead_puts_under_now_and_an_error_quoting_words_are_plain(run: Path) -> None:
    lead = open_lead(str(run))
    now.idea(lead, "Cache it " + EVIL)
    board = plain(balanced(run, "board"))
    assert "idea" in board and SHOWN in board
    assert json.loads(balanced(run, "board", "--json").out)["now"][0]["row"]["summary"] == "Cache it " + EVIL
    assert SHOWN in plain(balanced(run, "not-now", "1"))
    err = plain(balanced(run, "go-ahead", EVIL))
    assert f"error: Nothing under Now is named {SHOWN}." in err, err


def test_review_shows_what_it_quotes_plain(run: Path, tmp_path: Path) -> None:
    make_remote(tmp_path, run)
    git(run, "branch", "--set-upstream-to=origin/main")
    assert engine(run, "--until-idle").code == 1
    text = plain(balanced(run, "review"))
    assert SHOWN in text and "good" in text, text
    assert json.loads(balanced(run, "review", "--json").out)["check"]["command"].endswith(EVIL)
