"""`git balanced sync`: share state refs and notes with a remote, merging chains that diverged."""

from __future__ import annotations

from dataclasses import dataclass, field

from git_balanced.errors import BalancedError, StaleRef
from git_balanced.git import Repo
from git_balanced.state.events import Event, node_id, write_event_commit
from git_balanced.state.notes import merge_notes_commit
from git_balanced.state.refs import update_with_retry

NOTES = ("refs/notes/balanced", "refs/notes/balanced-checks")


@dataclass
class SyncReport:
    remote: str
    fetched: int = 0
    fast_forwarded: int = 0
    merged: list[str] = field(default_factory=list)
    pushed: int = 0


def _tracking(remote: str, ref: str) -> str:
    """Where a remote's state ref is fetched to: `refs/remotes/<remote>/balanced/...`."""
    if ref.startswith("refs/balanced/"):
        return f"refs/remotes/{remote}/balanced/{ref[len('refs/balanced/'):]}"
    return f"refs/remotes/{remote}/balanced-notes/{ref[len('refs/notes/'):]}"


def _fetch(repo: Repo, remote: str) -> dict[str, str]:
    specs = [f"+refs/balanced/*:refs/remotes/{remote}/balanced/*",
             f"+refs/notes/balanced*:refs/remotes/{remote}/balanced-notes/balanced*"]
    res = repo.run("fetch", "--quiet", "--no-tags", remote, *specs)
    if res.code != 0:
        raise BalancedError(f"Could not fetch from {remote}: {res.err.strip() or res.out.strip()}",
                            hint=f"check `git remote -v` and that `git fetch {remote}` works.")
    theirs: dict[str, str] = {}
    for ref, sha in repo.list_refs(f"refs/remotes/{remote}/balanced/").items():
        theirs["refs/balanced/" + ref[len(f"refs/remotes/{remote}/balanced/"):]] = sha
    for ref, sha in repo.list_refs(f"refs/remotes/{remote}/balanced-notes/").items():
        theirs["refs/notes/" + ref[len(f"refs/remotes/{remote}/balanced-notes/"):]] = sha
    return theirs


def _merge_one(repo: Repo, ref: str, theirs: str, report: SyncReport) -> None:
    def build(mine: str | None) -> str | None:
        if mine == theirs or (mine and repo.is_ancestor(theirs, mine)):
            return None
        if mine is None or repo.is_ancestor(mine, theirs):
            return theirs
        if ref in NOTES:
            return merge_notes_commit(repo, mine, theirs, f"Merge notes from {report.remote}")
        ev = Event(event="merged", data={"remote": report.remote}, lamport=0, node=node_id(repo))
        return write_event_commit(repo, ev, f"Merge {ref[len('refs/balanced/'):]} from {report.remote}",
                                  [mine, theirs])

    try:
        new = update_with_retry(repo, ref, build, f"balanced: sync from {report.remote}", tries=50)
    except StaleRef:
        raise BalancedError(f"{ref} kept changing while syncing; run `git balanced sync` again.") from None
    if new == theirs:
        report.fast_forwarded += 1
    elif new is not None:
        report.merged.append(ref)


def sync(repo: Repo, remote: str = "origin", rounds: int = 5) -> SyncReport:
    """Fetch, merge what diverged, push without force; again when the remote moved meanwhile."""
    if remote not in repo.git("remote").split():
        raise BalancedError(f"There is no remote named {remote!r}.",
                            hint="name one of `git remote`, or add it with `git remote add NAME URL`.")
    report = SyncReport(remote)
    for _ in range(rounds):
        theirs = _fetch(repo, remote)
        report.fetched = len(theirs)
        for ref, sha in theirs.items():
            _merge_one(repo, ref, sha, report)
        mine = {**repo.list_refs("refs/balanced/"), **{r: s for r in NOTES if (s := repo.read_ref(r))}}
        todo = [f"{ref}:{ref}" for ref, sha in sorted(mine.items()) if theirs.get(ref) != sha]
        if not todo:
            return report
        # State refs are not code: the repository's own pre-push hooks (linters, the balanced check gate)
        # have nothing to judge in them, and a hook that refuses must not stop the sharing of state.
        res = repo.run("push", "--quiet", "--porcelain", "--no-verify", remote, *todo)
        if res.code == 0:
            report.pushed = len(todo)
            return report
        if "rejected" not in res.out and "rejected" not in res.err:
            raise BalancedError(f"Could not push state to {remote}: {res.err.strip() or res.out.strip()}",
                                hint=f"check that you may push to {remote}.")
    raise BalancedError(f"{remote} kept moving while syncing.", hint="run `git balanced sync` again.")
