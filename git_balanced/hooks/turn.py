"""A lead's hooks on each turn (`hook user-prompt-submit`, `hook stop`), started light: they record the mode the
lead's agent was handed and hand it the inbox's news. Most turns bring none, and that is told from git's files
alone: the inbox's ref (git/peek.py) is the message the agent was last handed (the cursor in
`.git/balanced/lead-read/`), or there is no inbox. Only then, or where git must answer (peek.UNSURE, a detached
or odd HEAD, a checkout git/discover.py leaves to git), is the repository opened through the door and the
inbox read (hooks/agent.py). Everything read is the lead's own repository's.
"""

from __future__ import annotations

import os

from git_balanced.agents import lead_session, levels, modes
from git_balanced.channel import names
from git_balanced.git import peek
from git_balanced.git.discover import found_paths
from git_balanced.hooks import hookio

TYPE_CHECKING = False  # typing is not imported for this: these hooks run on every turn of a lead
if TYPE_CHECKING:
    from typing import Any

TURNS = ("user-prompt-submit", "stop")


def record(state_dir: str, branch: str, data: dict[str, Any]) -> None:
    """Keep the mode the lead's hook was handed, and that a session of it acts now (hooks/agent.py's
    record_lead_mode, for a checkout found here); a worker's own hooks are not a lead's."""
    if not os.environ.get("GIT_BALANCED_JOB"):
        modes.record_at(levels.mode_file_in(state_dir, branch), data, lead_session.of_hook())
        names.mark_seen_in(state_dir, branch)  # a lead session that takes turns can answer its workers


def _handed(state_dir: str, branch: str) -> str | None:
    """The id of the message the lead's agent was handed last ("" for none); None where it cannot be read."""
    try:
        with open(names.cursor_in(state_dir, branch), encoding="utf-8") as fh:
            return fh.read().strip().partition(" ")[0]
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError):
        return None


def turn(name: str) -> int | None:
    """Run the hook `name` (one of TURNS); None, having read nothing, where the repository must be opened
    through the door from the start (then hooks/agent.py runs it)."""
    where = os.environ.get("GIT_WORK_TREE") or None
    found = found_paths(os.path.realpath(where or os.getcwd()))
    branch = peek.branch_of(found[1]) if found else None
    if found is None or branch is None or os.environ.get(names.HEADLESS_ENV):
        return None  # a headless lead's session is its driver's, which hooks/agent.py reads
    common = found[2]
    tip = peek.ref_id(common, names.inbox_ref(branch))
    state_dir = f"{common}/balanced"
    handed = _handed(state_dir, branch)
    if tip == peek.UNSURE or handed is None:
        return None
    data = hookio.read_input()
    record(state_dir, branch, data)
    if tip is None or tip == handed:  # no inbox, or its newest message was handed over: no news
        return hookio.emit(None)
    from git_balanced.git import Repo
    from git_balanced.hooks.agent import lead_news

    return hookio.emit(hookio.answer(name, lead_news(Repo.discover(where))))
