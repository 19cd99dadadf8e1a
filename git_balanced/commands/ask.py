"""`git balanced ask`, `answer` and `pass`."""

from __future__ import annotations

from git_balanced import ui
from git_balanced.channel.questions import (
    answer,
    ask,
    checked_answer,
    pass_to_you,
    shown_answer,
    wait,
    worker_context,
)
from git_balanced.errors import BalancedError
from git_balanced.lead import open_lead


def ask_command(text: str) -> int:
    """Ask the lead from inside a worker and print its answer."""
    repo, job_id, branch = worker_context()
    qid = ask(repo, job_id, text, lead_branch=branch)
    ui.note(f"Asked the lead ({qid}); waiting for the answer…")
    q = wait(repo, qid)
    assert q is not None
    if q["state"] == "closed":
        raise BalancedError(f"{qid} was closed without an answer: {q['fields'].get('closed_reason')}.")
    ui.say(shown_answer(q["fields"]))
    return 0


def answer_command(qid: str, text: str | None, *, allow: bool, deny: bool) -> int:
    """Answer a question with text, or allow or deny what it asks (with an optional reason)."""
    decision = checked_answer(qid, text, allow, deny)
    lead = open_lead()
    f = answer(lead.repo, qid, text, decision)
    ui.say(f"Answered {qid} ({f.get('piece')}): {shown_answer(f)}")
    return 0


def pass_command(qid: str) -> int:
    """Hand a question to you; it shows under Now on the board."""
    lead = open_lead()
    q = pass_to_you(lead.repo, qid)
    ui.say(f"Passed {qid} ({q['fields'].get('piece')}) to you: it shows under Now on `git balanced board`.")
    return 0
