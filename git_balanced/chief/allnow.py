"""One Now for the person: every project's rows in one list, each named `PROJECT.N`, N being the row's number
in its own project (channel/now.py), which no answer moves to another row: `web.3` names the same question
after `ios.1` and `web.2` are answered. `answer --allow web.3 ios.1 ios.4` answers across projects at once.

A project here is read in this process; one on a machine by `git balanced board --json` there (chief/remote.py).
A project that cannot be read is said as such, and the others are shown.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from git_balanced.channel import now
from git_balanced.channel.questions import answer, shown_answer
from git_balanced.chief import remote
from git_balanced.chief.projects import Project, list_projects, project
from git_balanced.engine.shown import collect_shown
from git_balanced.errors import BalancedError
from git_balanced.lead import open_lead

# `web.3`, or `web.r2ab3c` (a row's or a question's own id in that project)
NAME = re.compile(r"(?P<project>[A-Za-z0-9][A-Za-z0-9_-]{0,39})\.(?P<row>[0-9]+|[a-z0-9]{6})")


@dataclass
class Read:
    """One project's board as read (None when it could not be, with `error` saying why)."""

    project: Project
    board: dict[str, Any] | None = None
    error: str = ""
    now: list[dict[str, Any]] = field(default_factory=list)


def board_of(p: Project) -> dict[str, Any]:
    """The project's board, as `git balanced board --json` gives it there."""
    if p.machine:
        data = remote.read_json(p, ["board"])
        if not isinstance(data, dict) or not isinstance(data.get("now"), list):
            raise BalancedError(f"{p.where}: its board did not have the shape of `git balanced board --json`.",
                                hint=f"update git balanced on {p.machine}.")
        return data
    return collect_shown(open_lead(p.path))


def _read(p: Project) -> Read:
    try:
        board = board_of(p)
    except BalancedError as exc:
        return Read(p, error=exc.message)
    return Read(p, board, now=[named(p, item) for item in board["now"] if isinstance(item, dict)])


def named(p: Project, item: dict[str, Any]) -> dict[str, Any]:
    """A row of the project's Now, with its project and, when it is numbered, its name across projects
    (`web.3`), which its text then starts with."""
    out = {**item, "project": p.name}
    if "text" not in item and not all(k in item for k in ("state", "piece", "reason", "id")):
        out["text"] = str(item.get("piece") or item.get("id") or "a row of an unknown shape")  # a newer version there
    n = item.get("n")
    if isinstance(n, int):
        out["name"] = f"{p.name}.{n}"
        text = str(item.get("text") or "")
        if text.startswith(f"{n} "):
            first, *more = text[len(str(n)) + 1:].split("\n")
            pad = " " * (len(p.name) + 1)  # the lines under it move right as far as its number did
            out["text"] = "\n".join([f"{p.name}.{n} {first}", *(pad + line for line in more)])
    return out


def read_all(projects: list[Project] | None = None) -> list[Read]:
    """Every project's board, in the projects' order: the ones on machines read at once, each in a thread of its
    own (a read there is a round trip and a start of git balanced), while this thread reads the ones here."""
    found = list_projects() if projects is None else projects
    away = [p for p in found if p.machine]
    if not away:
        return [_read(p) for p in found]
    with ThreadPoolExecutor(max_workers=min(8, len(away))) as pool:
        there = {p.name: pool.submit(_read, p) for p in away}
        here = {p.name: _read(p) for p in found if not p.machine}
        return [here[p.name] if p.name in here else there[p.name].result() for p in found]


def split(name: str) -> tuple[str, str] | None:
    """(project, row) of a name across projects (`web.3`), or None when it is not one."""
    m = NAME.fullmatch(name.strip())
    return (m["project"], m["row"]) if m else None


def answer_many(names: list[str], decision: str, reason: str = "") -> tuple[list[str], list[str]]:
    """Allow (or deny) questions in several projects at once, each named `PROJECT.N`: the lines said of the
    answers made, and why each of the others was not. Every project is found before any answer is given."""
    if decision not in ("allow", "deny"):
        raise ValueError(decision)
    by_project: dict[str, list[str]] = {}
    for name in names:
        parts = split(name)
        if parts is None:
            raise BalancedError(f"{name!r} names no row across projects.",
                                hint="name each as PROJECT.N, as `git balanced now --all` shows it (web.3).")
        by_project.setdefault(parts[0], []).append(parts[1])
    found = {name: project(name) for name in by_project}  # an unknown project refuses them all
    said: list[str] = []
    missed: list[str] = []
    for name, rows in by_project.items():
        try:
            done, lost = _answer_in(found[name], rows, decision, reason)
        except BalancedError as exc:  # nothing of this project was answered: one line for its rows
            done, lost = [], [f"{', '.join(f'{name}.{r}' for r in rows)}: {exc.message}"]
        said += done
        missed += lost
    return said, missed


def answer_words(name: str, text: str) -> str:
    """Answer the question `name` (PROJECT.N) names in words, in its project; what was said of it."""
    parts = split(name)
    if parts is None:
        raise BalancedError(f"{name!r} names no row across projects.",
                            hint="name it as PROJECT.N, as `git balanced now --all` shows it (web.3).")
    p = project(parts[0])
    if p.machine:
        return f"{p.name}: " + remote.run_there(p, ["answer", parts[1], text]).strip()
    lead = open_lead(p.path)
    item = now.resolve(lead, parts[1])
    if item["kind"] != "question":
        raise BalancedError(f"{name} is {'a review' if item['kind'] == 'review' else 'an idea'}, not a worker's "
                            "question.", hint=f"answer it in {p.where} with ship, correct, not-now or go-ahead.")
    f = answer(lead.repo, str(item["id"]), text, None)
    return f"Answered {name} ({item['id']}, {f.get('piece')}): {shown_answer(f)}"


def _answer_in(p: Project, rows: list[str], decision: str, reason: str) -> tuple[list[str], list[str]]:
    """Answer these rows of one project: in this process, or by `git balanced answer` on its machine."""
    if p.machine:
        out = remote.run_there(p, ["answer", f"--{decision}", *rows, *([reason] if reason else [])])
        return [f"{p.name}: {line}" for line in out.splitlines() if line.strip()], []
    lead = open_lead(p.path)
    named_as = {str(now.resolve(lead, r)["id"]): r for r in rows}
    done, missed = now.answer_many(lead, rows, decision, reason)
    return ([f"Answered {p.name}.{named_as.get(f['qid'], f['qid'])} ({f['qid']}, {f.get('piece')}): "
             f"{shown_answer(f)}" for f in done], [f"{p.name}: {m}" for m in missed])


def as_json(read: list[Read]) -> dict[str, Any]:
    """Every project's Now for programs: `now`, one list of rows each with its `project` (and `name`, PROJECT.N,
    when numbered), and `projects`, each with where it is, its lead's branch, or why it could not be read."""
    return {"now": [item for r in read for item in r.now],
            "projects": [{**r.project.to_json(), "lead": (r.board or {}).get("lead"), "waiting": len(r.now),
                          "lead_started_by": ((r.board or {}).get("lead_agent") or {}).get("started_by"),
                          **({"error": r.error} if r.error else {})} for r in read]}
