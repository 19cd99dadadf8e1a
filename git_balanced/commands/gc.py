"""`git balanced gc`: fold plans done long ago, with their jobs, into the archive, and remove their refs."""

from __future__ import annotations

from git_balanced import ui
from git_balanced.lead import open_lead
from git_balanced.state.archive import ARCHIVE, gc


def gc_command(*, older_than: float | None, as_json: bool) -> int:
    """Archive what was done more than `older_than` days ago (default: the setting) and say what moved."""
    done = gc(open_lead(), older_than)
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
               f"{ARCHIVE}, and removed {done['refs_removed']} refs.\n"
               f"`git log {ARCHIVE}{first}` reads one plan's; `git balanced log` still lists their landings and "
               f"`git balanced show JOB` still shows a job.")
    for ref in done["kept"]:
        ui.say(f"{ref} moved while it was archived; it stays, and the next `git balanced gc` takes it.")
    for folded in done["inbox"]:
        ui.say(f"The inbox {folded['inbox']} now starts after {folded['folded_to'][:12]} (older messages: "
               f"`git log {ARCHIVE}inbox/{folded['inbox']}`).")
    return 0
