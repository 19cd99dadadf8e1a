"""What the leads pass on, with the chief running: the chief's driver reads, in each project, the questions its
lead passed on to the chief and the reviews its lead put to you (channel/tochief.py `held`, which also marks the
chief seen and hands you what the chief held too long), and posts each new one once to the chief's inbox. Its
next turn is handed what came (`news`), as a headless lead is handed its inbox. The running driver reads only
what changed (chief/news.py); `gather` reads every project once.
"""

from __future__ import annotations

from typing import Any

from git_balanced.channel import inbox
from git_balanced.channel.tochief import held
from git_balanced.chief import home, there
from git_balanced.chief.projects import Project, list_projects
from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.hooks.agent import mark_read, unread
from git_balanced.lead import open_lead
from git_balanced.ui import clock

INBOX = "chief"


def held_in(project: Project, pass_after: float) -> dict[str, Any]:
    """What waits on the chief in one project, and its reviews (nothing when it cannot be read): read in this
    process for a project here, by `git balanced chief held --json` on its machine for one there."""
    try:
        if not project.machine:
            return held(open_lead(project.path), pass_after)
        found = there.data(project, ["chief", "held", "--json", "--pass-after", repr(float(pass_after))])
    except BalancedError:
        return {}
    return dict(found or {})


def _once(repo: Any, key: str, text: str, **data: Any) -> int:
    if inbox.keyed(repo, INBOX, key) is not None:
        return 0
    inbox.post(repo, INBOX, text, key=key, **data)
    return 1


def post(repo: Repo, p: Project, found: dict[str, Any]) -> int:
    """Post each question and review of `found` (one project's `held`) to the chief's inbox once; how many were
    new."""
    new = 0
    for q in found.get("questions") or []:
        new += _once(repo, f"{p.name}/{q['qid']}",
                     f"{p.name}: {q.get('piece')} asks ({q['qid']}), passed on by its lead: {q.get('text')} · "
                     f"answer(project={p.name!r}, question={q['qid']!r}, text=...) or "
                     f"pass_on(project={p.name!r}, question={q['qid']!r})",
                     kind="question", project=p.name, qid=q["qid"], question=q.get("text"))
    for r in found.get("reviews") or []:
        new += _once(repo, f"{p.name}/{r['id']}",
                     f"{p.name}: its lead put work to the person, row {r['row']} ({r['id']}) of their Now: "
                     f"{r.get('summary')} · note(project={p.name!r}, row={r['row']!r}, text=...) puts a line "
                     "under it", kind="review", project=p.name, row=r["row"], review=r["id"])
    return new


def gather(pass_after: float) -> int:
    """Ask every project for what waits on the chief, and post each new question and each new review once; how
    many were new."""
    repo = home.repo()
    return sum(post(repo, p, held_in(p, pass_after)) for p in list_projects())


def tell(lines: list[str]) -> None:
    """Lines for the chief itself (a project that could not be read, or can again), each its own message."""
    repo = home.repo()
    for line in lines:
        inbox.post(repo, INBOX, line, kind="info")


def moved(last: str | None, repo: Repo | None = None) -> tuple[bool, str | None]:
    """Whether the chief's inbox (in `repo`, the chief's repository) moved since its tip `last` (read without
    git), and its tip now: `news` need not read it when it did not."""
    tip = (repo or home.repo()).read_ref(inbox.inbox_ref(INBOX))
    return tip != last, tip


def news() -> str | None:
    """The chief's unread messages in words, marked as handed over; None when there are none."""
    repo = home.repo()
    items, newest = unread(repo, INBOX)
    if newest is not None:
        mark_read(repo, INBOX, newest)
    if not items:
        return None
    lines = [f"git balanced: {len(items)} new message{'s' if len(items) != 1 else ''} for you, the chief:"]
    lines += [f"- {clock(e['time'])} {e['text']}" for e in items]
    if any(e.get("kind") == "question" for e in items):
        lines.append("Answer from what the person told you with `answer`, or hand it to the person with `pass_on`; "
                     "unanswered, it comes to the person on its own.")
    return "\n".join(lines)
