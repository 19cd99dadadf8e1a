"""The engine's share of questions: relaying remote workers' questions and delivering answers."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from git_balanced import jobs as J
from git_balanced import ui
from git_balanced.channel import inbox
from git_balanced.channel.questions import (
    all_questions,
    append_if,
    ask,
    close,
    find,
    pass_on,
    ref_of,
    words_for,
)
from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.lead import Lead
from git_balanced.vocab import AT_WORK

if TYPE_CHECKING:
    from git_balanced.settings import Settings


def relay(lead: Lead, remote: list[tuple[J.Job, dict[str, Any]]]) -> None:
    """Carry the questions of running workers on other machines (their runner's status) to the lead's inbox,
    and answers back to where their `git balanced ask` waits; each once, on the engine's pass."""
    from git_balanced.engine import workers

    for job, st in remote:
        asked = st.get("questions") or []
        try:
            if asked:
                workers.mark_forwarded(lead, job, forward(lead.repo, job.id, asked))
        except BalancedError as exc:  # that machine, or that question, is tried again on the next pass
            ui.note(f"{job.piece}: its question waits for the next pass: {exc.message}")
    asking = {job.id: job for job, _ in remote if job.ever_asked}  # jobs that never asked have nothing due
    for qid, q in sorted(all_questions(lead.repo).items()) if asking else []:
        f = q["fields"]
        due = [n for n in f.get("remote_ns") or [] if n not in (f.get("delivered") or [])]
        if q["state"] != "answered" or not due or f.get("job") not in asking:
            continue
        try:
            for n in due:
                workers.deliver_answer(lead, asking[str(f["job"])], n, str(f.get("answer") or ""), f.get("decision"),
                                       qid)
        except BalancedError as exc:
            ui.note(f"{f.get('piece')}: the answer to {qid} waits for the next pass: {exc.message}")
            continue
        append_if(lead.repo, ref_of(qid), lambda cur: None, "delivered", f"{qid} delivered to its worker",
                  {"delivered": sorted({*(f.get("delivered") or []), *due})}, None)


def forward(repo: Repo, job_id: str, asked: list[dict[str, Any]]) -> list[int]:
    """Post a remote worker's questions (`{"n", "text", "kind", "tool"}`, numbered by its runner) as questions of
    its job, each number once, and remember each number's question (`remote_ns`); the numbers now posted. A
    `command` or `edit` is one its agent's PreToolUse hook asks, answered with --allow or --deny."""
    known = {n for q in all_questions(repo).values() if q["fields"].get("job") == job_id
             for n in q["fields"].get("remote_ns") or []}
    done = []
    for item in asked:
        n = int(item["n"])
        if n not in known:
            kind = str(item["kind"]) if item.get("kind") in ("command", "edit", "plan") else "question"
            tool = str(item["tool"]) if kind != "question" and item.get("tool") else None
            qid = ask(repo, job_id, str(item.get("text") or ""), kind=kind, tool=tool)  # the same open one again
            ns = sorted({*((find(repo, qid) or {}).get("fields", {}).get("remote_ns") or []), n})
            append_if(repo, ref_of(qid), lambda cur: None, "forwarded", f"{qid} is question {n} of its worker",
                      {"remote_ns": ns}, None)
        done.append(n)
    return done


def engine_tick(lead: Lead, settings: Settings) -> None:
    """Unanswered for ask_timeout, a question comes to you too (one passed on to a chief that runs waits on the
    chief's own time); one whose worker ended is closed."""
    timeout = float(settings.balanced.ask_timeout)
    now = time.time()
    jobs = None
    chief_here: bool | None = None
    for qid, q in sorted(all_questions(lead.repo).items()):
        f = q["fields"]
        if f.get("lead") != lead.branch or q["state"] not in ("open", "passed"):
            continue
        if jobs is None:
            jobs = J.all_jobs(lead.repo)
        job = jobs.get(str(f.get("job")))
        if job is None or job.state not in AT_WORK:  # its worker may still hear an answer
            close(lead.repo, qid, f"its worker {job.state if job else 'is gone'}")
            continue
        if f.get("chief_at") and chief_here is None:
            from git_balanced.channel.presence import chief_here as here

            chief_here = here(lead.repo)
        if f.get("chief_at") and chief_here:
            continue  # with a running chief: its own time runs (channel/tochief.py)
        if q["state"] == "open" and now - float(f.get("asked_at") or now) >= timeout:
            if pass_on(lead.repo, qid, f"unanswered for {words_for(timeout)}"):
                inbox.post(lead.repo, lead.branch,
                           f"{qid} from {f.get('piece')} was not answered for {words_for(timeout)}, so it waits for "
                           f"you too (the first answer counts): {f.get('text')}", kind="passed", qid=qid)
