"""One engine per job across clones: this node's heartbeat, its claims on queued jobs, taking over a job whose
owner went silent, and stopping a worker whose claim lost to another clone's (seen after `sync`)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from pathlib import Path

from git_balanced import jobs as J
from git_balanced.engine import workers
from git_balanced.engine.cleanup import cleanup
from git_balanced.engine.context import Context
from git_balanced.errors import BalancedError
from git_balanced.files import write_json
from git_balanced.job_events import Claimed, TakenOver
from git_balanced.jobs import LIVE, Job
from git_balanced.lead import Lead
from git_balanced.state import nodes, refs, sync
from git_balanced.state.events import node_id
from git_balanced.vocab import RunState


def beat_every(limit: float) -> float:
    """How often the heartbeat is rewritten: often enough that a live engine never looks silent."""
    return max(1.0, min(60.0, limit / 4))


class Owners:
    """What this clone's engine may do to a job, given which node owns it."""

    def __init__(self, lead: Lead) -> None:
        self.lead = lead
        self.repo = lead.repo
        self.me = node_id(self.repo)
        self._released_path = self.repo.state_dir / "released.json"

    def beat(self, ctx: Context) -> None:
        """Say in the shared state that this node's engine is alive (a rewrite at most every few seconds)."""
        nodes.beat(self.repo, beat_every(float(ctx.settings.balanced.takeover_after)))

    def mine(self, j: Job) -> bool:
        """J.mine, with this node's name known: asked of every job, several times a pass."""
        return not j.node or j.node == self.me

    def claim(self, j: Job, ctx: Context | None = None) -> bool:
        """Claim a queued job before its worker starts; False when another engine (here or, through the shared
        remote, in another clone) claimed it first, or when this clone shares its state through a remote it
        cannot reach now: then a claim counts only once that remote has taken it, so two clones apart never
        both start a piece. What it claimed before goes on; the lead hears once why nothing new starts."""
        ref = refs.ref_for("jobs", j.id)
        if j.node == self.me:  # claimed here on an earlier pass, and the shared remote has not taken it yet
            sha = self.repo.read_ref(ref)
        else:
            sha = J.claim(self.repo, j.id, Claimed(), f"{j.piece}: claimed by the engine on {self.me}")
        if sha is None:
            return False
        taken = sync.confirm(self.repo, ref, sha)
        if taken is False:
            refs.note_written(self.repo, refs.ref_for("jobs", j.id))  # taken back: read it again
            return False
        remote = sync.shared_remote(self.repo) if taken is None else None
        if remote is not None:
            # Taken back here too: a claim the remote never saw must not count once the clones meet again, or
            # the fold could give the job to it after another clone's claim, which the remote took, started it.
            parents = self.repo.store[sha.encode()].parents
            if parents and j.node != self.me:
                self.repo.cas_ref(ref, parents[0].decode(), sha, message="balanced: claim the remote did not take")
                refs.note_written(self.repo, ref)
            self._waits_for_remote(ctx, j, remote)
            return False
        if taken:
            self._remote_back(ctx, j)
        fresh = J.one(self.repo, j.id)
        return fresh is not None and fresh.node == self.me

    def _waits_for_remote(self, ctx: Context | None, j: Job, remote: str) -> None:
        """Tell the lead, once a plan, that its pieces wait for the shared remote."""
        told = self._told_remote()
        if j.plan in told or ctx is None:
            return
        ctx.say(f"{j.piece} and the rest of its plan wait: this clone shares its plans through {remote}, which "
                "cannot be reached now, and a piece starts only once the remote has taken this clone's claim "
                "(so no other clone runs it too). What runs goes on; `git balanced sync` shows what the remote "
                "says.", job=j.id)
        write_json(self._told_path, sorted(told | {j.plan}))

    def _remote_back(self, ctx: Context | None, j: Job) -> None:
        told = self._told_remote()
        if j.plan not in told:
            return
        write_json(self._told_path, sorted(told - {j.plan}))
        if ctx is not None:
            ctx.say(f"{j.piece}: the shared remote took this clone's claim again, so its plan's pieces start "
                    "again.", job=j.id)

    @property
    def _told_path(self) -> Path:
        return self.repo.state_dir / "remote-waits.json"

    def _told_remote(self) -> set[str]:
        return _read_set(self._told_path)

    def take_over(self, ctx: Context, jobs: Iterable[Job]) -> bool:
        """Take over the live jobs whose owner's heartbeat is older than `takeover_after`: each is recorded as
        lost by this node (which then tries it again), and the lead hears it. True when any was."""
        limit = float(ctx.settings.balanced.takeover_after)
        wrote = False
        for j in jobs:
            if j.state not in LIVE or self.mine(j):
                continue
            since = nodes.silent_since(self.repo, j.node, limit)
            if since is None:
                continue
            words = (f"{j.piece}: its engine on {j.node} has been silent since "
                     f"{time.strftime('%H:%M', time.localtime(since))}; this clone takes it over")
            sha = J.claim(self.repo, j.id, TakenOver(reason=f"its engine on {j.node} went silent"), words,
                          owner=j.node)
            if sha is None:
                continue
            if sync.confirm(self.repo, refs.ref_for("jobs", j.id), sha) is False:
                refs.note_written(self.repo, refs.ref_for("jobs", j.id))  # taken back: read it again
                continue
            ctx.say(words, job=j.id)
            wrote = True
        return wrote

    def release_lost(self, ctx: Context, jobs: Iterable[Job]) -> None:
        """Stop this clone's worker of each job another clone's claim won, or another clone took over (as learnt
        from `sync`), once."""
        released = self._released()
        changed = False
        for j in jobs:
            taken = j.taken_from == self.me and j.node != self.me
            if (self.me not in j.lost_claims and not taken) or j.id in released:
                continue
            try:
                ran_here = workers.stop(self.lead, j).get("state") not in (None, RunState.MISSING)
            except BalancedError:
                ran_here = False  # nothing running here any more: the cleanup below is all there is to do
            cleanup(self.lead, j)
            why = "took it over" if taken else "claimed it first"
            done = "this clone stopped its own worker" if ran_here else "this clone leaves it to that engine"
            ctx.say(f"{j.piece}: the engine on {j.node} {why}; {done}", job=j.id)
            released.add(j.id)
            changed = True
        if changed:
            write_json(self._released_path, sorted(released))

    def _released(self) -> set[str]:
        return _read_set(self._released_path)


def _read_set(path: Path) -> set[str]:
    """A JSON list of ids kept in `.git/balanced/` (empty when missing or not a list)."""
    try:
        data = json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        return set()
    return {str(x) for x in data} if isinstance(data, list) else set()
