"""`git balanced gc`: fold plans done long ago, with their jobs, into the archive, and remove their refs."""

from __future__ import annotations

from git_balanced import ui
from git_balanced.lead import open_lead
from git_balanced.state.archive import ARCHIVE, gc


def gc_command(*, older_than: float | None, as_json: bool) -> int:
    """Archive what was done more than `older_than` days ago (default: the setting) and say what moved."""
    from git_balanced.engine import sweep

    lead = open_lead()
    # A killed engine's cleanups, without waiting: each entry holds all its cleanup reads (the job's machine,
    # runner key, branch name, base; the machine's record), none of the job and plan refs archived here, so
    # the sweeper busy with them, or the process left other machines' ones, finishes them after as before.
    said = sweep.finish_here(lead)
    if said.busy:
        ui.note(f"Another sweeper is cleaning up after landed workers ({sweep.LOCK} in {lead.repo.state_dir} is "
                f"held): it finishes them; gc goes on without waiting.")
    if said.handed:
        ui.note(f"The cleanups of {said.handed} landed worker{'s' if said.handed != 1 else ''} on other machines go "
                f"on in a process of its own (its output in {lead.repo.state_dir / 'engine.log'}); gc does not "
                f"wait for a machine out of reach.")
    done = gc(lead, older_than)
    if as_json:
        ui.emit_json(done)
        return 0
    days = f"{done['older_than_days']:g}"
    if not done["plans"]:
        ui.say(f"Nothing to archive: no plan was done more than {days} days ago.")
    else:
        first = done["plans"][0]["plan"]
        plans = f"{len(done['plans'])} plan" + ("s" if len(done["plans"]) != 1 else "")
        ui.say(f"Archived {done['jobs']} jobs of {plans} done more than {days} days ago into "
               f"{ARCHIVE}, and removed {done['refs_removed']} refs"
               f"{branch_words(done['branches_removed'])}.\n"
               f"`git log {ARCHIVE}{first}` reads one plan's; `git balanced log` still lists their landings and "
               f"`git balanced show JOB` still shows a job.")
    if done["branches_removed"]:
        ui.say(f"Each branch removed is listed with its commit in its plan's archive (`git show "
               f"{ARCHIVE}{next(p['plan'] for p in done['plans'] if p['branches'])}:branches.jsonl`); "
               f"`git branch NAME COMMIT` brings one back.")
    if done["branches_kept"]:
        ui.say(kept_words(done["branches_kept"]))
    for ref in done["kept"]:
        ui.say(f"{ref} moved while it was archived; it stays, and the next `git balanced gc` takes it.")
    for folded in done["inbox"]:
        ui.say(f"The inbox {folded['inbox']} now starts after {folded['folded_to'][:12]} (older messages: "
               f"`git log {ARCHIVE}inbox/{folded['inbox']}`).")
    return 0


def branch_words(removed: int) -> str:
    """The words for the landed jobs' branches removed, after the refs."""
    if not removed:
        return ""
    return f" and {removed} branch{'es' if removed != 1 else ''} of landed jobs, merged into the lead"


def kept_words(kept: list[dict[str, str]], most: int = 10) -> str:
    """The landed jobs' branches left, each with why (the first `most`; how many more)."""
    named = "\n".join(f"  {row['branch'].removeprefix('refs/heads/')}: {row['why']}" for row in kept[:most])
    more = f"\n  and {len(kept) - most} more (`git balanced gc --json` lists every one)" if len(kept) > most else ""
    return (f"Kept {len(kept)} branch{'es' if len(kept) != 1 else ''} of landed jobs (one with commits the lead "
            f"lacks stays until you merge or delete it):\n{named}{more}")
