"""`git balanced sync`: share state refs and notes with a remote, merging chains that diverged."""

from __future__ import annotations

from dataclasses import dataclass, field

from git_balanced import ui
from git_balanced.errors import BalancedError, StaleRef
from git_balanced.files import write_atomic
from git_balanced.git import Repo
from git_balanced.state import health, nodes
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
    # Malformed chains, by ref, with why: what the remote holds is not merged here, and what is here not pushed.
    not_merged: dict[str, str] = field(default_factory=dict)
    not_pushed: dict[str, str] = field(default_factory=dict)


def malformed(repo: Repo, ref: str, tip: str, known: str | None) -> str | None:
    """Why the state ref `ref` at `tip` is malformed, reading only what `known` (the other side's tip) lacks;
    None for a good chain and for what is not a chain (notes, heartbeats)."""
    if not ref.startswith("refs/balanced/"):
        return None
    parts = ref.split("/", 3)
    if len(parts) < 4:
        return "it names no kind of state (refs/balanced/<kind>/<name>)"
    return health.chain_since(repo, parts[2], parts[3], tip, known)


def _tracking(remote: str, ref: str) -> str:
    """Where a remote's state ref is fetched to: `refs/remotes/<remote>/balanced/...`."""
    if ref.startswith("refs/balanced/"):
        return f"refs/remotes/{remote}/balanced/{ref[len('refs/balanced/'):]}"
    return f"refs/remotes/{remote}/balanced-notes/{ref[len('refs/notes/'):]}"


def _fetch(repo: Repo, remote: str) -> dict[str, str]:
    specs = [f"+refs/balanced/*:refs/remotes/{remote}/balanced/*",
             f"+refs/notes/balanced*:refs/remotes/{remote}/balanced-notes/balanced*"]
    res = repo.fetch(remote, specs)
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
    if ref.startswith(nodes.NODES):  # a heartbeat is rewritten, never merged: its own node's copy is the one
        if ref != nodes.node_ref(node_id(repo)):
            mine = repo.read_ref(ref)
            if mine != theirs and repo.cas_ref(ref, theirs, mine, message=f"balanced: sync from {report.remote}"):
                report.fast_forwarded += 1
        return

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


def _not_merged(report: SyncReport, ref: str, why: str) -> None:
    if ref not in report.not_merged:
        ui.note(f"[balanced] {report.remote}'s {ref} is malformed ({why}); it is not merged here, and everything "
                f"else is. It stays on {report.remote} until removed there: git push {report.remote} :{ref}")
    report.not_merged[ref] = why


def _pushable(repo: Repo, report: SyncReport, ref: str, sha: str, theirs: str | None) -> bool:
    """Whether this clone's `ref` may be pushed: a malformed one is set aside here (and named) instead."""
    why = malformed(repo, ref, sha, theirs)
    if why:
        health.found(repo, ref, sha, why)
        report.not_pushed[ref] = why
    return why is None


def sync(repo: Repo, remote: str = "origin", rounds: int = 5) -> SyncReport:
    """Fetch, merge what diverged, push without force; again when the remote moved meanwhile."""
    if remote not in repo.remotes():
        raise BalancedError(f"There is no remote named {remote!r}.",
                            hint="name one of `git remote`, or add it with `git remote add NAME URL`.")
    report = SyncReport(remote)
    write_atomic(repo.state_dir / "sync-remote", remote + "\n")  # where the engine confirms its claims
    own_beat = nodes.node_ref(node_id(repo))
    for _ in range(rounds):
        theirs = _fetch(repo, remote)
        nodes.observe(repo, theirs)
        report.fetched = len(theirs)
        for ref, sha in theirs.items():
            if ref.startswith(health.BROKEN):
                continue  # what another clone set aside stays there
            here = repo.read_ref(ref)
            why = malformed(repo, ref, sha, here)
            if why:
                _not_merged(report, ref, why)
                continue
            if here and here != sha:
                _pushable(repo, report, ref, here, sha)  # a malformed one here is set aside, not merged into
            _merge_one(repo, ref, sha, report)
        mine = {**repo.list_refs("refs/balanced/"), **{r: s for r in NOTES if (s := repo.read_ref(r))}}
        # Each node pushes its own heartbeat only, with `+` as it is rewritten; others' are only read.
        todo = [f"{'+' if ref == own_beat else ''}{ref}:{ref}" for ref, sha in sorted(mine.items())
                if theirs.get(ref) != sha and (ref == own_beat or not ref.startswith(nodes.NODES))
                and not ref.startswith(health.BROKEN) and _pushable(repo, report, ref, sha, theirs.get(ref))]
        if not todo:
            return report
        # State refs are not code: the repository's own pre-push hooks (linters, the balanced check gate)
        # have nothing to judge in them, and a hook that refuses must not stop the sharing of state.
        res = repo.push(remote, todo)
        if res.code == 0:
            report.pushed = len(todo)
            return report
        if "rejected" not in res.out and "rejected" not in res.err:
            raise BalancedError(f"Could not push state to {remote}: {res.err.strip() or res.out.strip()}",
                                hint=f"check that you may push to {remote}.")
    raise BalancedError(f"{remote} kept moving while syncing.", hint="run `git balanced sync` again.")


def shared_remote(repo: Repo) -> str | None:
    """The remote this clone last synced with (None when it never did, so it shares its state with no one)."""
    try:
        remote = (repo.state_dir / "sync-remote").read_text().strip()
    except FileNotFoundError:
        return None
    return remote if remote in repo.remotes() else None


CONFIRM_TIMEOUT = 30.0  # seconds a claim's push may take before the remote counts as out of reach


def confirm(repo: Repo, ref: str, claim: str) -> bool | None:
    """Make a claim (the commit `claim`, the tip of `ref`) hold across clones: push it to the shared remote
    without `+`. True: the remote took it, so no other clone's claim came first. False: the remote had moved,
    so the claim is taken back (the ref is brought to the remote's chain without it) for the fold to decide
    on what the others wrote. None: no shared remote, or it could not be reached: the claim holds here, and
    the fold settles it once the clones sync."""
    remote = shared_remote(repo)
    if remote is None:
        return None
    res = repo.push(remote, [f"{claim}:{ref}"], timeout=CONFIRM_TIMEOUT)
    if res.code == 0:
        return True
    if "rejected" not in res.out and "rejected" not in res.err:
        return None
    got = repo.fetch(remote, [f"+{ref}:{_tracking(remote, ref)}"])
    theirs = repo.read_ref(_tracking(remote, ref)) if got.code == 0 else None
    if theirs is None:
        return None
    parents = [p.decode() for p in repo.store[claim.encode()].parents]
    before = parents[0] if parents else None
    if before is None or repo.is_ancestor(before, theirs):
        new = theirs
    else:
        ev = Event(event="merged", data={"remote": remote}, lamport=0, node=node_id(repo))
        new = write_event_commit(repo, ev, f"Merge {ref[len('refs/balanced/'):]} from {remote}", [before, theirs])
    repo.cas_ref(ref, new, claim, message=f"balanced: claim refused by {remote}")
    return False
