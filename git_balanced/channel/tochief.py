"""A project's side of the chief: the questions its lead passed on to the chief, and what the chief does with
them. The chief runs `git balanced chief held --json` in each project every few seconds (here, or on its
machine over SSH): that marks the chief seen (so the lead's `pass` hands the next question to the chief, not to
you), hands you what the chief left unanswered too long, and lists what waits on the chief.
"""

from __future__ import annotations

import time
from typing import Any

from git_balanced.channel import inbox, now, presence
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
