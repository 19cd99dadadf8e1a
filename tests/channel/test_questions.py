"""Questions from a worker to its lead, end to end: a real shell worker runs `git balanced ask` under a running
engine, and the lead answers, passes, or lets it time out to you."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from git_balanced.channel import questions
from git_balanced.channel.inbox import entries
from git_balanced.commands.board import collect, render
from git_balanced.jobs import all_jobs
from git_balanced.lead import Lead, open_lead
from tests.support.builders import git, make_repo
from tests.support.cli import balanced
from tests.support.wait import wait_until

SETTINGS = '[worktree]\ncheck = "true"\n[balanced]\nagent = "shell"\nask_timeout = {timeout}\n'


@dataclass
class Asking:
    lead: Lead
    engine: subprocess.Popen[bytes]

    @property
    def root(self) -> Path:
        return self.lead.repo.root

    def question(self, timeout: float = 30) -> dict:
        """The first question in the lead's inbox, once it is there."""
        def asked() -> list[dict]:
            return [e for e in entries(self.lead.repo, self.lead.branch) if e.get("kind") == "question"]

        return wait_until(asked, timeout, "a question in the inbox", said=self.log)[0]

    def job(self) -> dict:
        rows = collect(self.lead)["jobs"]
        assert len(rows) == 1, rows
        return rows[0]

    def wait_state(self, state: str, timeout: float = 60) -> dict:
        return wait_until(lambda: (row := self.job())["state"] == state and row, timeout, f"the job to be {state}",
                          said=lambda: f"{self.job()}\n{self.log()}")

    def log(self) -> str:
        path = self.lead.repo.state_dir / "engine-test.log"
        return path.read_text() if path.exists() else ""


def start_asking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, question: str, timeout: int = 600
                 ) -> Iterator[Asking]:
    repo = make_repo(tmp_path / "lead", {"README.md": "sample\n",
                                         ".magnum/settings.toml": SETTINGS.format(timeout=timeout)})
    plan = tmp_path / "plan.yaml"
    plan.write_text("task: Name the thing\npieces:\n  - id: namer\n    task: Ask the lead for a name.\n"
                    f"    agent: shell\n    run: git balanced ask '{question}' > answer.txt\n")
    assert balanced(repo, "allow", "--yes").code == 0
    assert balanced(repo, "plan", str(plan), "--start").code == 0
    monkeypatch.chdir(repo)
    lead = open_lead(str(repo))
    log = open(lead.repo.state_dir / "engine-test.log", "wb")
    engine = subprocess.Popen([sys.executable, "-m", "git_balanced.cli", "engine"], cwd=repo, stdout=log,
                              stderr=subprocess.STDOUT)
    try:
        yield Asking(lead, engine)
    finally:
        engine.send_signal(signal.SIGTERM)
        engine.wait(timeout=30)
        log.close()
        for job in all_jobs(lead.repo).values():  # a worker still asking must not outlive the test
            if job.state == "running":
                balanced(repo, "stop", job.id)


@pytest.fixture
def asking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Asking]:
    yield from start_asking(tmp_path, monkeypatch, "Which name should the module have?")


@pytest.fixture
def asking_briefly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Asking]:
    yield from start_asking(tmp_path, monkeypatch, "Which name should the module have?", timeout=1)


def test_a_worker_asks_and_prints_the_answer(asking: Asking) -> None:
    q = asking.question()
    qid = q["qid"]
    assert q["text"] == (f"namer asks ({qid}): Which name should the module have? · answer: "
                         f"git balanced answer {qid} TEXT")
    assert asking.job()["reason"] == "asked its lead", "the board says the worker waits on its lead"
    ran = balanced(asking.root, "answer", qid, "Call it calc.")
    assert ran.code == 0, ran.err
    assert ran.out.strip() == f"Answered {qid} (namer): Call it calc."
    asking.wait_state("landed")
    assert git(asking.root, "show", "main:answer.txt") == "Call it calc.", "ask printed the answer"
    job = all_jobs(asking.lead.repo)[asking.job()["id"]]
    assert (job.asked, job.answered, job.answered_by) == (None, qid, "its lead")
    late = balanced(asking.root, "answer", qid, "No, call it abacus.")
    assert late.code == 1
    assert f"Too late: {qid} was not changed, as it was answered already" in late.err
    assert "by its lead: Call it calc." in late.err
    assert questions.find(asking.lead.repo, qid)["fields"]["answer"] == "Call it calc.", "the first answer counts"


def test_unanswered_it_comes_to_you_too(asking_briefly: Asking) -> None:
    q = asking_briefly.question()
    qid = q["qid"]
    wait_until(lambda: any(item.get("qid") == qid for item in collect(asking_briefly.lead)["now"]), 30,
               "the unanswered question to come to you")
    board = render(collect(asking_briefly.lead))
    assert f"? namer asks: Which name should the module have? · git balanced answer {qid} TEXT" in board, board
    said = [e["text"] for e in entries(asking_briefly.lead.repo, asking_briefly.lead.branch)]
    assert (f"{qid} from namer was not answered for 1 second, so it waits for you too (the first answer counts): "
            "Which name should the module have?") in said
    ran = balanced(asking_briefly.root, "answer", qid, "calc")
    assert ran.code == 0, ran.err
    asking_briefly.wait_state("landed")
    assert questions.find(asking_briefly.lead.repo, qid)["fields"]["answered_by"] == "you"
    assert not any(item.get("qid") == qid for item in collect(asking_briefly.lead)["now"]), "answered, it left Now"


def test_the_lead_passes_a_question_to_you(asking: Asking) -> None:
    qid = asking.question()["qid"]
    ran = balanced(asking.root, "pass", qid)
    assert ran.code == 0, ran.err
    assert f"Passed {qid} (namer) to you" in ran.out
    assert any(item.get("qid") == qid for item in collect(asking.lead)["now"])
    again = balanced(asking.root, "pass", qid)
    assert again.code == 1 and "it is passed already" in again.err
    assert balanced(asking.root, "answer", qid, "--allow").code == 0
    asking.wait_state("landed")
    assert git(asking.root, "show", "main:answer.txt") == "allowed"


def test_a_question_of_a_stopped_worker_is_closed(asking: Asking) -> None:
    qid = asking.question()["qid"]
    assert balanced(asking.root, "stop", asking.job()["id"]).code == 0
    wait_until(lambda: questions.find(asking.lead.repo, qid)["state"] == "closed", 30, "the question to close")
    q = questions.find(asking.lead.repo, qid)
    assert q["state"] == "closed" and q["fields"]["closed_reason"].startswith("its worker "), q
    late = balanced(asking.root, "answer", qid, "calc")
    assert late.code == 1 and "its worker no longer waits" in late.err


def test_answers_are_checked(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "lead")
    both = balanced(repo, "answer", "q2345a", "--allow", "--deny")
    assert both.code == 2 and "Give --allow or --deny, not both." in both.err
    none = balanced(repo, "answer", "q2345a")
    assert none.code == 2 and "Give an answer: TEXT, --allow or --deny." in none.err
    unknown = balanced(repo, "answer", "q2345a", "yes")
    assert unknown.code == 1 and "There is no question q2345a." in unknown.err
    assert "git balanced inbox" in unknown.err


def test_ask_outside_a_worker_says_what_it_is_for(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "lead")
    ran = balanced(repo, "ask", "Anyone there?")
    assert ran.code == 1
    assert "`git balanced ask` is for workers, and GIT_BALANCED_JOB is not set here." in ran.err
    ran = balanced(repo, "ask", "Anyone?", env={"GIT_BALANCED_LEAD": None, "GIT_BALANCED_JOB": "1m8k0000000000x"})
    assert ran.code == 1 and "GIT_BALANCED_LEAD is not set" in ran.err
