"""What the app's keys do, each through the function the command of the same name calls: `answer --allow`
(channel/now.answer_many), `answer ID TEXT`, `correct`, `not-now`, `go-ahead`, `ship` (landing/review), `stop`,
`retry` (engine/control) and `land` (landing/named and its queue). Each returns what was done, in words."""

from __future__ import annotations

from git_balanced.channel import now, questions
from git_balanced.engine import reach
from git_balanced.engine.control import retry_job, stop_job
from git_balanced.errors import BalancedError
from git_balanced.landing.review import Review, push_reviewed, refuse_to_ship, review
from git_balanced.lead import Lead


def ask_kind(lead: Lead, qid: str) -> str:
    """What a question asks for: `command`, `edit` or `plan` (allowed or denied), or `question` (words)."""
    q = questions.find(lead.repo, qid)
    return str((q or {}).get("fields", {}).get("kind") or "question")


def decide(lead: Lead, qids: list[str], decision: str, reason: str = "") -> str:
    """Allow (or deny) these questions at once, as `answer --allow ID...` does."""
    done, missed = now.answer_many(lead, qids, decision, reason)
    said = f"{'Allowed' if decision == 'allow' else 'Denied'} {len(done)}: " + ", ".join(
        f"{f['qid']} ({f.get('piece')})" for f in done)
    if missed:
        raise BalancedError(said + f"; {len(missed)} not answered: " + "; ".join(missed),
                            hint="the first answer counts.")
    return said


def answer(lead: Lead, qid: str, text: str) -> str:
    """Answer a question in words, as `answer ID TEXT` does."""
    decision = questions.checked_answer(qid, text, False, False)
    f = questions.answer(lead.repo, qid, text, decision)
    return f"Answered {qid} ({f.get('piece')}): {questions.shown_answer(f)}"


def correct(lead: Lead, rid: str, text: str) -> str:
    r = now.correct(lead, text, rid)
    return f"Corrected {r['kind']} {r['id']}; the lead hears it in its inbox."


def not_now(lead: Lead, rid: str) -> str:
    r = now.not_now(lead, rid)
    return f"Not now: {r['kind']} {r['id']}; the lead hears it in its inbox."


def go_ahead(lead: Lead, rid: str) -> str:
    r = now.go_ahead(lead, rid)
    return f"Go ahead: idea {r['id']}; the lead hears it in its inbox."


def to_ship(lead: Lead) -> Review:
    """What `ship` would push (the check run again where no note says it passed); refused as `ship` refuses."""
    r = review(lead)
    if not r.commits:
        raise BalancedError(f"Nothing to ship: {r.upstream} has everything {r.branch} has.",
                            hint="land work first.")
    refuse_to_ship(r)
    return r


def ship(lead: Lead, rid: str, r: Review) -> str:
    """Push what `to_ship` showed (the person said yes) and answer the review."""
    return push_reviewed(lead, r, now.row(lead, rid))


def stop(lead: Lead, job: str) -> str:
    j, kept = stop_job(lead, job)
    return f"Stopped {j.piece} ({j.id})." + (f" Its branch {kept} is kept." if kept else "")


def retry(lead: Lead, job: str) -> str:
    j, new = retry_job(lead, job)
    return f"{j.piece} tries again as job {new} (attempt {j.attempt + 1})."


def tell(lead: Lead, job: str, text: str) -> str:
    """Leave a line for a running agent worker, as `tell JOB TEXT` does."""
    j = reach.tell(lead, job, text)
    return f"Told {j.piece}: its agent reads it at its next tool call."


def land(lead: Lead, job: str) -> str:
    """Check and land one worker's branch through the landing queue, as `land JOB` does."""
    from git_balanced.landing.candidates import record
    from git_balanced.landing.named import resolve
    from git_balanced.landing.queue import Queue

    verdicts = Queue(lead).run(resolve(lead, [job], False))
    record(lead, verdicts)
    return "; ".join(f"{v.branch}: {v.status}" + (f" ({v.reason})" if v.reason else "") for v in verdicts) \
        or "Nothing to land."


def question_of(lead: Lead, job: str) -> str:
    """The question a worker waits on (open, or passed to you), in words, or ''."""
    for qid, q in questions.all_questions(lead.repo).items():
        f = q["fields"]
        if f.get("job") == job and q["state"] in ("open", "passed"):
            return f"{f.get('text')} ({qid}, {q['state']})"
    return ""
