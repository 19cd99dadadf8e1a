"""How news reaches the running chief (chief/news.py): a project here is read in the chief's own process, only
when its questions or its Now moved, so an idle look starts no process; a question a lead passes on is the
chief's next turn; a project that cannot be read is said once, and again once it can be read again."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from git_balanced import jobs as J
from git_balanced.channel import now, questions, tochief
from git_balanced.chief import news, passon, session
from git_balanced.chief.projects import add_project
from git_balanced.lead import open_lead
from tests.support.builders import make_repo
from tests.support.cli import balanced


class Started:
    """Every process this process starts (subprocess.Popen's) while it is entered, counted as they start."""

    def __init__(self) -> None:
        self.argv: list[list[str]] = []
        self.real = subprocess.Popen._execute_child  # type: ignore[attr-defined]

    def __enter__(self) -> Started:
        real = self.real

        def counted(popen: Any, args: Any, *rest: Any) -> Any:
            self.argv.append(list(args) if isinstance(args, (list, tuple)) else [str(args)])
            return real(popen, args, *rest)

        subprocess.Popen._execute_child = counted  # type: ignore[attr-defined]
        return self

    def __exit__(self, *_: object) -> None:
        subprocess.Popen._execute_child = self.real  # type: ignore[attr-defined]


def asked(repo: Path, text: str) -> str:
    """A question from a placed worker, passed on by its lead; the chief is seen, so it goes to the chief."""
    lead = open_lead(str(repo))
    jid = J.place(lead.repo, {"plan": "p1", "piece": "build", "task": "t", "lead": "main", "machine": "local",
                              "agent": "shell", "attempt": 1})
    qid = questions.ask(lead.repo, jid, text)
    assert questions.pass_to_you(lead.repo, qid).get("to_chief"), "the chief was seen: it goes to the chief"
    return qid


def test_an_idle_look_starts_no_process_and_a_passed_question_is_the_chiefs_next_turn(tmp_path: Path) -> None:
    shop = make_repo(tmp_path / "shop", {"README.md": "shop"})
    admin = make_repo(tmp_path / "admin", {"README.md": "admin"})
    add_project(str(shop))
    add_project(str(admin))
    watch = news.Watch(600.0)
    found, lines = watch.look()
    assert sorted(p.name for p, _ in found) == ["admin", "shop"] and lines == [], "each read once at first"
    time.sleep(tochief.SETTLE)  # what the first look wrote is old enough for its stamp to be trusted
    watch.look()
    with Started() as started:
        assert watch.look() == ([], []), "nothing moved: nothing read"
        assert passon.moved(passon.moved(None)[1]) == (False, passon.moved(None)[1]), "nor the chief's inbox"
    assert started.argv == [], f"an idle look starts no process: {started.argv}"

    qid = asked(shop, "Which name should the module have?")
    session._look(watch)
    message = passon.news()
    assert message is not None and f"shop: build asks ({qid}), passed on by its lead: Which name should the " \
                                   "module have?" in message, message
    assert passon.news() is None, "handed over once"
    session._look(watch)
    assert passon.news() is None, "read again while its stamp is fresh, posted once all the same"
    review = now.put(open_lead(str(admin)).repo, "The admin's login", ships=None, check=None)
    session._look(watch)
    message = passon.news()
    assert message is not None and f"admin: its lead put work to the person, row 1 ({review['id']})" in message


def test_a_project_that_cannot_be_read_is_said_once_and_again_when_it_can(tmp_path: Path) -> None:
    gone = make_repo(tmp_path / "gone", {"README.md": "gone"})
    add_project(str(gone))
    watch = news.Watch(600.0, retry=0.0)
    watch.look()
    shutil.rmtree(gone)
    _, lines = watch.look()
    assert len(lines) == 1 and lines[0].startswith(f"gone ({gone}) could not be read: ") and \
        "It is tried again every 0 s; you hear when it can be read again." in lines[0], lines
    assert watch.look() == ([], []), "said once, not at every look"
    make_repo(gone, {"README.md": "back"})
    found, lines = watch.look()
    assert lines == [f"gone ({gone}) can be read again."] and [p.name for p, _ in found] == ["gone"]


def test_held_since_a_stamp_answers_unchanged_or_the_moment_a_question_is_passed_on(tmp_path: Path) -> None:
    shop = make_repo(tmp_path / "shop", {"README.md": "shop"})
    first = json.loads(balanced(shop, "chief", "held", "--json", "--since", "").out)
    assert first["questions"] == [] and "stamp" in first
    time.sleep(tochief.SETTLE)
    mark = tochief.stamp(open_lead(str(shop)).repo)
    assert mark, "a stamp once the last write settled"
    ran = balanced(shop, "chief", "held", "--json", "--since", mark, "--wait", "0")
    assert ran.code == 0 and json.loads(ran.out) == {"stamp": mark, "unchanged": True}, ran.out + ran.err

    later = threading.Timer(1.0, asked, (shop, "And its version?"))
    later.start()
    began = time.monotonic()
    got = tochief.held_since(open_lead(str(shop)), 600.0, mark, 30.0)
    later.join()
    assert time.monotonic() - began < 15, "it came when the question was passed on, not at the end of the wait"
    assert [q["text"] for q in got["questions"]] == ["And its version?"] and got["stamp"] != mark, got
