"""A project on an SSH machine (a real sshd): added as MACHINE:PATH after it is read there, its rows in the one
Now (read with `git balanced board --json` there), answered and noted across projects by `git balanced` there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_balanced.channel import now, questions
from git_balanced.lead import open_lead
from tests.support.builders import make_repo
from tests.support.cli import balanced
from tests.support.remote_projects import install_there, owned_by, project_there
from tests.support.sshd import sshd_machines

pytestmark = pytest.mark.sshd


def test_a_project_on_a_machine_is_read_answered_and_noted_there(tmp_path: Path) -> None:
    web = open_lead(str(make_repo(tmp_path / "web", {"README.md": "web"})))
    with sshd_machines(tmp_path, ["box"]) as machines:
        box = machines[0]
        ios, jid = project_there(tmp_path, box, "ios")
        qid = questions.ask(ios.repo, jid, "xcodebuild", kind="command")
        assert questions.pass_on(ios.repo, qid, "passed on by the lead")
        review = now.put(ios.repo, "Added the cart screen", ships=None, check=None)
        owned_by(box, box.home / "ios")
        refused = balanced(tmp_path, "projects", "add", "box:ios")
        assert refused.code == 1 and "box:ios: git balanced is not installed on box." in refused.err, refused.err
        install_there(box)
        owned_by(box, box.home / ".local")
        missing = balanced(tmp_path, "projects", "add", "box:nowhere")
        assert missing.code == 1 and "there is no folder nowhere on box" in missing.err, missing.err

        added = balanced(tmp_path, "projects", "add", "box:ios")
        assert added.code == 0, added.err
        assert balanced(tmp_path, "projects", "add", str(web.repo.root)).code == 0
        noted = balanced(tmp_path, "now", "note", "ios.2", "ship this one first")
        assert noted.code == 0 and noted.out == f"Noted under ios.2 ({review['id']}): Chief: ship this one first\n", \
            noted.out + noted.err

        every = balanced(tmp_path, "now", "--all")
        assert every.code == 0, every.err
        lines = every.out.splitlines()
        assert "ios (box:ios)" in lines and f"web ({web.repo.root}): nothing waits on you" in lines, every.out
        assert any(line.startswith("  ios.1 ? build asks to run: xcodebuild") for line in lines), every.out
        assert "          Chief: ship this one first" in lines, every.out

        wrong = balanced(tmp_path, "answer", "--allow", "ios.1", "ios.7")
        assert wrong.code == 1 and wrong.err.splitlines()[:2] == [
            "error: 2 of 2 not answered:", "  ios.1, ios.7: box:ios: Nothing under Now is numbered 7 (waiting: 1, 2)."
        ], wrong.err
        ran = balanced(tmp_path, "answer", "--allow", "ios.1", "fine")
        assert ran.code == 0 and ran.out == f"ios: Answered {qid} (build): allowed: fine\n", ran.out + ran.err
        data = json.loads(balanced(tmp_path, "now", "--all", "--json").out)
        assert [i["name"] for i in data["now"]] == ["ios.2"], "the review keeps its number once ios.1 is answered"
        assert data["now"][0]["notes"][0]["text"] == "ship this one first"
        assert questions.find(ios.repo, qid)["state"] == "answered", "answered in the repository on the machine"
