"""`git balanced ask`, `answer` and `pass`."""

from __future__ import annotations

from git_balanced import ui
from git_balanced.channel.questions import (
    answer,
    ask,
    find,
    known_question,
    late_answer,
    pass_on,
    shown_answer,
    wait,
    worker_context,
)
from git_balanced.errors import BalancedError, UsageError
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
    if allow and deny:
        raise UsageError("Give --allow or --deny, not both.", hint=f"git balanced answer {qid} --deny \"REASON\"")
    if not (allow or deny or (text and text.strip())):
        raise UsageError("Give an answer: TEXT, --allow or --deny.", hint=f"git balanced answer {qid} \"TEXT\"")
    lead = open_lead()
    f = answer(lead.repo, qid, text, "allow" if allow else "deny" if deny else None)
    ui.say(f"Answered {qid} ({f.get('piece')}): {shown_answer(f)}")
    return 0


def pass_command(qid: str) -> int:
    """Hand a question to you; it shows under Now on the board."""
    lead = open_lead()
    q = known_question(lead.repo, qid)
    if not pass_on(lead.repo, qid, "passed on by the lead"):
        late = late_answer(find(lead.repo, qid))
        state = q["state"] if late is None else "settled"
        raise BalancedError(f"{qid} was not passed on: " + (late or f"it is {state} already") + ".",
                            hint="`git balanced board` shows what waits on you.")
    ui.say(f"Passed {qid} ({q['fields'].get('piece')}) to you: it shows under Now on `git balanced board`.")
    return 0
