"""What a lead passes on, with the chief running: a real shell worker asks (`git balanced ask`) under a running
engine, its lead passes the question on, and it goes to the chief first; the chief's tools answer it (the worker
reads `Your chief says: …`) or hand it to the person; left with the chief too long, it comes to the person."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from git_balanced.channel import questions
from git_balanced.channel.inbox import entries
from git_balanced.chief import passon
from git_balanced.chief.projects import add_project
from git_balanced.commands.board import collect
from tests.channel.test_questions import Asking, start_asking
from tests.support.builders import git
from tests.support.cli import balanced


@pytest.fixture
def asking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Asking]:
    yield from start_asking(tmp_path, monkeypatch, "Which name should the module have?")


def held(asking: Asking, *args: str) -> list[dict[str, object]]:
    ran = balanced(asking.root, "chief", "held", "--json", *args)
    assert ran.code == 0, ran.err
    found = json.loads(ran.out)
    assert found["reviews"] == [], "no work was put to the person"
    return list(found["questions"])


def tool(cwd: Path, name: str, **args: object) -> tuple[int, str]:
    ran = balanced(cwd, "mcp", "--chief", "--call", name, json.dumps(args))
    return ran.code, ran.out if ran.code == 0 else ran.err


def test_a_question_the_lead_passes_on_goes_to_the_chief_and_its_answer_to_the_worker(asking: Asking) -> None:
    qid = asking.question()["qid"]
    assert held(asking) == [], "nothing waits on the chief yet; the chief is now seen here"
    ran = balanced(asking.root, "pass", qid)
    assert ran.code == 0, ran.err
    assert ran.out.strip() == f"Passed {qid} (namer) on to the chief: it answers it or hands it to you."
    assert not any(item.get("qid") == qid for item in collect(asking.lead)["now"]), "not under the person's Now yet"
    [q] = held(asking)
    assert (q["qid"], q["piece"], q["text"]) == (qid, "namer", "Which name should the module have?")

    add_project(str(asking.root), name="shop")
    assert passon.gather(600.0) == 1 and passon.gather(600.0) == 0, "each question posted once"
    news = passon.news()
    assert news is not None and f"shop: namer asks ({qid}), passed on by its lead: Which name" in news, news
    assert f"answer(project='shop', question='{qid}', text=...)" in news
    assert passon.news() is None, "handed over once"

    code, out = tool(asking.root, "answer", project="shop", question=qid, text="Call it calc.")
    assert code == 0, out
    said = json.loads(out)
    assert (said["project"], said["answer"], said["answered_by"]) == ("shop", "Your chief says: Call it calc.",
                                                                      "the chief")
    asking.wait_state("landed")
    assert git(asking.root, "show", "main:answer.txt") == "Your chief says: Call it calc.", "the worker read it"
    code, out = tool(asking.root, "pass_on", project="shop", question=qid)
    assert code == 1 and f"{qid} was not passed on: it is answered already" in out, out
    code, out = tool(asking.root, "answer", project="nowhere", question=qid, text="x")
    assert code == 1 and "There is no project named 'nowhere' (projects: shop)" in out, out


def test_the_chief_hands_a_question_on_or_it_comes_to_you_when_left_too_long(asking: Asking) -> None:
    qid = asking.question()["qid"]
    held(asking)
    assert balanced(asking.root, "pass", qid).code == 0
    ran = balanced(asking.root, "chief", "hand", qid)
    assert ran.code == 0, ran.err
    assert ran.out.strip() == f"Passed {qid} (namer) to you: it shows under Now."
    assert any(item.get("qid") == qid for item in collect(asking.lead)["now"]), "under the person's Now"
    said = [e["text"] for e in entries(asking.lead.repo, asking.lead.branch)]
    assert f"{qid} from namer was passed on to you by the chief: Which name should the module have?" in said

    other = questions.ask(asking.lead.repo, asking.job()["id"], "And its version?", lead_branch="main")
    assert balanced(asking.root, "pass", other).code == 0
    assert [q["qid"] for q in held(asking)] == [other]
    assert held(asking, "--pass-after", "0.001") == [], "held too long, it left the chief"
    assert questions.find(asking.lead.repo, other)["state"] == "passed"
    said = [e["text"] for e in entries(asking.lead.repo, asking.lead.branch)]
    assert (f"{other} from namer was not answered by the chief for 0 seconds, so it waits for you (the first "
            "answer counts): And its version?") in said
    late = balanced(asking.root, "chief", "reply", other, "1.0")
    assert late.code == 0, late.err  # under the person's Now too, the first answer counts
    assert questions.find(asking.lead.repo, other)["fields"]["answered_by"] == "the chief"
