"""A failed piece says why (the board, the inbox, `show`), and a retry tries only what could change: a shell
piece's failed check is tried again once the lead's branch moved, and an agent's next attempt is told what the
last one did and why it failed."""

from __future__ import annotations

import json
from pathlib import Path

from git_balanced import jobs as J
from git_balanced.engine.attempts import Next, next_attempt
from git_balanced.engine.workers import build_request
from git_balanced.lead import open_lead
from git_balanced.machines.reach.hosts import LocalHost
from git_balanced.state import refs
from git_balanced.vocab import JobState
from tests.support.builders import git
from tests.support.cli import balanced
from tests.support.plans import board, engine, inbox_text, jobs_of, lead_repo, piece, plan

# A check that names its failing test, as pytest does on its last lines.
CHECK = ("if grep -rq BAD src; then echo 'collected 3 items'; echo 'FAILED tests/test_src.py::test_no_bad - "
         "found BAD'; echo '1 failed, 2 passed'; exit 1; fi")


def test_a_shell_piece_whose_check_failed_on_an_unmoved_base_says_why_and_is_not_tried_again(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path, check=CHECK)
    plan(repo, [piece("bad", "echo BAD > src/bad.txt")], "--start")
    r = engine(repo, "--until-idle")
    assert r.code == 1, r
    rows = jobs_of(repo, "bad")
    assert [j["state"] for j in rows] == ["failed"], "the same command on the same base is not run again"
    text = inbox_text(repo)
    assert "bad did not land. Not tried again: the same command on the same base would fail the same check" \
        in text, text
    inbox = balanced(repo, "inbox").out
    assert "FAILED tests/test_src.py::test_no_bad - found BAD" in inbox, "the inbox names the failing test"

    data = board(repo)
    now = [x for x in data["now"] if x.get("piece") == "bad"]  # type: ignore[union-attr]
    assert now and "FAILED tests/test_src.py::test_no_bad" in now[0]["tail"], now
    shown = balanced(repo, "board").out
    assert "      FAILED tests/test_src.py::test_no_bad - found BAD" in shown, shown
    assert f"`git balanced show {rows[0]['id']}`" in shown

    s = balanced(repo, "show", str(rows[0]["id"])[:8])
    assert s.code == 0, s
    assert "collected 3 items" in s.out and "The check's whole output" in s.out, s.out
    assert "placed" in s.out and "gave-up" in s.out, "its events are listed"
    assert "branch: balanced/bad (refs/heads/balanced/bad) at " in s.out, s.out
    detail = json.loads(balanced(repo, "show", str(rows[0]["id"]), "--json").out)
    assert detail["check_output"]["whole"] is True
    assert detail["check_output"]["text"].splitlines()[0] == "collected 3 items"
    assert detail["did"]["commits"] == 1 and detail["branch_at"]["in_lead"] is False
    logged = git(repo, "log", "--format=%s", refs.ref_for("jobs", str(rows[0]["id"]))).splitlines()
    assert sorted(e["subject"] for e in detail["events"]) == sorted(logged), "each event's line, as git gives it"
    mcp = balanced(repo, "mcp", "--call", "show", json.dumps({"job": rows[0]["id"]}))
    assert mcp.code == 0 and "collected 3 items" in mcp.out, mcp
    tool_board = balanced(repo, "mcp", "--call", "board")
    assert tool_board.code == 0 and "FAILED tests/test_src.py::test_no_bad - found BAD" in tool_board.out, tool_board
    tool_inbox = balanced(repo, "mcp", "--call", "inbox")
    assert "FAILED tests/test_src.py::test_no_bad - found BAD" in tool_inbox.out, tool_inbox


def test_a_shell_piece_whose_check_failed_waits_for_the_base_to_move_and_is_tried_again(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path, check=CHECK)
    run = "if [ -f src/bad.txt ]; then rm src/bad.txt; echo fixed > src/fix.txt; else echo BAD > src/bad.txt; fi"
    # `early` fails its check while `slow` still runs: it waits for main to move, and once `slow` landed it is
    # tried again.
    plan(repo, [piece("slow", "sleep 4; echo a > src/slow.txt"), piece("early", run)], "--start")
    assert engine(repo, "--until-idle").code == 0
    rows = jobs_of(repo, "early")
    assert [j["state"] for j in rows] == ["retried", "landed"], rows
    text = inbox_text(repo)
    assert "early failed (its check failed (exit 1)). It is tried again once main moves" in text, text
    assert "Tries again on the new tip of main: attempt 2" in text, text
    assert (repo / "src" / "fix.txt").exists() and not (repo / "src" / "bad.txt").exists()


def test_an_agents_next_attempt_is_told_what_the_last_did_and_why_it_failed(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    lead = open_lead(str(repo))
    first = J.place(lead.repo, {"plan": "p1", "piece": "api", "task": "Write the api.", "agent": "claude",
                                "machine": "local", "branch": "balanced/api", "attempt": 1, "lead": "main"})
    refs.append(lead.repo, refs.ref_for("jobs", first), "check_failed", "balanced/api: did not land",
                {"failure": "check_failed", "reason": "its check failed (exit 1)", "commits": 2,
                 "summary": "Wrote the api.", "tail": "FAILED tests/test_api.py::test_get - 404 != 200\n1 failed"},
                state=JobState.FAILED)
    job = J.one(lead.repo, first)
    assert job is not None
    new = J.one(lead.repo, next_attempt(lead, job, Next(retry_reason="its check failed")))
    assert new is not None
    note = new.resume_note
    assert "Your last attempt at this piece (attempt 1) made 2 commit(s) on balanced/api" in note, note
    assert "its check failed (exit 1)" in note and "FAILED tests/test_api.py::test_get - 404 != 200" in note
    assert "Its commits are on your branch" in note
    argv = build_request(lead, new, LocalHost(lead.repo), None, None, False, []).argv
    first_message = argv[argv.index("-p") + 1]
    assert first_message.startswith("Write the api.") and "test_get - 404 != 200" in first_message, first_message

    conflict = J.place(lead.repo, {"plan": "p1", "piece": "web", "task": "Write the web.", "agent": "claude",
                                   "machine": "local", "branch": "balanced/web", "attempt": 1, "lead": "main"})
    refs.append(lead.repo, refs.ref_for("jobs", conflict), "conflict", "balanced/web: did not land",
                {"failure": "conflict", "reason": "it conflicts with main in web/app.py", "commits": 1,
                 "verdict_paths": ["web/app.py"]}, state=JobState.FAILED)
    job = J.one(lead.repo, conflict)
    assert job is not None
    new = J.one(lead.repo, next_attempt(lead, job, Next(retry_reason="conflict", branch="balanced/web-2")))
    assert new is not None
    assert "It conflicted with the lead's branch in: web/app.py." in new.resume_note
    assert "its commits stay on balanced/web" in new.resume_note

    shell = J.place(lead.repo, {"plan": "p1", "piece": "sh", "task": "Run it.", "agent": "shell", "run": "true",
                                "machine": "local", "branch": "balanced/sh", "attempt": 1, "lead": "main"})
    refs.append(lead.repo, refs.ref_for("jobs", shell), "failed", "sh: failed",
                {"failure": "failed", "reason": "the command exited 1"}, state=JobState.FAILED)
    job = J.one(lead.repo, shell)
    assert job is not None
    again = J.one(lead.repo, next_attempt(lead, job, Next(retry_reason="again")))
    assert again is not None and again.resume_note == "", "a shell piece's task is its commit message: left alone"
