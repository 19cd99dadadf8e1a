"""The board as data: what waits on you (Now), what runs (Running), what comes (Next). The board command
prints it; the lead's tools hand it over as it is."""

from __future__ import annotations

import os
import time
from operator import itemgetter

from git_balanced import fence, handles, ui
from git_balanced.engine import folded, kept
from git_balanced.lead import Lead
from git_balanced.state import cache
from git_balanced.state.declared import Job, PlanView
from git_balanced.vocab import DONE, ENDED_BADLY, NEEDS_YOU, Failure, JobState, LeadState

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from typing import Any


def _reason(j: Job) -> str:
    if j.state == JobState.LANDED:
        budget = ", stopped at its budget" if j.budget_stopped else ""
        own = own_check_words(j)
        return f"landed in {j.landed_in or j.lead} as {(j.landed or '')[:7]}{budget}" + (f"; {own}" if own else "")
    if j.state == JobState.REPORTED:
        first = (j.summary or "").strip().splitlines()[:1]
        return f"reported: {first[0][:100] if first else 'an empty report'} (`git balanced show {j.id}`)"
    if j.state == JobState.PAUSED and j.reset_at:
        return (f"paused for its plan's usage limit until {ui.clock(j.reset_at)}; "
                f"goes on at {ui.clock(j.resume_at or j.reset_at)}")
    if j.state == JobState.RETRIED and j.moved_to:
        return f"{j.reason} (its plan's usage limit resets at {ui.clock(j.reset_at or 0)})"
    if j.state == JobState.RETRIED:
        return (j.reason or j.failure or "failed") + " (tried again)"
    if j.state in ENDED_BADLY | NEEDS_YOU:
        why = j.reason or j.failure or j.state
        if j.final:
            return f"{why.rstrip('.')}. {j.final}"
        return f"{why}; it waits for {j.waits_for}" if j.waits_for else why
    if j.state == JobState.RUNNING:
        if j.asked:
            return "asked its lead"
        if j.answered_by:
            return answered_words(j)
        started = j.started_at or j.updated
        return f"running {int((time.time() - started) // 60)}:{int(time.time() - started) % 60:02d}"
    if j.state == JobState.FINISHED:
        own = own_check_words(j)
        return j.in_the_way_why or "finished, waiting for its check" + (f"; {own}" if own else "")
    if j.state == JobState.QUEUED and j.waits_for:
        return f"waits: {j.waits_for}"
    if j.state == JobState.QUEUED:
        return "queued" + (f" ({j.retry_reason})" if j.retry_reason else "")
    return j.state


def answered_words(j: Job) -> str:
    """What its lead (or you) answered a worker's last question, kept on its row while it runs on:
    `allowed by its lead (q7k2m: npm install)`, `denied by you (...)`, `answered by its lead (...)`."""
    from git_balanced.channel.questions import ANSWERED_WORD

    word = ANSWERED_WORD.get(j.answered_decision or "", "answered")
    what = f" ({j.answered}: {j.asked_text[:60]})" if j.answered and j.asked_text else ""
    return f"{word} by {j.answered_by}{what}"


def own_check_words(j: Job) -> str:
    """What its worker's own check said (the piece's `check`, else the last it ran through `git balanced seat`):
    `its own check `pytest -q tests/api` passed (2.1 s)`; that it did not run the piece's check; or ''."""
    ran = [c for c in j.checks if not j.check or c.get("command") == j.check] or list(j.checks)
    if not ran:
        return f"it did not run its own check `{j.check}`" if j.check else ""
    c = ran[-1]
    code = int(c.get("exit_code", 1))
    waited = f", after waiting {float(c.get('waited') or 0):.0f} s for a check seat" \
        if float(c.get("waited") or 0) >= 1 else ""
    return (f"its own check `{c.get('command')}` {'passed' if code == 0 else f'failed (exit {code})'} "
            f"({float(c.get('seconds') or 0):.1f} s{waited})")


def under_next(row: dict[str, Any]) -> bool:
    """Whether a worker's row belongs under Next rather than Running: a queued piece that waits (for a machine,
    for room in its plan), and a worker paused for its plan's usage limit (it goes on at its time)."""
    return row["state"] == JobState.PAUSED or (row["state"] == JobState.QUEUED and row["reason"].startswith("waits"))


TAIL_SHOWN = 10  # the lines of a failed check's output the board and the inbox show: the failing test is there


def check_tail(j: Job, lines: int = TAIL_SHOWN) -> str:
    """The end of the check's output on an attempt whose check failed (the failing test), or ''."""
    if j.failure != Failure.CHECK_FAILED or not j.tail.strip():
        return ""
    return "\n".join(j.tail.rstrip().splitlines()[-lines:])


def failure_tail(j: Job) -> str:
    """`check_tail` as the lead reads it under a message: indented lines after its first, or ''."""
    tail = check_tail(j)  # cut to TAIL_SHOWN lines already: only indented here
    return "".join("\n    " + ui.plain(line) for line in tail.splitlines())


# A row's fields in the order `job_row` makes them (a kept row read in full is put in this order).
ROW_KEYS = ("id", "plan", "piece", "title", "state", "machine", "agent", "model", "attempt", "branch", "base",
            "cost_usd", "budget_usd", "reason", "landed", "resume_at", "dismissed", "updated", "in_the_way", "node",
            "tail", "check", "checks")


def job_row(j: Job) -> dict[str, Any]:
    return {"id": j.id, "plan": j.plan, "piece": j.piece, "title": j.title or j.task[:80],
            "state": j.state, "machine": j.machine, "agent": j.agent, "model": j.model,
            "attempt": j.attempt, "branch": j.branch, "base": j.base, "cost_usd": j.cost_usd,
            "budget_usd": j.budget_usd, "reason": _reason(j), "landed": j.landed,
            "resume_at": j.resume_at if j.state == JobState.PAUSED else None,
            "dismissed": j.dismissed, "updated": j.updated, "in_the_way": list(j.in_the_way), "node": j.node,
            "tail": check_tail(j), "check": j.check, "checks": list(j.checks)}


def collect(lead: Lead, fold_after: int | None = None, slim: bool = False) -> dict[str, Any]:
    """The board as data: the five kinds of refs it reads (jobs, plans, questions, schedules, corrections) listed
    once (Repo.listing_once). With `fold_after` (the board as it prints, done workers folded into one line when
    there are more of them than that), the done jobs and plans are read as briefs (state/cache.read_live), and
    each done job is a row of its id, plan, piece, state and time, except those shown whole: what waits on you
    under Now, or all of them when there are no more than `fold_after`. With `slim` (`board --json`, which
    writes a kept row's text as it is), a done job's row holds only the fields the board reads (engine/kept.META)."""
    with lead.repo.listing_once():
        return _collect(lead, fold_after, slim=slim)


def _collect(lead: Lead, fold_after: int | None, summed: bool = True, slim: bool = False) -> dict[str, Any]:
    # `Job`s made without validation (their fields' types were checked as their chains were folded), and plans
    # through light views, whose pieces are read only for the plans still live (see docs/performance.md). The done
    # jobs and plans are read as briefs; a done job shown whole is typed from its full state (`fold_now`), or, when
    # every one is shown (`--all`), its row is the one kept beside the cache (`_kept_rows`): none is parsed whole.
    # Each plan wholly done is read as its summary (engine/folded.py), its jobs not one by one: folded, they are
    # counted; with every job shown, their rows are those kept and their handles made from the summary's detail.
    read = folded.read(lead.repo, detail=fold_after is None) if summed else None
    plans = {pid: p for pid, st in (read.plans if read else cache.read_live(lead.repo, "plans")).items()
             if (p := PlanView(pid, st)).lead == lead.branch}
    summaries = {pid: s for pid, s in read.summaries.items() if pid in plans} if read else {}
    states = {jid: st for jid, st in (read.jobs if read else cache.read_live(lead.repo, "jobs")).items()
              if st["fields"].get("plan", "") in plans}
    jobs = {jid: Job.of(jid, st) for jid, st in states.items() if not st.get("brief")}
    briefs = {jid: st for jid, st in states.items() if st.get("brief")}
    live_plans = {pid for pid, p in plans.items() if p.state in ("created", "started")}
    latest = _latest(jobs, briefs, live_plans, every=fold_after is None)
    summed_rows = sum(s["rows"] for s in summaries.values())
    if summaries and fold_after is not None and _done_count(jobs, briefs) + summed_rows <= fold_after:
        return _collect(lead, fold_after, summed=False)  # every done worker is shown: none is summed up
    if briefs and fold_after is not None:
        whole = cache.fold_now(lead.repo, "jobs", _shown_whole(jobs, briefs, latest, fold_after - summed_rows))
        jobs.update((jid, Job.of(jid, st)) for jid, st in whole.items())
        briefs = {jid: st for jid, st in briefs.items() if jid not in whole}
    shown = [jid for jid, st in briefs.items() if not st["fields"].get("dismissed")]
    detail = {pid: (read.detail or {}).get(pid, []) for pid in summaries} if read and fold_after is None else {}
    shown += [row[0] for rows in detail.values() for row in rows if row[4]]
    done = _kept_rows(lead, shown, slim) if fold_after is None else [_brief_row(jid, briefs[jid]) for jid in shown]
    rows = sorted([job_row(j) for j in jobs.values() if not j.dismissed] + done, key=itemgetter("updated", "id"))
    _landed_untold(lead, rows)
    _landed_elsewhere(lead, rows)
    now = [r for r in rows if r["state"] == JobState.HELD or (r["state"] == JobState.FINISHED and r["in_the_way"])]
    now += [r for r in rows if r["state"] in ENDED_BADLY and latest.get((r["plan"], r["piece"])) == r["id"]]
    nxt = []
    for pid, p in sorted(plans.items()):
        if p.state not in ("created", "started"):
            continue
        for piece in p.pieces:
            if (pid, piece.id) not in latest:
                nxt.append({"plan": pid, "piece": piece.id, "after": list(piece.after),
                            "words": piece.after_words or ("waits for `git balanced start`"
                                                           if p.state == "created" else "about to start"),
                            "machine": piece.placed})
    # A queued piece that waits (for a machine with its agent, for room in its plan) is what comes, not what runs;
    # so is a worker paused for its plan's usage limit, with the time it goes on (`resume_at`).
    nxt += [{"plan": r["plan"], "piece": r["piece"], "after": [], "words": r["reason"], "machine": r["machine"],
             "job": r["id"], "state": r["state"], "resume_at": r["resume_at"]} for r in rows if under_next(r)]
    extra = _extras(lead)
    spent = [(j.plan, j.cost_usd if j.cost_usd is not None else j.spent_before) for j in jobs.values()]
    spent += [(st["fields"]["plan"], folded.brief_cost(st)) for st in briefs.values()]
    spent += [(pid, s["spent"]) for pid, s in summaries.items()]  # each summed in its jobs' order, as above
    data: dict[str, Any] = {"lead": lead.branch, "now": extra.get("now", []) + now, "jobs": rows,
                            "next": nxt + extra.get("next", []), "plans": _spend(lead, plans, spent),
                            "lead_agent": _lead_agent(lead), "lead_session": _lead_session(lead),
                            "check_seats": _check_seats(lead), "fence": _fence(lead)}
    if fold_after is not None and summaries:  # the board's text counts them
        data["folded"] = folded.merged(summaries)
    if slim or summaries:  # what handles.add_to_board makes the handles from, as read here
        data["known"] = handles.Known(plans, states, summaries, detail)
    return data


def _done_count(jobs: dict[str, Job], briefs: dict[str, dict[str, Any]]) -> int:
    """The done workers the board shows, besides those summed up: the briefs and the jobs read whole."""
    return sum(1 for st in briefs.values() if not st["fields"].get("dismissed")) + \
        sum(1 for j in jobs.values() if j.state in DONE and not j.dismissed)


def _fence(lead: Lead) -> dict[str, Any]:
    """Whether this machine fences workers and checks, as its last probe within the hour found (fence.py)."""
    why = fence.remembered_why_unavailable(lead.repo.state_dir / "fence.json")
    return {"fenced": why is None, "why": why}


def _latest(jobs: dict[str, Job], briefs: dict[str, dict[str, Any]], live_plans: set[str], every: bool = False
            ) -> dict[tuple[str, str], str]:
    """The id of the newest attempt of each (plan, piece), among jobs and briefs alike (latest_by_piece's order):
    of every piece that has a job read whole, ended badly, or belongs to a live plan (what the board asks); with
    `every`, of every piece (the board that shows every job, as it shows them when all are read whole)."""
    best: dict[tuple[str, str], tuple[int, float, str]] = {}
    ranks = [((j.plan, j.piece), (j.attempt, j.created, j.id)) for j in jobs.values()]
    asked = {key for key, _ in ranks}
    for jid, st in briefs.items():
        f = st["fields"]
        key = (f.get("plan", ""), f.get("piece", ""))
        if every or key in asked or key[0] in live_plans or st["state"] in ENDED_BADLY:
            ranks.append((key, (int(f.get("attempt", 1)), float(st["created"] or 0.0), jid)))
    for key, rank in ranks:
        if key not in best or rank > best[key]:
            best[key] = rank
    return {key: rank[2] for key, rank in best.items()}


def _shown_whole(jobs: dict[str, Job], briefs: dict[str, dict[str, Any]], latest: dict[tuple[str, str], str],
                 fold_after: int) -> list[str]:
    """The briefs the board shows whole: every done row when there are no more than `fold_after` of them, else
    those that wait on you under Now (the newest attempt of a piece that ended badly)."""
    shown = [jid for jid, st in briefs.items() if not st["fields"].get("dismissed")]
    if _done_count(jobs, briefs) <= fold_after:
        return shown
    return [jid for jid in shown if briefs[jid]["state"] in ENDED_BADLY
            and latest.get((briefs[jid]["fields"].get("plan", ""), briefs[jid]["fields"].get("piece", ""))) == jid]


def _brief_row(jid: str, st: dict[str, Any]) -> dict[str, Any]:
    """A done job's row as a folded board counts it: what it is, where it ended, and when."""
    return {"id": jid, "plan": st["fields"].get("plan", ""), "piece": st["fields"].get("piece", ""),
            "state": st["state"], "updated": float(st["updated"] or 0.0), "reason": "", "brief": True}


def _kept_rows(lead: Lead, names: list[str], slim: bool = False) -> list[dict[str, Any]]:
    """The rows of the done jobs `names` as kept beside the cache (engine/kept.py), made by `job_row`: kept by
    the files that make and word them and the time zone its clock speaks in."""
    return kept.rows(lead.repo, names, lambda jid, state: job_row(Job.of(jid, state)), _made_by(), ROW_KEYS, slim)


# What makes a done job's row, beside this file: the package's files whose stamps key the kept rows.
MADE_BY = (os.path.join("state", "declared.py"), "vocab.py", "ui.py")


def _made_by() -> str:
    """The stamp of what makes the kept rows: each file's (size, mtime in ns), and the time zone in full."""
    parts = kept.files_stamp(__file__, MADE_BY)
    parts.append(f"{time.timezone}.{time.altzone}.{'/'.join(time.tzname)}")
    return ".".join(parts)


def _landed_elsewhere(lead: Lead, rows: list[dict[str, Any]]) -> None:
    """A row landed by another clone's engine whose landing commit is not in this clone's branch (not pulled yet)
    says so, rather than that it landed in the branch. Only other clones' landings are looked for (what this
    clone's engine landed is on its branch), in the branch's first-parent history (landings are on it), listed
    by one git call for them all."""
    me = _this_node(lead)
    landed = {r["landed"]: r for r in rows
              if r["state"] == JobState.LANDED and r.get("landed") and r.get("node") and r["node"] != me}
    if not landed:
        return
    tip = lead.repo.read_ref(lead.ref)
    on_branch = set(lead.repo.commits(tip, first_parent=True)) if tip else set()
    for commit, row in landed.items():
        if commit in on_branch:
            continue
        row["reason"] = (f"landed in {lead.branch} on another clone as {commit[:7]}, which is not in this clone's "
                         f"{lead.branch} yet (`git pull`)")


def _this_node(lead: Lead) -> str:
    """This clone's node name (state/events.node_id), read from its file where it is made already: the board
    loads the events' module (and compiles its patterns) only on a clone's first look."""
    try:
        with open(lead.repo.state_dir / "node", encoding="utf-8") as f:
            node = f.read().strip()
    except OSError:
        node = ""
    if node:
        return node
    from git_balanced.state.events import node_id

    return node_id(lead.repo)


def _landed_untold(lead: Lead, rows: list[dict[str, Any]]) -> None:
    """A landing killed after the branch moved, before its jobs heard of it: the landing note on the lead's branch
    names the job, so its row says landed (the next pass records it) rather than waiting for a check."""
    waiting = {r["id"]: r for r in rows if r["state"] == JobState.FINISHED and not r["in_the_way"]}
    if not waiting:
        return
    from git_balanced.state import notes

    for landing in notes.landings(lead.repo, lead.ref, most=50):
        for rec in landing.records:
            row = waiting.get(rec.get("job") or "")
            if row is not None:
                row.update(state=JobState.LANDED, landed=landing.commit,
                           reason=f"landed in {lead.branch} as {landing.commit[:7]}")


def _spend(lead: Lead, plans: dict[str, PlanView], spent: list[tuple[str, float]]) -> list[dict[str, Any]]:
    """Each plan with what it spent against its budget: its workers' runs (`spent`: each job's plan and cost) and
    its headless lead's turns."""
    from git_balanced.channel.presence import headless_record

    by_plan = (headless_record(lead.repo, lead.branch) or {}).get("plan_cost") or {}
    workers_of: dict[str, list[float]] = {}
    for pid, cost in spent:
        workers_of.setdefault(pid, []).append(float(cost))
    out = []
    for pid, p in plans.items():
        workers = round(sum(workers_of.get(pid, ())), 6)
        own = round(float(by_plan.get(pid) or 0), 6)
        out.append({"id": pid, "task": p.task, "state": p.state, "budget_usd": p.budget_usd, "workers_usd": workers,
                    "lead_usd": own, "spent_usd": round(workers + own, 6)})
    return out


def _check_seats(lead: Lead) -> dict[str, dict[str, Any]]:
    """Each machine's check seats: this machine's read now, the others as `machines` last asked them (no machine
    is asked here)."""
    from git_balanced.machines.placing import check_seats

    others = {m: s for m, s in check_seats.kept(lead.repo).items() if m != check_seats.LOCAL and "in_use" in s}
    return {check_seats.LOCAL: check_seats.here(lead.repo), **others}


SESSION_ACTIVE_S = 600.0  # a lead session seen within this long is taken to be at work


def _lead_session(lead: Lead) -> dict[str, Any] | None:
    """The lead's agent session at the keyboard (not the headless lead), if one was ever seen here: its agent,
    mode and model as its hooks recorded them, and how long ago it last acted."""
    from git_balanced.channel.presence import seen_at

    seen = seen_at(lead.repo, lead.branch)
    if seen is None:
        return None
    from git_balanced.agents.modes import last  # here: a lead no session was seen in reads no mode

    rec = last(lead.repo, lead.branch)
    ago = max(0.0, time.time() - seen)
    return {"agent": rec.get("agent"), "mode": rec.get("mode"), "model": rec.get("model"),
            "seen_s_ago": round(ago), "active": ago <= SESSION_ACTIVE_S}


def _lead_agent(lead: Lead) -> dict[str, Any] | None:
    """The headless lead of this branch, if one was started: its agent, state, turns and spend."""
    from git_balanced.channel.presence import driver_alive, headless_record

    rec = headless_record(lead.repo, lead.branch)
    if rec is None:
        return None
    running = driver_alive(rec)
    return {"agent": rec.get("agent"), "state": rec.get("state") if running or rec.get("state") == LeadState.STOPPED
            else "ended", "running": running, "turns": rec.get("turns", 0),
            "cost_usd": round(float(rec.get("cost_usd") or 0), 6), "started_by": rec.get("started_by") or "you"}


def _extras(lead: Lead) -> dict[str, list[dict[str, Any]]]:
    """What other parts add to the board: what waits on your answer (questions passed to you, reviews and ideas),
    corrections, the next schedule. A part with no refs at all adds nothing, so its modules are not even loaded
    (most boards have none of them)."""
    out: dict[str, list[dict[str, Any]]] = {"now": []}

    def has(kind: str) -> bool:
        return bool(lead.repo.list_refs(f"refs/balanced/{kind}/"))

    if has("questions") or has("now"):
        out["now"] = _numbered(lead)
    if has("schedules"):
        from git_balanced.channel import schedules

        for key, items in schedules.board_items(lead).items():
            out.setdefault(key, []).extend(items)
    if has("prs"):  # forge.events.KIND
        from git_balanced.forge import prs

        for key, items in prs.board_items(lead).items():
            out.setdefault(key, []).extend(items)
    if has("corrections"):  # landing.review.CORRECTIONS
        from git_balanced.landing.review import corrections_line

        line = corrections_line(lead)
        if line:
            out["now"].append({"text": line, "kind": "corrections"})
    from git_balanced.machines.inventory import held  # a machine SSH refuses to log in to waits on your fix

    out["now"] += [{"text": held.words(m, h), "kind": "held machine", "machine": m, "fix": h.get("fix")}
                   for m, h in held.held(lead.repo).items()]
    return out


def _numbered(lead: Lead) -> list[dict[str, Any]]:
    """What waits on your answer, numbered as `answer`, `ship`, `correct`, `not-now` and `go-ahead` name them:
    questions passed to you, then what the lead put to you (reviews and ideas)."""
    from git_balanced.channel import now, nownotes, questions

    asked = {q["qid"]: q for q in questions.board_items(lead)["now"]}
    noted = nownotes.noted(lead.repo) if lead.repo.list_refs(nownotes.PREFIX) else {}
    out = []
    for item in now.numbered(lead):
        n = item["n"]
        if item["kind"] == "question":
            q = asked.get(item["id"], {"text": f"? {item['id']}", "qid": item["id"], "kind": "question"})
            entry = {**q, "n": n, "text": f"{n} {q['text']}"}
        else:
            entry = {"n": n, "kind": item["kind"], "row": item["row"], "text": now.shown(item["row"], n)}
        notes = noted.get(item["id"])
        if notes:  # the chief's (or the person's) lines under the row
            entry["notes"] = notes
            entry["text"] += "\n" + "\n".join(nownotes.lines(notes, " " * (len(str(n)) + 5)))
        out.append(entry)
    return out

