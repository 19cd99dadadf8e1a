"""One Now over two projects on this machine: rows named PROJECT.N that stay put as others are answered,
`answer --allow` across projects at once, and the chief's notes under a row in `now`, `now --all` and `board`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from git_balanced import jobs as J
from git_balanced.channel import now, questions
from git_balanced.lead import Lead, open_lead
from tests.support.builders import make_repo
from tests.support.cli import balanced


def asked(lead: Lead, piece: str, command: str) -> str:
    """A worker's question to run `command`, passed on to the person by the lead."""
    jid = J.place(lead.repo, {"plan": "p1", "piece": piece, "task": "t", "lead": lead.branch, "machine": "local",
                              "agent": "shell", "attempt": 1})
    qid = questions.ask(lead.repo, jid, command, kind="command")
    assert questions.pass_on(lead.repo, qid, "passed on by the lead")
    return qid


def test_one_now_over_two_projects_with_notes_and_answers_across_them(tmp_path: Path) -> None:
    web, ios = (open_lead(str(make_repo(tmp_path / name, {"README.md": name}))) for name in ("shop-web", "shop-ios"))
    w1, w2 = asked(web, "api", "npm install"), asked(web, "ui", "npm test")
    i1 = asked(ios, "build", "xcodebuild")
    review = now.put(ios.repo, "Added the cart screen", ships=None, check=None)
    assert balanced(tmp_path, "projects", "add", str(web.repo.root), "--name", "web").code == 0
    assert balanced(tmp_path, "projects", "add", str(ios.repo.root), "--name", "ios").code == 0

    noted = balanced(ios.repo.root, "now", "note", "2", "ship this one first: web builds on it")
    assert noted.code == 0 and noted.out == f"Noted under 2 ({review['id']}): Chief: ship this one first: web " \
                                           "builds on it\n", noted.out + noted.err
    here = balanced(ios.repo.root, "now")
    assert here.out.splitlines()[-2:] == ["      git balanced ship 2 | correct TEXT 2 | not-now 2",
                                          "      Chief: ship this one first: web builds on it"], here.out
    assert "Chief: ship this one first" in balanced(ios.repo.root, "board").out

    every = balanced(tmp_path, "now", "--all")
    assert every.code == 0, every.err
    lines = every.out.splitlines()
    assert lines[0] == "Now, over 2 projects · allow several at once: `git balanced answer --allow ios.1 web.1 web.2`"
    assert f"  web.1 ? api asks to run: npm install · git balanced answer {w1} --allow|--deny [REASON]" in lines
    assert any(line.startswith(f"  ios.2 ▸ review {review['id']}: Added the cart screen") for line in lines)
    assert "          Chief: ship this one first: web builds on it" in lines, every.out

    data = json.loads(balanced(tmp_path, "now", "--all", "--json").out)
    by_name = {i["name"]: i for i in data["now"]}
    assert sorted(by_name) == ["ios.1", "ios.2", "web.1", "web.2"]
    assert by_name["ios.2"]["project"] == "ios" and by_name["ios.2"]["notes"][0]["text"] == \
        "ship this one first: web builds on it"

    review_in_words = balanced(tmp_path, "answer", "ios.2", "looks good")
    assert review_in_words.code == 1 and "ios.2 is a review, not a worker's question." in review_in_words.err
    w3 = asked(web, "docs", "make docs")
    words = balanced(tmp_path, "answer", "web.3", "use the docs image instead")
    assert words.out == f"Answered web.3 ({w3}, docs): use the docs image instead\n", words.out + words.err
    ran = balanced(tmp_path, "answer", "--allow", "web.1", "ios.1", "web.2", "go ahead")
    assert ran.code == 0, ran.err
    assert ran.out.splitlines() == [f"Answered web.1 ({w1}, api): allowed: go ahead",
                                    f"Answered web.2 ({w2}, ui): allowed: go ahead",
                                    f"Answered ios.1 ({i1}, build): allowed: go ahead"]
    assert all(questions.find(lead.repo, q)["state"] == "answered" for lead, q in ((web, w1), (web, w2), (ios, i1)))
    after = balanced(tmp_path, "board", "--all-projects")
    assert "web (" in after.out and ": nothing waits on you" in after.out, after.out
    assert any(line.startswith(f"  ios.2 ▸ review {review['id']}") for line in after.out.splitlines()), \
        "the review keeps its name after the rows before it are answered"

    again = balanced(tmp_path, "answer", "--allow", "web.1", "ios.7")
    assert again.code == 1 and again.err.splitlines()[:3] == [
        "error: 2 of 2 not answered:", "  web.1: Nothing under Now is numbered 1: nothing waits on you.",
        "  ios.7: Nothing under Now is numbered 7 (waiting: 2)."], again.err
    unknown = balanced(tmp_path, "answer", "--allow", "tv.1", "web.1")
    assert unknown.code == 1 and "There is no project named 'tv' (projects: ios, web)." in unknown.err
    mixed = balanced(tmp_path, "answer", "--allow", "web.1", "3")
    assert mixed.code == 1 and "3 names no project" in mixed.err, mixed.err

    shutil.rmtree(web.repo.root)  # a project that cannot be read is said, and the others are shown
    gone = balanced(tmp_path, "now", "--all")
    assert gone.code == 0 and f"web ({web.repo.root}): not read: {web.repo.root} is not inside a git repository." \
        in gone.out.splitlines() and "ios (" in gone.out, gone.out


def test_now_marks_a_lead_the_chief_started(tmp_path: Path) -> None:
    from git_balanced.channel import presence
    from git_balanced.files import write_atomic

    web, ios = (open_lead(str(make_repo(tmp_path / name, {"README.md": name}))) for name in ("web", "ios"))
    asked(web, "api", "npm install")
    asked(ios, "build", "xcodebuild")
    write_atomic(presence.lead_dir(web.repo, web.branch) / "lead.json",
                 json.dumps({"agent": "claude", "task": "Web.", "state": "waiting", "turns": 1, "cost_usd": 0.0,
                             "started_by": "chief"}))
    for repo, name in ((web, "web"), (ios, "ios")):
        assert balanced(tmp_path, "projects", "add", str(repo.repo.root), "--name", name).code == 0

    assert balanced(web.repo.root, "now").out.splitlines()[0] == "Now · Lead, started by the chief"
    assert balanced(ios.repo.root, "now").out.splitlines()[0] == "Now"
    lines = balanced(tmp_path, "now", "--all").out.splitlines()
    assert f"web ({web.repo.root}) · Lead, started by the chief" in lines, lines
    assert f"ios ({ios.repo.root})" in lines, lines
    data = json.loads(balanced(tmp_path, "now", "--all", "--json").out)
    assert {p["name"]: p["lead_started_by"] for p in data["projects"]} == {"web": "chief", "ios": None}
    assert json.loads(balanced(web.repo.root, "now", "--json").out)["lead_started_by"] == "chief"
    from git_balanced.agents import modes
    from git_balanced.chief import tools

    modes.record(ios.repo, ios.branch, {"permission_mode": "default", "session_id": "s1", "model": "claude-x"})
    presence.mark_seen(ios.repo, ios.branch)
    leads = {p["name"]: p["leads"] for p in tools.projects()["projects"]}
    assert [(x["headless"], x["started_by"]) for x in leads["web"]] == [(True, "chief")], leads
    assert [(x["headless"], x["agent"], x["mode"], x["active"]) for x in leads["ios"]] == \
        [(False, "claude", "default", True)], leads
    assert json.loads(balanced(ios.repo.root, "board", "--json").out)["lead_session"]["agent"] == "claude"
