"""`git balanced show JOB`: one job in full (engine/detail.py)."""

from __future__ import annotations

from typing import Any

from git_balanced import ui
from git_balanced.engine.detail import detail
from git_balanced.lead import open_lead
from git_balanced.vocab import JobState


def show_command(job: str, *, as_json: bool) -> int:
    """Print JOB: its piece, what its worker did, where its branch is, its events, the check's whole output."""
    data = detail(open_lead(), job)
    if as_json:
        ui.emit_json(data)
        return 0
    ui.say(render(data))
    return 0


def render(d: dict[str, Any]) -> str:
    """The job as the person reads it."""
    did, at = d["did"], d["branch_at"]
    lines = [f"{d['piece']} ({d['id']}): {d['state']}, attempt {d['attempt']} · {d['machine']} · "
             + " · ".join(b for b in (d["agent"], d["model"]) if b),
             f"  {ui.plain(d['reason'], lines=False)}"]
    lines.append(f"  task: {ui.plain(d['task'].splitlines()[0] if d['task'] else '', lines=False)}")
    if d.get("archived"):  # folded away by `git balanced gc`: its refs are gone, its events kept there
        lines.append(f"  archived: {d['archived']} (`git log {d['archived']}`)")
    if d["run"]:
        lines.append(f"  run: {ui.plain(d['run'], lines=False)}")
    bits = [f"{did['commits']} commit(s)"]
    if did["exit_code"] is not None:
        bits.append(f"exit {did['exit_code']}")
    if did["seconds"] is not None:
        bits.append(f"{did['seconds']:.0f}s")
    if did["cost_usd"]:
        bits.append(f"${did['cost_usd']:.2f}")
    lines.append("  did: " + ", ".join(bits) + (f": {ui.plain(did['summary'], lines=False)}" if did["summary"]
                                                 else ""))
    if d["state"] == JobState.REPORTED:  # a piece that writes nothing has no branch: its report is above
        lines.append("  branch: none (`writes: none`: it only read, and its report is its result)")
    elif at["ref"]:
        where = f"at {at['commit'][:7]}" if at["commit"] else _gone(d, at["ref"]) or "not here"
        lines.append(f"  branch: {d['branch']} ({at['ref']}) {where}" + (", in the lead's branch" if at["in_lead"]
                                                                          else ""))
    lines += [f"  also {r['ref']}: {_gone(d, r['ref'])}" for r in d.get("branches_removed", ())
              if not r["here"] and r["ref"] != at["ref"]]
    for key, words in (("previous", "after attempt"), ("next", "tried again as")):
        if d[key]:
            lines.append(f"  {words} {d[key]}")
    lines.append("Events")
    lines += [f"  {ui.clock(e['time'], seconds=True)}  {e['event']:<12} {ui.plain(e['subject'], lines=False)}"
              for e in d["events"]]
    out = d["check_output"]
    if out:
        lines.append("The check's whole output" if out["whole"] else
                     "The end of the check's output (its whole output was kept by the clone that ran it)")
        lines.append(ui.tail(out["text"], n=len(out["text"].splitlines()) or 1))
    return "\n".join(lines)


def _gone(d: dict[str, Any], ref: str) -> str:
    """How an archived job's ref that its archive removed comes back ('' when it was not removed, or is back)."""
    for r in d.get("branches_removed", ()):
        if r["ref"] == ref and not r["here"]:
            return f"removed by the archive, merged into the lead at {r['sha'][:7]} (`{r['restore']}` brings it back)"
    return ""
