"""A project's side of the chief: the questions its lead passed on to the chief, and what the chief does with
them. The running chief reads `held` in each project (in its own process for one here; for one on a machine,
`git balanced chief held --json --since STAMP --wait SECONDS` there, over SSH): that marks the chief seen (so the
lead's `pass` hands the next question to the chief, not to you), hands you what the chief left unanswered too
long, and lists what waits on the chief. `stamp` says cheaply whether anything `held` reads changed since.
"""

from __future__ import annotations

import time
from typing import Any

from git_balanced.channel import inbox, now, presence
from git_balanced.channel.questions import PREFIX as QUESTIONS
from git_balanced.channel.questions import all_questions, answer, known_question, pass_on, words_for
from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.lead import Lead

SAYS = "Your chief says: "


def held(lead: Lead, pass_after: float) -> dict[str, Any]:
    """What the chief looks at in this project: `questions`, those waiting on it, oldest first (those it held
    `pass_after` seconds or more come to you, the lead hears it, and are not listed), and `reviews`, the work
    the lead put to you, each with its number under Now (the chief may note one). Marks the chief seen here."""
    return {"questions": _questions(lead.repo, pass_after),
            "reviews": [{"row": str(i["n"]), "id": i["id"], "summary": i["row"].get("summary")}
                        for i in now.numbered(lead) if i["kind"] == "review"]}


SETTLE = 1.0  # a stamp whose folder changed less than this long ago may miss a write in the same clock tick
WATCH = 0.5  # how often `held_since` looks at the stamp while it waits
SEEN_EVERY = 30.0  # how often a wait marks the chief seen (it is taken as gone after presence.CHIEF_GONE_AFTER)


def stamp(repo: Repo) -> str:
    """What changes whenever a question or a row of Now is made, changes or goes, or HEAD moves to another branch:
    the times of their ref folders (of the folder above, while one is not made yet) and packed-refs' identity
    (Repo.refs_stamp), read without git. Empty when it cannot be told (a reftable) or is too fresh to trust (a
    write in the same clock tick would not move it): then `held` is read again."""
    parts = []
    for folder in (QUESTIONS, now.PREFIX):
        part = repo.refs_stamp(folder) or repo.refs_stamp("refs/balanced/") or repo.refs_stamp("refs/")
        if part is None:
            return ""
        parts.append(part)
    if time.time_ns() - max(p[0] for p in parts) < SETTLE * 1e9:
        return ""
    return ":".join(".".join(map(str, p)) for p in parts) + f":{repo.current_branch()}"


def due(found: dict[str, Any], pass_after: float) -> float:
    """When the first of the questions held in `found` has waited on the chief `pass_after` seconds (it then
    comes to you on the next read); infinity when none is held."""
    return min((float(q.get("chief_at") or 0) + pass_after for q in found.get("questions") or []),
               default=float("inf"))


def held_since(lead: Lead, pass_after: float, since: str, wait: float) -> dict[str, Any]:
    """`held`, with its `stamp`, when anything it reads changed since the stamp `since` (or a question held
    reached `pass_after`); else, after waiting up to `wait` seconds for that, `{"stamp", "unchanged": true}`.
    One call over SSH then carries the news the moment a lead passes a question on."""
    mark = stamp(lead.repo)
    found = held(lead, pass_after)
    if not mark or mark != since:
        return {**found, "stamp": mark}
    end = seen = time.monotonic()
    end += wait
    while time.time() < due(found, pass_after) and stamp(lead.repo) == mark:
        if time.monotonic() >= end:
            return {"stamp": mark, "unchanged": True}
        time.sleep(WATCH)
        if time.monotonic() - seen >= SEEN_EVERY:
            presence.mark_chief_seen(lead.repo)
            seen = time.monotonic()
    mark = _settled(lead.repo)
    return {**held(lead, pass_after), "stamp": mark}


def _settled(repo: Repo) -> str:
    """The stamp once a write just made is old enough to trust it (a few looks at most)."""
    for _ in range(int(2 * SETTLE / WATCH) + 1):
        mark = stamp(repo)
        if mark:
            return mark
        time.sleep(WATCH)
    return ""


def _questions(repo: Repo, pass_after: float) -> list[dict[str, Any]]:
    presence.mark_chief_seen(repo)
    at, out = time.time(), []
    for qid, q in sorted(all_questions(repo).items(), key=lambda kv: kv[1]["fields"].get("chief_at") or 0):
        f = q["fields"]
        if q["state"] != "open" or not f.get("chief_at"):
            continue
        if at - float(f["chief_at"]) >= pass_after:
            if pass_on(repo, qid, f"unanswered by the chief for {words_for(pass_after)}"):
                inbox.post(repo, str(f.get("lead")), f"{qid} from {f.get('piece')} was not answered by the chief for "
                           f"{words_for(pass_after)}, so it waits for you (the first answer counts): {f.get('text')}",
                           kind="passed", qid=qid)
            continue
        out.append({"qid": qid, "piece": f.get("piece"), "lead": f.get("lead"), "job": f.get("job"),
                    "kind": f.get("kind"), "text": f.get("text"), "asked_at": f.get("asked_at"),
                    "chief_at": f.get("chief_at")})
    return out


def _mine(repo: Repo, qid: str) -> dict[str, Any]:
    q = known_question(repo, qid)
    if not q["fields"].get("chief_at"):
        raise BalancedError(f"{qid} was not passed on to the chief.",
                            hint="the chief answers only what a lead passed on to it: `chief held` lists those.")
    return q


def reply(repo: Repo, qid: str, text: str) -> dict[str, Any]:
    """The chief's answer to a question passed on to it: its worker reads `Your chief says: TEXT`."""
    _mine(repo, qid)
    if not text.strip():
        raise BalancedError("The chief's answer is empty.", hint=f"answer {qid} with words the worker can act on.")
    return answer(repo, qid, SAYS + text.strip(), None, by="the chief")


def hand_to_you(repo: Repo, qid: str) -> dict[str, Any]:
    """The chief hands a question passed on to it to you: it shows under Now."""
    q = _mine(repo, qid)
    if not pass_on(repo, qid, "passed on by the chief"):
        raise BalancedError(f"{qid} was not passed on: it is {known_question(repo, qid)['state']} already.",
                            hint="the first answer counts; the board shows what waits on you.")
    f = q["fields"]
    inbox.post(repo, str(f.get("lead")), f"{qid} from {f.get('piece')} was passed on to you by the chief: "
               f"{f.get('text')}", kind="passed", qid=qid)
    return f
