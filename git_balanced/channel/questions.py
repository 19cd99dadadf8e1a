"""Questions from workers to their lead: `ask` posts one and waits, `answer` and `pass` settle it.

Each question is a chain on `refs/balanced/questions/<id>` (asked, passed, answered, closed); its words go
to the lead's inbox, and the job's own chain says `asked` while it waits. Settling is compare-and-swap on
the question's ref, so of two answers racing the first one counts and the second hears it came too late.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Callable
from typing import Any

from git_balanced.channel import inbox, presence
from git_balanced.errors import BalancedError, UsageError
from git_balanced.git import Repo
from git_balanced.job_events import Answered, Asked, record
from git_balanced.lead import Lead, settings_at
from git_balanced.state import cache
from git_balanced.state.events import Event, node_id, write_event_commit
from git_balanced.state.fold import fold
from git_balanced.state.refs import read_chain, update_with_retry
from git_balanced.ui import clock

PREFIX = "refs/balanced/questions/"
SETTLED = ("answered", "closed")
_ALPHABET = "23456789abcdefghjkmnpqrstvwxyz"  # short ids a person types: no 0/o, 1/l/i
POLL = 0.5
ANSWERED_WORD = {"allow": "allowed", "deny": "denied"}  # what an answer with a decision did; words are `answered`


def ref_of(qid: str) -> str:
    return PREFIX + qid


def append_if(repo: Repo, ref: str, refuse: Callable[[dict[str, Any] | None], str | None], event: str,
              subject: str, data: dict[str, Any], state: str | None) -> tuple[bool, dict[str, Any] | None, str]:
    """Append an event only while `refuse(current state)` says nothing against it, compare-and-swap on the
    tip that was judged: (appended, the state it was judged on, the refusal)."""
    judged: list[Any] = [None, ""]

    def build(tip: str | None) -> str | None:
        current = fold(read_chain(repo, tip)) if tip else None
        judged[:] = [current, refuse(current)]
        if judged[1]:
            return None
        ev = Event(event=event, data=data, state=state, lamport=(current or {}).get("lamport", 0) + 1,
                   node=node_id(repo), time=time.time())
        return write_event_commit(repo, ev, subject, [tip] if tip else [])

    made = update_with_retry(repo, ref, build, f"balanced: {event}")
    return made is not None, judged[0], "" if made else str(judged[1])


def all_questions(repo: Repo) -> dict[str, dict[str, Any]]:
    """Every question, folded, by id."""
    return cache.read_all(repo, "questions")


def find(repo: Repo, qid: str) -> dict[str, Any] | None:
    tip = repo.read_ref(ref_of(qid))
    return fold(read_chain(repo, tip)) if tip else None


def words_for(seconds: float) -> str:
    if seconds >= 60 and seconds % 60 == 0:
        n = int(seconds // 60)
        return f"{n} minute{'s' if n != 1 else ''}"
    n = int(seconds)
    return f"{n} second{'s' if n != 1 else ''}"


# -- asking --------------------------------------------------------------------------------------------
def ask(repo: Repo, job_id: str, text: str, *, kind: str = "question", tool: str | None = None,
        lead_branch: str | None = None) -> str:
    """Post a question of a job to its lead and return its id; the same open question asked again is the
    same question (an agent whose command timed out may ask twice)."""
    from git_balanced import jobs as J  # here, not above: the board reads questions without pydantic

    text = text.strip()
    if not text:
        raise UsageError("A question needs some text.", hint='git balanced ask "Which database should I use?"')
    job = J.one(repo, job_id)
    if job is None:
        raise BalancedError(f"There is no job {job_id} in {repo.root}.",
                            hint="run `git balanced ask` from inside a worker that git balanced started.")
    branch = lead_branch or job.lead
    if not branch:
        raise BalancedError(f"The job {job_id} names no lead's branch.", hint="this is a bug: please report it.")
    for qid, q in all_questions(repo).items():
        f = q["fields"]
        if q["state"] in ("open", "passed") and f.get("job") == job_id and f.get("text") == text \
                and f.get("kind") == kind:
            return qid
    data = {"job": job_id, "piece": job.piece, "lead": branch, "text": text, "kind": kind, "tool": tool,
            "asked_at": time.time()}
    while True:
        qid = "q" + "".join(secrets.choice(_ALPHABET) for _ in range(5))
        made, _, _ = append_if(repo, ref_of(qid), lambda cur: "taken" if cur else None, "asked",
                               f"{job.piece} asks: {text}", {**data, "qid": qid}, "open")
        if made:
            break
    record(repo, job_id, Asked(asked=qid, asked_text=text), f"{job.piece}: asked its lead ({qid})")
    if kind == "question":
        words = f"{job.piece} asks ({qid}): {text} · answer: git balanced answer {qid} TEXT"
    elif kind == "plan":
        words = (f"{job.piece} shows its plan before it starts ({qid}): {text} · answer: git balanced answer {qid} "
                 "--allow (go ahead) or --deny LINE (send it back with a line)")
    else:
        words = (f"{job.piece} asks to {'edit' if kind == 'edit' else 'run'} ({qid}): {text} · answer: "
                 f"git balanced answer {qid} --allow|--deny [REASON]")
    inbox.post(repo, branch, words, kind="question", qid=qid, job=job_id, question=text, ask_kind=kind)
    at_once(repo, branch, qid, job.piece, text)
    return qid


def at_once(repo: Repo, branch: str, qid: str, piece: str, text: str) -> bool:
    """When a lead agent was known here and none can answer now (no headless lead runs, no session of it was
    seen within ask_timeout), the question comes to you at once instead of waiting ask_timeout."""
    if presence.headless_record(repo, branch) is None and presence.seen_at(repo, branch) is None:
        return False  # no lead agent was ever here: whoever reads the inbox answers, as ever
    try:
        within = float(settings_at(repo, branch).balanced.ask_timeout)
    except BalancedError:
        within = 600.0
    why = presence.cannot_answer(repo, branch, within)
    if why is None or not pass_on(repo, qid, why):
        return False
    inbox.post(repo, branch, f"{qid} from {piece} waits for you at once, as {why} (the first answer counts): {text}",
               kind="passed", qid=qid)
    return True


def wait(repo: Repo, qid: str, *, timeout: float | None = None) -> dict[str, Any] | None:
    """Wait for a question to be settled; its folded state, or None when `timeout` passed first."""
    end = None if timeout is None else time.monotonic() + timeout
    seen = None
    while True:
        tip = repo.read_ref(ref_of(qid))
        if tip != seen:
            seen = tip
            q = fold(read_chain(repo, tip)) if tip else None
            if q is None:
                raise BalancedError(f"The question {qid} is gone from {repo.root}.",
                                    hint="someone deleted its ref; ask again.")
            if q["state"] in SETTLED:
                return q
        if end is not None and time.monotonic() >= end:
            return None
        time.sleep(POLL)


# -- settling -------------------------------------------------------------------------------------------
def known_question(repo: Repo, qid: str) -> dict[str, Any]:
    q = find(repo, qid)
    if q is None:
        raise BalancedError(f"There is no question {qid}.",
                            hint="`git balanced inbox` shows the questions; their ids look like q7k2mx.")
    return q


def late_answer(q: dict[str, Any] | None) -> str | None:
    if q is None or q["state"] not in SETTLED:
        return None
    f = q["fields"]
    if q["state"] == "closed":
        return f"its worker no longer waits: {f.get('closed_reason', 'it ended')}"
    when = clock(float(f.get("answered_at") or 0))
    return f"it was answered already at {when} by {f.get('answered_by', 'its lead')}: {shown_answer(f)}"


def shown_answer(f: dict[str, Any]) -> str:
    """An answer in words: `allowed`, `denied: REASON`, or the text."""
    decision, text = f.get("decision"), str(f.get("answer") or "")
    if decision:
        return f"{'allowed' if decision == 'allow' else 'denied'}{': ' + text if text else ''}"
    return text


def answer(repo: Repo, qid: str, text: str | None, decision: str | None, *, by: str | None = None) -> dict[str, Any]:
    """Settle a question with an answer; the first one counts, a later one raises `too late`. `by` names who
    answered when it is not the lead or you (the chief)."""
    q = known_question(repo, qid)
    by = by or ("you" if q["state"] == "passed" else "its lead")
    data = {"answer": (text or "").strip(), "decision": decision, "answered_by": by, "answered_at": time.time()}
    made, cur, why = append_if(repo, ref_of(qid), late_answer, "answered", f"{qid} answered", data, "answered")
    if not made:
        raise BalancedError(f"Too late: {qid} was not changed, as {why}.", hint="the first answer counts.")
    f = {**(cur or q)["fields"], **data}
    record(repo, str(f["job"]), Answered(answered=qid, answered_by=by, answered_decision=decision),
           f"{f.get('piece')}: {ANSWERED_WORD.get(decision or '', 'answered')} by {by} ({qid})")
    inbox.post(repo, str(f["lead"]), f"{qid} ({f.get('piece')}) answered by {by}: {shown_answer(f)}",
               kind="answer", qid=qid, job=f["job"])
    return f


def pass_on(repo: Repo, qid: str, why: str) -> bool:
    """Hand an open question to you (the person): it shows under Now. False when it was no longer open."""
    made, _, _ = append_if(repo, ref_of(qid), lambda cur: None if cur and cur["state"] == "open" else "not open",
                           "passed", f"{qid} passed on: {why}", {"passed_why": why, "passed_at": time.time()},
                           "passed")
    return made


def close(repo: Repo, qid: str, why: str) -> bool:
    made, _, _ = append_if(repo, ref_of(qid), lambda cur: late_answer(cur) or (None if cur else "missing"), "closed",
                           f"{qid} closed: {why}", {"closed_reason": why}, "closed")
    return made


# -- workers on other machines: store and forward -------------------------------------------------------


# -- the engine's turn and the board --------------------------------------------------------------------


def board_items(lead: Lead) -> dict[str, list[dict[str, Any]]]:
    """Questions passed to you, under Now."""
    now = []
    for qid, q in sorted(all_questions(lead.repo).items(), key=lambda kv: kv[1]["created"] or 0):
        f = q["fields"]
        if f.get("lead") != lead.branch or q["state"] != "passed":
            continue
        how = {"question": "TEXT", "plan": "--allow|--deny LINE"}.get(str(f.get("kind")), "--allow|--deny [REASON]")
        verb = {"question": "asks", "command": "asks to run", "edit": "asks to edit",
                "plan": "shows its plan"}.get(str(f.get("kind")), "asks")
        now.append({"text": f"? {f.get('piece')} {verb}: {f.get('text')} · git balanced answer {qid} {how}",
                    "qid": qid, "kind": "question"})
    return {"now": now}


# -- commands -------------------------------------------------------------------------------------------
def worker_context() -> tuple[Repo, str, str | None]:
    """The lead's repository, this worker's job and the lead's branch, from what the runner set."""
    job_id = os.environ.get("GIT_BALANCED_JOB", "").strip()
    if not job_id:
        raise BalancedError("`git balanced ask` is for workers, and GIT_BALANCED_JOB is not set here.",
                            hint="a worker started by git balanced has it; the lead answers with "
                                 "`git balanced answer ID TEXT`.")
    where = os.environ.get("GIT_BALANCED_LEAD", "").strip()
    if not where:
        raise BalancedError("GIT_BALANCED_LEAD is not set, so the lead's repository is unknown here.",
                            hint="on another machine, the `git balanced` first on a worker's PATH (its runner's) "
                                 "carries questions to the lead; this one is not it.")
    if not os.path.isdir(where):
        raise BalancedError(f"The lead's repository {where} is not on this machine.",
                            hint="on another machine, the `git balanced` first on a worker's PATH (its runner's) "
                                 "carries questions to the lead; this one is not it.")
    return Repo.discover(where), job_id, os.environ.get("GIT_BALANCED_BRANCH") or None


def checked_answer(qid: str, text: str | None, allow: bool, deny: bool) -> str | None:
    """The decision an answer makes (`allow`, `deny` or None for words), refusing one that says nothing."""
    if allow and deny:
        raise UsageError("Give --allow or --deny, not both.", hint=f"git balanced answer {qid} --deny \"REASON\"")
    if not (allow or deny or (text and text.strip())):
        raise UsageError("Give an answer: TEXT, --allow or --deny.", hint=f"git balanced answer {qid} \"TEXT\"")
    return "allow" if allow else "deny" if deny else None


def pass_to_you(repo: Repo, qid: str) -> dict[str, Any]:
    """Hand an open question to you, or say why it was not (answered, closed, passed already); returns it.
    While a chief runs over this repository, it goes to the chief first (`to_chief` in its fields): the chief
    answers it or hands it to you, and unanswered by the chief it comes to you (channel/tochief.py)."""
    q = known_question(repo, qid)
    if q["state"] == "open" and "chief_at" not in q["fields"] and presence.chief_here(repo):
        made, cur, _ = append_if(repo, ref_of(qid), lambda c: None if c and c["state"] == "open" else "not open",
                                 "to the chief", f"{qid} passed on to the chief", {"chief_at": time.time()}, None)
        if made:
            return {**(cur or q), "fields": {**(cur or q)["fields"], "chief_at": time.time()}, "to_chief": True}
    if not pass_on(repo, qid, "passed on by the lead"):
        late = late_answer(find(repo, qid))
        state = q["state"] if late is None else "settled"
        raise BalancedError(f"{qid} was not passed on: " + (late or f"it is {state} already") + ".",
                            hint="`git balanced board` shows what waits on you.")
    return q
