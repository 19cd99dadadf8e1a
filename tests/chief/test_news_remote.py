"""A project on an SSH machine (a real sshd), as the running chief follows it: one call at a time there, which
waits for a change and brings the question the moment its lead passes it on; and the `projects` tool reads it
in one call (`chief look`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from git_balanced.channel import questions
from git_balanced.chief import news, remote, tools
from git_balanced.chief.projects import add_project, project
from tests.chief.test_news import Started
from tests.support.remote_projects import install_there, owned_by, project_there
from tests.support.sshd import sshd_machines
from tests.support.wait import wait_until

pytestmark = pytest.mark.sshd
WAIT = 20.0  # what each call waits there: the question must come well before it ends


def test_a_machines_project_brings_a_passed_question_at_once_and_is_read_in_one_call(tmp_path: Path) -> None:
    with sshd_machines(tmp_path, ["box"]) as machines:
        box = machines[0]
        ios, jid = project_there(tmp_path, box, "ios")
        qid = questions.ask(ios.repo, jid, "Which scheme?")
        owned_by(box, box.home / "ios")
        install_there(box)
        owned_by(box, box.home / ".local")
        add_project("box:ios")

        with Started() as started:
            [state] = tools.projects()["projects"]
        calls = [a for a in started.argv if any("exec git balanced" in str(w) for w in a)]
        assert len(calls) == 1 and calls[0][-1].endswith(" chief look --json"), f"one call there: {started.argv}"
        assert "error" not in state and (state["name"], state["lead"], state["leads"]) == ("ios", None, []), state

        watch = news.Watch(600.0, wait=WAIT)
        try:
            first = wait_until(lambda: watch.look()[0], 60, "the first read on the machine")
            assert [(p.name, got["questions"]) for p, got in first] == [("ios", [])]
            passed = remote.run_there(project("ios"), ["pass", qid])
            assert "on to the chief" in passed, passed
            came: list[Any] = []
            wait_until(lambda: came.extend(watch.look()[0]) or came, WAIT - 5, "the question, before the wait ends")
            [(p, got)] = came
            assert [(q["qid"], q["text"]) for q in got["questions"]] == [(qid, "Which scheme?")], got
        finally:
            watch.stop()
