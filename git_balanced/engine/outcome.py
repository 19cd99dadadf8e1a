"""What `engine --until-idle` ends with: 0 when every piece of the plans it saw started landed, else 1 and why."""

from __future__ import annotations

from git_balanced import jobs as J
from git_balanced.engine.context import Context
from git_balanced.engine.loop import Engine
from git_balanced.lead import settings_at
from git_balanced.vocab import ENDED_BADLY, JobState


def unlanded(eng: Engine) -> list[str]:
    """One line for each piece of the plans this run saw started that did not land, and each question that
    waits for you; empty when everything landed."""
    repo, lead = eng.repo, eng.lead
    ctx = Context(lead, settings_at(repo, lead.branch))
    plans = J.all_plans(repo)
    jobs = {jid: j for jid, j in eng.jobs_now().items() if j.plan in eng.seen}  # its last pass read them all
    latest = J.latest_by_piece(jobs)
    lines: list[str] = []
    for pid in sorted(eng.seen):
        plan = plans.get(pid)
        for piece in plan.pieces if plan else ():
            j = latest.get((pid, piece.id))
            if j is None:
                why = next((t for t in sorted(eng.told) if t.startswith("Nothing starts")), "")
                # What it waits for that waits for you: moving that (the line above says how) moves this.
                yours = [a for a in piece.after if (w := latest.get((pid, a))) is not None and (
                    w.state == JobState.HELD or (w.state == JobState.FINISHED and eng.waits_for_you(ctx, w)))]
                waits = f"; {', '.join(yours)} {'waits' if len(yours) == 1 else 'wait'} for you (see above)"
                lines.append(f"{piece.id} never started: it comes after {', '.join(piece.after)}"
                             + (waits if yours else ", which did not land") if piece.after
                             else f"{piece.id} never started. {why}".strip())
            elif j.state in (JobState.LANDED, JobState.REPORTED):
                continue
            elif j.state == JobState.HELD:
                lines.append(f"{piece.id} is held for you: {j.reason} ({j.id})")
            elif j.state == JobState.FINISHED:
                lines.append(f"{piece.id} waits: {eng.waits_for_you(ctx, j) or 'it has not landed yet'} ({j.id})")
            elif j.id in eng.waiting_for_machine and not j.waits_for:
                lines.append(f"{piece.id} waits for {j.machine}, the machine its plan names ({j.id})")
            elif j.state in ENDED_BADLY:
                lines.append(f"{piece.id} {j.state}: {j.reason or j.failure or j.state} ({j.id})")
            else:
                lines.append(f"{piece.id} is {j.state}{': ' + j.waits_for if j.waits_for else ''} ({j.id})")
    from git_balanced.channel import questions

    lines += [q["text"].removeprefix("? ") for q in questions.board_items(lead).get("now", [])]
    return lines
