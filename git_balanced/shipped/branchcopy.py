"""A branch's own copy on an SSH machine, made and removed by the runner there. Stdlib only, Python 3.9+.

The lead pushes into the machine's copy (`~/<repository>`), which every job of the repository there shares.
A worker works in a copy of its branch's own instead, `~/.balanced/copies/<copy's name>-<hash>-workers/<branch,
its slashes as +>`: a repository with nothing checked out that borrows the machine copy's objects through
`.git/objects/info/alternates`, so it is made in milliseconds. The fence (pen.py) leaves a worker only its own
branch's copy writable, so it cannot create or move another running piece's branch; the lead fetches each
branch back from that branch's copy alone. Sent to another machine, these functions become the runner
script's globals: their names are prefixed so that none meets one of the runner's.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable
from typing import Any

# What a worker's commit needs from the machine copy's config (`ready` sets who commits there).
OWN_COPY_CONFIG = ("user.name", "user.email", "commit.gpgSign", "user.signingKey", "gpg.format", "core.hooksPath")


def own_copy_path(copy: str, branch: str) -> str:
    """Where the branch's copy of the machine copy `copy` is: beside the worktrees, under the copy's home. The
    lead and the runner both derive it from these two names alone."""
    copy = copy.rstrip("/")
    short = hashlib.sha256(f"{copy}/.git".encode()).hexdigest()[:8]
    return (f"{os.path.dirname(copy)}/.balanced/copies/{os.path.basename(copy)}-{short}-workers/"
            f"{branch.replace('/', '+')}")


def own_copy_objects(copy: str, git: Callable[[list[str], str], Any]) -> str:
    """The machine copy's objects folder, which its branches' copies borrow."""
    if os.path.isdir(os.path.join(copy, ".git", "objects")):
        return os.path.realpath(os.path.join(copy, ".git", "objects"))
    code, common = git(["rev-parse", "--path-format=absolute", "--git-common-dir"], copy)
    if code != 0:
        raise OSError(f"{copy} is not a git repository: {common}")
    return os.path.realpath(os.path.join(common, "objects"))


def own_copy_ensure(copy: str, branch: str, git: Callable[[list[str], str], Any]) -> str:
    """The branch's copy, made now when it is missing or borrows from elsewhere; the caller holds the machine
    copy's worktrees lock. `git(args, cwd)` is the runner's git: nothing found in these folders runs."""
    where = own_copy_path(copy, branch)
    objects = own_copy_objects(copy, git)
    if _own_copy_valid(where, objects):
        return where
    os.makedirs(os.path.dirname(where), exist_ok=True)
    tmp = f"{where}.tmp{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    # Not bare: a bare one's core.bare would make its worktrees bare once the guard sets worktreeConfig.
    code, out = git(["init", "-q", tmp], os.path.dirname(where))
    if code != 0:
        raise OSError(f"could not make the branch's copy {where}: {out}")
    with open(os.path.join(tmp, ".git", "objects", "info", "alternates"), "w", encoding="utf-8") as f:
        f.write(objects + "\n")
    carried = {"gc.auto": "0", **_carried_config(copy, git)}  # a gc there must not drop what a worker holds
    with open(os.path.join(tmp, ".git", "config"), "a", encoding="utf-8") as f:
        f.write(config_text(carried))
    shutil.rmtree(where, ignore_errors=True)  # a broken one: its worktree is made again with the job
    os.replace(tmp, where)
    return where


def _carried_config(copy: str, git: Callable[[list[str], str], Any]) -> dict[str, str]:
    """OWN_COPY_CONFIG's values as the machine copy's git reads them (every scope, the last one wins), read by
    one git process; a key git prints in lower case is given back as OWN_COPY_CONFIG spells it."""
    spelt = {key.lower(): key for key in OWN_COPY_CONFIG}
    pattern = "^(" + "|".join(k.replace(".", "\\.") for k in spelt) + ")$"
    code, out = git(["config", "--null", "--get-regexp", pattern], copy)
    found: dict[str, str] = {}
    if code != 0:  # 1: none of them is set
        return found
    for entry in out.split("\0"):
        key, _, value = entry.partition("\n")
        if key.lower() in spelt and value.strip():
            found[spelt[key.lower()]] = value.strip()
    return found


def config_text(values: dict[str, str]) -> str:
    """`section.key = value` lines as a git config file holds them, each value quoted as git reads it back."""
    lines = []
    for key, value in values.items():
        section, _, name = key.rpartition(".")
        quoted = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
        lines.append(f'[{section}]\n\t{name} = "{quoted}"\n')
    return "".join(lines)


def _own_copy_valid(where: str, objects: str) -> bool:
    try:
        with open(os.path.join(where, ".git", "objects", "info", "alternates"), encoding="utf-8") as f:
            borrowed = f.read().split("\n")
    except OSError:
        return False
    return objects in borrowed and os.path.isfile(os.path.join(where, ".git", "HEAD"))


def own_copy_remove(where: str) -> bool:
    """Remove a branch's copy once no worktree of it is registered (its branch was fetched back already);
    whether it is gone. The caller holds the machine copy's worktrees lock."""
    worktrees = os.path.join(where, ".git", "worktrees")
    if os.path.isdir(worktrees) and os.listdir(worktrees):
        return False
    shutil.rmtree(where, ignore_errors=True)
    return not os.path.exists(where)
