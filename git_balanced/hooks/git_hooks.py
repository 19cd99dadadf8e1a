"""What `git balanced hook NAME` runs in the git hooks it installs (pre-commit's, or the plain ones of plain.py):
pre-merge-commit checks a merge made by hand into a lead's branch, pre-push refuses a lead's branch whose tip's tree
never passed the check. A worker's branch (`balanced/...`) is left alone by both."""

from __future__ import annotations

import os
import sys

from git_balanced import trust, ui
from git_balanced.git import ZERO, Repo
from git_balanced.landing import checks
from git_balanced.lead import commands_of, settings_at
from git_balanced.state import notes

WORKER_PREFIX = "balanced/"


def _lead_branch(ref: str) -> str | None:
    """The branch a pushed ref names, when it is a lead's (not a worker's `balanced/...`); else None."""
    if not ref.startswith("refs/heads/"):
        return None
    name = ref[len("refs/heads/"):]
    return None if name.startswith(WORKER_PREFIX) else name


def pre_merge_commit(repo: Repo, _args: list[str]) -> int:
    """A merge made by hand into a lead's branch must pass the check (a passing note lets it through)."""
    branch = repo.current_branch()
    if branch is None or branch.startswith(WORKER_PREFIX):
        return 0
    cmds = commands_of(settings_at(repo, "HEAD"))
    if not cmds.check:
        return 0
    tree = repo.write_index_tree()
    hit = checks.for_landing(repo, tree, cmds.check)
    if hit is not None and hit.passed:
        ui.note(f"[balanced] This merge's tree passed `{cmds.check}` before.")
        return 0
    if hit is None:
        trust.ensure_allowed(repo, cmds)
        head = repo.rev_parse("HEAD")
        probe = repo.commit_tree(tree, [head] if head else [], "balanced: merge being checked")
        ui.note(f"[balanced] Checking this merge with `{cmds.check}`…")
        hit = checks.check_rev(repo, probe, cmds.check, cmds.setup, use_cache=False)
    if hit.passed:
        ui.note(f"[balanced] Check passed in {hit.seconds:.1f}s.")
        return 0
    ui.note(f"[balanced] The merge into {branch} fails `{cmds.check}` (exit {hit.code}), so it was not "
            f"committed:\n{ui.tail(hit.tail)}")
    ui.note("hint: fix it and commit again, or `git merge --abort`.")
    return 1


def pre_push(repo: Repo, args: list[str], stdin: str | None = None) -> int:
    """Refuse to push a lead's branch whose tip's tree never passed the check.

    The tip decides, as in the landing: the branch moves on the remote to its tip, so that is the tree that
    must pass; commits below it go out with it (as the merges of a landing batch land under their checked top).
    A tip passes when its tree has a passing check note, or when it landed through the queue in a batch whose
    checked tree passed (its landing note says so). `stdin`: what git wrote on stdin, where it was read already
    (hooks/prepush.py)."""
    cmds = commands_of(settings_at(repo, "HEAD"))
    if not cmds.check:
        return 0
    refused: list[tuple[str, str]] = []
    for remote_ref, local_sha in _pushed(repo, stdin):
        branch = _lead_branch(remote_ref)
        if branch is not None and not _passed(repo, local_sha, cmds.check):
            refused.append((branch, local_sha))
    if not refused:
        return 0
    remote = os.environ.get("PRE_COMMIT_REMOTE_NAME") or (args[0] if args else "the remote")
    for branch, sha in refused:
        ui.note(f"[balanced] Refusing to push {branch} to {remote}: its tip {sha[:7]} ({repo.subject(sha)}) has no "
                f"passing `{cmds.check}`.")
    ui.note("hint: run " + " and ".join(f"`git balanced check {sha[:7]}`" for _, sha in refused)
            + ", then push again.")
    return 1


def _passed(repo: Repo, sha: str, check: str) -> bool:
    hit = checks.cached(repo, repo.tree_of(sha), check)
    if hit is not None:
        return hit.passed
    return any(n.get("result") == "pass" and n.get("check") == check
               for n in notes.read_json(repo, notes.LANDINGS, sha))


def _pushed(repo: Repo, stdin: str | None = None) -> list[tuple[str, str]]:
    """(remote ref, local sha) being pushed: git's stdin, or what pre-commit read of it and
    passes on in its PRE_COMMIT_* variables (it reads stdin itself, and passes on the first ref pushed)."""
    local = os.environ.get("PRE_COMMIT_LOCAL_BRANCH")
    if local:
        sha = os.environ.get("PRE_COMMIT_TO_REF") or repo.rev_parse(local)
        remote = os.environ.get("PRE_COMMIT_REMOTE_BRANCH") or local
        return [(remote, sha)] if sha else []
    out: list[tuple[str, str]] = []
    for line in (sys.stdin.read() if stdin is None else stdin).splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[1] != ZERO:
            out.append((parts[2], parts[1]))
    return out
