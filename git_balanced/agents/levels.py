"""What a lead's permission mode leaves its workers, and the mode its hooks recorded, read with os and
shipped/lightjson.py alone: a worker's PreToolUse hook reads it on every tool call (modes.py has the rest, and
writes the record).
"""

from __future__ import annotations

from git_balanced.agents import lead_session
from git_balanced.shipped import lightjson

# What a worker may do on its own, strictest first. `read-only`: reads only, every other call refused;
# `ask`: edits and commands each wait for the lead's yes; `edits`: edits go ahead (the guard still holds them
# to the piece's paths), commands wait for the lead's yes; `free`: as the settings say.
LEVELS = ("read-only", "ask", "edits", "free")

# The lead's mode -> its workers' level. A mode this table does not know is taken as `ask`: the safe side.
FROM_LEAD = {
    "plan": "read-only",
    "default": "ask", "manual": "ask", "dontAsk": "ask",
    "acceptEdits": "edits", "auto": "edits",
    "bypassPermissions": "free",
}

# The environment variable naming the file a worker's lead records its mode in (modes.py's path of it), set
# for a worker on the lead's machine so that its hook reads the mode without finding the lead's repository.
MODE_FILE_ENV = "GIT_BALANCED_LEAD_MODE_FILE"


def mode_file_in(state_dir: str, branch: str) -> str:
    """The file the lead of `branch` records its mode in, under its repository's `.git/balanced/` (`state_dir`):
    `lead-mode/<branch>.json`, with `/` in the branch kept as `%2F`."""
    return f"{state_dir}/lead-mode/{branch.replace('%', '%25').replace('/', '%2F')}.json"


def level_of(mode: str | None) -> str | None:
    """The workers' level under a lead in `mode`; None for no mode (no lead session seen)."""
    if not mode:
        return None
    return FROM_LEAD.get(mode, "ask")


def stricter(*levels: str | None) -> str | None:
    """The strictest of the levels given (None counts for nothing)."""
    known = [lv for lv in levels if lv in LEVELS]
    return min(known, key=LEVELS.index) if known else None


def recorded_at(path: str) -> dict | None:
    """The lead's mode as its hooks last recorded it in the file at `path`, or None (no file, not JSON, no
    mode, or the session that recorded it has ended: lead_session.py). Another error reading it is raised, as
    modes.py raises it."""
    try:
        with open(path, encoding="utf-8") as f:
            rec = lightjson.loads(f.read())
    except (FileNotFoundError, ValueError):
        return None
    return rec if isinstance(rec, dict) and rec.get("mode") and lead_session.lives(rec) else None


def workers_level_of(rec: dict | None) -> str | None:
    """The level a lead's recorded mode `rec` leaves its workers, or None when none was recorded."""
    if not rec:
        return None
    return stricter(level_of(str(rec["mode"])), rec.get("level") if rec.get("level") in LEVELS else None)
