"""`git balanced ask`, `answer` and `pass`."""

from __future__ import annotations

import re

from git_balanced import ui
from git_balanced.channel import now
from git_balanced.channel.questions import (
    answer,
    ask,
    pass_to_you,
    ref_of,
    shown_answer,
    wait,
    worker_context,
)
from git_balanced.errors import BalancedError, UsageError
from git_balanced.lead import Lead, open_lead


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


def answer_command(args: list[str], *, allow: bool, deny: bool) -> int:
    """Answer a question with text, or allow or deny what it asks (with an optional reason); with --allow
    or --deny, several questions at once, each named by id or by its number on the board."""
    first = args[0] if args else "ID"
    if allow and deny:
        raise UsageError("Give --allow or --deny, not both.", hint=f"git balanced answer {first} --deny \"REASON\"")
    if (allow or deny) and _across(args):
        return _answer_across(args, "allow" if allow else "deny")
    if not (allow or deny):
        if len(args) > 2:
            raise UsageError("One question takes one answer.", hint=f"quote it: git balanced answer {first} \"TEXT\"")
        text = args[1] if len(args) == 2 else None
        if not (text and text.strip()):
            raise UsageError("Give an answer: TEXT, --allow or --deny.", hint=f"git balanced answer {first} \"TEXT\"")
        if _across([first]):  # PROJECT.N: in that project
            from git_balanced.chief import allnow

            ui.say(allnow.answer_words(first, text))
            return 0
        lead = open_lead()
        f = answer(lead.repo, _question(lead, first), text, None)
        ui.say(f"Answered {f['qid']} ({f.get('piece')}): {shown_answer(f)}")
        return 0
    lead = open_lead()
    decision = "allow" if allow else "deny"
    names, reason = list(args), None
    if len(names) > 1 and not _names_one(lead, names[-1]):
        reason = names.pop()
    if len(names) == 1:
        f = answer(lead.repo, _question(lead, names[0]), reason, decision)
        ui.say(f"Answered {f['qid']} ({f.get('piece')}): {shown_answer(f)}")
        return 0
    done, missed = now.answer_many(lead, names, decision, reason or "")
    for f in done:
        ui.say(f"Answered {f['qid']} ({f.get('piece')}): {shown_answer(f)}")
    if missed:
        raise BalancedError(f"{len(missed)} of {len(done) + len(missed)} not answered:\n"
                            + "\n".join("  " + m for m in missed), hint="the first answer counts.")
    return 0


def _across(args: list[str]) -> bool:
    """Whether the names are across projects (`web.3 ios.1`, as `now --all` shows them)."""
    from git_balanced.chief.allnow import split

    return any(split(a) for a in args)


def _answer_across(args: list[str], decision: str) -> int:
    """Allow or deny rows of several projects at once, each named PROJECT.N; a last word that names none is
    the reason."""
    from git_balanced.chief import allnow

    names, reason = list(args), ""
    if len(names) > 1 and allnow.split(names[-1]) is None and not names[-1].isdigit() \
            and not ID_FORM.fullmatch(names[-1]):
        reason = names.pop()
    plain = [n for n in names if allnow.split(n) is None]
    if plain:
        raise BalancedError(f"{', '.join(plain)} names no project: across projects, name every row as PROJECT.N.",
                         hint="`git balanced now --all` shows each row's name (web.3).")
    said, missed = allnow.answer_many(names, decision, reason)
    for line in said:
        ui.say(line)
    if missed:
        raise BalancedError(f"{len(names) - len(said)} of {len(names)} not answered:\n"
                            + "\n".join("  " + m for m in missed),
                            hint="the first answer counts; `git balanced now --all` shows what still waits.")
    return 0


ID_FORM = re.compile(r"[qri][23456789abcdefghjkmnpqrstvwxyz]{5}")  # a question's, a review's, an idea's id


def _names_one(lead: Lead, name: str) -> bool:
    """Whether `name` names something under Now or a question, or has an id's form (a mistyped id is refused,
    never taken for the reason after the ids)."""
    return name.isdigit() or bool(ID_FORM.fullmatch(name)) or bool(
        lead.repo.read_ref(ref_of(name)) or lead.repo.read_ref(now.ref_of(name)))


def _question(lead: Lead, name: str) -> str:
    """The question id a board number names, or `name` itself."""
    if not name.isdigit():
        return name
    item = now.resolve(lead, name)
    if item["kind"] != "question":
        raise BalancedError(f"{name} is {'a review' if item['kind'] == 'review' else 'an idea'}, not a worker's "
                            "question.", hint="answer it with ship, correct, not-now or go-ahead.")
    return str(item["id"])


def pass_command(qid: str) -> int:
    """Hand a question to you; it shows under Now on the board."""
    lead = open_lead()
    q = pass_to_you(lead.repo, qid)
    ui.say(f"Passed {qid} ({q['fields'].get('piece')}) to you: it shows under Now on `git balanced board`.")
    return 0
