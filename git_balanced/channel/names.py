"""Where a lead's own records are, by its branch: its inbox's ref, and its files under `.git/balanced/` as plain
paths. Only os is imported: the lead's hooks on every turn find them without the git door or the state."""

from __future__ import annotations

import os
import time

INBOX = "refs/balanced/inbox/"
SEEN = "seen"  # the file whose time says when a session of the lead was last seen
HEADLESS_ENV = "GIT_BALANCED_HEADLESS_LEAD"  # set for a headless lead's agent: its tool calls are not a session's


def branch_key(branch: str) -> str:
    """`branch` as one name of a file or a ref: `/` kept as `%2F` (and `%` as `%25`)."""
    return branch.replace("%", "%25").replace("/", "%2F")


def inbox_ref(branch: str) -> str:
    """`refs/balanced/inbox/<lead-branch>`, with `/` in the branch kept as `%2F` (one ref per branch)."""
    return INBOX + branch_key(branch)


def lead_dir_in(state_dir: str, branch: str) -> str:
    """The folder a lead's own records live in, under its repository's `.git/balanced/` (`state_dir`)."""
    return f"{state_dir}/lead/{branch_key(branch)}"


def cursor_in(state_dir: str, branch: str) -> str:
    """The file that says which inbox message the lead's agent was handed last (hooks/agent.py)."""
    return f"{state_dir}/lead-read/{branch_key(branch)}"


def mark_seen_in(state_dir: str, branch: str) -> None:
    """Note that a session of the lead of `branch` acts now (a hook of it ran, or it called a tool)."""
    folder = lead_dir_in(state_dir, branch)
    os.makedirs(folder, exist_ok=True)
    with open(f"{folder}/{SEEN}", "w", encoding="utf-8") as fh:
        fh.write(f"{time.time()!r}\n")
