"""`git balanced logs JOB [--follow]` and `git balanced tell JOB TEXT`: a worker's readable transcript, and a
line a running agent worker hears at its next step."""

from __future__ import annotations

import time

from git_balanced import jobs as J
from git_balanced import ui
from git_balanced.agents.transcript import render
from git_balanced.engine import reach
from git_balanced.lead import open_lead
from git_balanced.vocab import LIVE, JobState

FOLLOW_EVERY = 1.0  # seconds between two reads of a followed log


def logs_command(job: str, *, follow: bool, raw: bool) -> int:
    """Print the worker's log as turns, tool calls and results (as the agent wrote it with --raw); with
    --follow, keep printing as it grows until the worker ends."""
    lead = open_lead()
    j = reach.job_named(lead, job)
    chunk = reach.read_log(lead, j)
    if not chunk.found and not follow:
        why = {JobState.QUEUED: "it has not started yet.", JobState.RUNNING: "it has written nothing yet."}.get(
            JobState(j.state), "its run folder was cleaned up once it ended.")
        ui.say(f"No log of {j.piece} ({j.id}) here: {why} `git balanced show {j.id}` says what it did.")
        return 0
    held = _show(chunk.text, raw)
    offset = chunk.next_offset
    try:
        while follow:
            time.sleep(FOLLOW_EVERY)
            now = J.again(lead.repo, j.id)  # that one job's ref, not every job (it was resolved once, above)
            if now is None:
                ui.say(f"── {j.piece} ({j.id}) is no longer among the jobs: `git balanced show {j.id}` says "
                       "what it did.")
                break
            j = now
            chunk = reach.read_log(lead, j, offset)
            held, offset = _show(held + chunk.text, raw), chunk.next_offset
            if j.state not in LIVE and not chunk.text:
                ui.say(f"── {j.piece} is {j.state}.")
                break
    except KeyboardInterrupt:
        pass
    return 0


def _show(text: str, raw: bool) -> str:
    """Print the whole lines of `text`; the part after its last newline is handed back for the next read."""
    whole, _nl, rest = text.rpartition("\n")
    if whole or _nl:
        lines = whole.splitlines() if raw else render(whole)
        if lines:
            ui.say(ui.plain("\n".join(lines)))
    return rest


def tell_command(job: str, text: str, *, as_json: bool) -> int:
    """Leave TEXT for a running agent worker; it reads it at its next tool call."""
    lead = open_lead()
    j = reach.tell(lead, job, text)
    if as_json:
        ui.emit_json({"job": j.id, "piece": j.piece, "told": " ".join(text.split())})
        return 0
    said = " ".join(text.split())
    ui.say(f"Told {j.piece} ({j.id}): {said}" + ("" if said.endswith((".", "!", "?")) else ".")
           + f" Its agent reads it at its next tool call; `git balanced logs {j.id} --follow` shows what it does "
             "with it.")
    return 0

