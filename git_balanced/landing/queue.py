"""The landing queue (DESIGN §6): the lead's branch only ever moves to a commit whose exact tree passed.

Candidates are merged onto the lead's tip one `--no-ff` merge commit each, without any worktree
(`git merge-tree --write-tree`, then `git commit-tree`). The top of that chain is checked once; on a failure
the longest passing prefix is found (bisect.py), landed, and the rest goes round again on the new tip. The
check slots a round leaves free check that next chain ahead of its round (speculate.py, rounds.py).
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from git_balanced import trust
from git_balanced.errors import BalancedError, LandingBusy
from git_balanced.faults import crashpoint
from git_balanced.files import Flock, write_json
from git_balanced.git import MergeResult, Repo
from git_balanced.git.forkdiff import since_fork
from git_balanced.landing import checkout, checks, machine_checks, protect, seat
from git_balanced.landing.bisect import Search, search
from git_balanced.landing.rounds import Checker
from git_balanced.lead import Lead, commands_of, settings_at
from git_balanced.settings_view import SETTINGS_PATH
from git_balanced.state import notes

MAX_LIMIT = 64
PREFLIGHTS = 4  # branches looked at at once before the chain is built
FIRST_LIMIT = 32
MOST_SLOTS = 64


def slots_of(setting: int) -> int:
    """The check slots a landing runs on: `[balanced] check_slots`, or this machine's cores when it is 0."""
    return setting if setting > 0 else max(1, min(MOST_SLOTS, os.cpu_count() or 1))


@dataclass
class Candidate:
    """A branch that asks to land, and what is known of the worker behind it."""

    branch: str
    tip: str
    job: str | None = None
    info: dict[str, Any] = field(default_factory=dict)
    set_aside: int = 0
    approved: bool = False  # you named it with `land --yes`: its protected paths are yours to judge

    @property
    def label(self) -> str:
        piece, attempt = self.info.get("piece"), self.info.get("attempt")
        if piece:
            return f"Land {self.branch} ({piece}, attempt {attempt or 1})"
        return f"Land {self.branch}"


@dataclass
class Verdict:
    branch: str
    status: str  # landed | already | check_failed | conflict | held | refused | in_the_way
    job: str | None = None
    commit: str | None = None
    reason: str = ""
    tail: str = ""
    paths: list[str] = field(default_factory=list)
    tree: str = ""  # the tree whose check failed: its whole output is kept by it (checks.kept_log)
    check_seconds: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"branch": self.branch, "status": self.status, "job": self.job, "commit": self.commit,
                "reason": self.reason, "tail": self.tail, "paths": self.paths}


@dataclass
class Link:
    cand: Candidate
    commit: str
    tree: str


class Queue:
    """One landing run over a set of candidates, holding the repository's landing lock."""

    def __init__(self, lead: Lead, *, slots: int | None = None) -> None:
        self.lead = lead
        self.repo = lead.repo
        tip = self.repo.rev_parse(lead.ref)
        if tip is None:
            raise BalancedError(f"The lead's branch {lead.branch} has no commits yet.",
                                hint="make a first commit, then land.")
        settings = settings_at(self.repo, tip)
        self.cmds = commands_of(settings)
        self.protected = protect.rules(self.repo, settings, tip)
        self.slots = slots or slots_of(settings.balanced.check_slots)
        self.checker = Checker(self.repo, self.cmds.check or "", self.cmds.setup, self.slots,
                               timeout=float(settings.worktree.check_timeout),
                               seats=seat.budget_of(self.repo) if self.cmds.check else None)
        if self.cmds.check and settings.balanced.check_machines:  # idle machines' checks steer the rounds
            self.checker.machines = machine_checks.Machines(lead, self.cmds.check, self.cmds.setup,
                                                            float(settings.worktree.check_timeout))
        self.verdicts: list[Verdict] = []
        self.checkout: dict[str, str] = {}  # the lead's own changes in its checkout: path -> what they are
        # What the preflight's merges onto the lead's tip found, by (tip, branch tip): the chain's first merge, and
        # the test of a branch that conflicts in the chain, take it rather than merge again.
        self.merged: dict[tuple[str, str], MergeResult] = {}
        # The lead's uncommitted paths as read just before the first chain, for its guard (None: read again).
        self._status: list[str] | None = None

    # -- the run ------------------------------------------------------------------------------------------
    def run(self, candidates: list[Candidate]) -> list[Verdict]:
        with Flock(self.repo.state_dir / "landing.lock"):
            if self.cmds.check:
                trust.ensure_allowed(self.repo, self.cmds)
            lead_tip = self.repo.rev_parse(self.lead.ref)
            assert lead_tip is not None
            # Each branch looked at on its own (a few git commands each), several at once; verdicts in order.
            with ThreadPoolExecutor(max_workers=max(1, min(PREFLIGHTS, len(candidates)))) as pool:
                found = list(pool.map(lambda c: self._preflight(c, lead_tip), candidates))
            self.verdicts += [v for v in found if v is not None]
            pending = [c for c, v in zip(candidates, found, strict=True) if v is None]
            self.checkout = self._checkout_changes()
            try:
                with checkout.full_disk_cleared(self.repo, "the landing"):  # one message, and no debris left
                    self._loop(pending)
            finally:
                self.checker.close()
        return self.verdicts

    def _limit(self, value: int | None = None) -> int:
        """How many new branches a round takes (`.git/balanced/landing.json`, kept between runs), or write it.
        A value the queue could not work with (0 would take none, for ever) is named once and replaced."""
        path = self.repo.state_dir / "landing.json"
        if value is None:
            try:
                raw = json.loads(path.read_text())
            except FileNotFoundError:
                return FIRST_LIMIT
            except (OSError, ValueError) as exc:
                raw = {"limit": f"unreadable ({exc.__class__.__name__})"}
            got = raw.get("limit") if isinstance(raw, dict) else raw
            if isinstance(got, int) and not isinstance(got, bool) and 1 <= got <= MAX_LIMIT:
                return got
            from git_balanced import ui

            ui.note(f"[balanced] {path}: `limit` is {json.dumps(got)}, but it must be a whole number from 1 to "
                    f"{MAX_LIMIT}; {FIRST_LIMIT} is used (and written there) instead.")
            value = FIRST_LIMIT
        write_json(path, {"limit": value})
        return value

    def _loop(self, pending: list[Candidate]) -> None:
        limit = self._limit()
        moved = 0
        carry: list[Candidate] = []  # what followed a culprit in its chain: it goes round again whole
        while carry or pending:
            tip = self.repo.rev_parse(self.lead.ref)
            assert tip is not None
            # The halved limit holds back branches new to the queue, never the rest of a chain already
            # built: splitting that would only cost another check.
            room = max(0, limit - len(carry))
            batch, pending = carry + pending[:room], pending[room:]
            carry = []
            if self.checkout:  # only a landing that would overwrite the lead's own files waits for them
                batch = [c for c in batch if not self._in_the_way(tip, c)]
            chain, later = self._chain(tip, batch)
            if not chain:
                pending = later + pending
                continue
            self._dirty_guard(tip, chain[-1].commit)
            crashpoint("after-chain")
            s = self._search(tip, chain)
            crashpoint("after-check")
            n = len(chain)
            top = n if s.passed.get(n) else s.lo
            ahead = self._checked_ahead(tip, chain, top, waiting=bool(later or pending)) if top < n else []
            told = len(self.verdicts)
            if top or ahead:
                if not self._move(tip, chain[:top] + ahead):
                    moved += 1
                    if moved > 20:
                        raise BalancedError(f"{self.lead.branch} kept moving while landing.",
                                            hint="run `git balanced land` again.")
                    # the lead moved during the check: rebuild on the new tip
                    carry = [x.cand for x in chain]
                    pending = later + pending
                    continue
            if top < n:
                culprit = chain[top]
                res = checks.for_landing(self.repo, culprit.tree, self.cmds.check or "")
                self.verdicts.insert(told + top, Verdict(  # in the chain's order, before what landed after it
                    culprit.cand.branch, "check_failed", culprit.cand.job,
                    reason=f"its check failed (exit {res.code if res else '?'})" +
                           (f" once merged after {', '.join(x.cand.branch for x in chain[:top])}" if top else ""),
                    tail=res.tail if res else "", tree=culprit.tree))
                # halved for the failure; and what landed after it is a batch that passed, as a round of its own
                limit = self._limit(min(MAX_LIMIT, max(1, limit // 2) + (1 if ahead else 0)))
                carry = [] if ahead else [x.cand for x in chain[top + 1:]]
                pending = later + pending
            else:
                limit = self._limit(min(MAX_LIMIT, limit + 1))
                pending = later + pending

    def _checked_ahead(self, tip: str, chain: list[Link], top: int, *, waiting: bool) -> list[Link]:
        """The chain after the culprit `chain[top]`, merged on the prefix that lands, when a check ahead of its
        round passed on its top: it lands in the same move as that prefix, not one round later. Only when no
        other branch waits (the next round would check them with it) and none of your files is in the way."""
        rest = chain[top + 1:]
        if not rest or waiting or self.checkout or not self.cmds.check:
            return []
        built = self.checker.passed_after(chain[top - 1].commit if top else tip, [x.cand.tip for x in rest])
        if not built:
            return []
        return [Link(x.cand, commit, tree) for x, (commit, tree) in zip(rest, built, strict=True)]

    # -- preflight: no check runs spent -------------------------------------------------------------------
    def _preflight(self, c: Candidate, lead_tip: str) -> Verdict | None:
        """Why `c` cannot go into a chain, settled without a check (None when it can). It runs in a thread of the
        preflights, with that thread's own Repo."""
        repo = self.checker.own.get()
        if c.info.get("dirty"):
            return Verdict(c.branch, "refused", c.job,
                           reason="its worktree has uncommitted changes, which would not land")
        # One git process for the merge base and the change from it; `merge-base` alone when that change is
        # empty (everything on it may be in the lead already) or git could not say in one step.
        changes = since_fork(repo, lead_tip, c.tip)
        if not changes:
            base = repo.merge_base(lead_tip, c.tip)
            if base == c.tip:  # nothing on it that the lead lacks
                return Verdict(c.branch, "already", c.job, commit=lead_tip,
                               reason=f"everything on it is in {self.lead.branch} already")
            changes = repo.diff_tree(base, c.tip) if changes is None else changes
        touched = self.protected.held(repo, changes)  # protected paths and files past the size limit
        if SETTINGS_PATH in touched:
            bad = self._bad_settings(repo, c.tip)
            if bad:
                return Verdict(c.branch, "refused", c.job, paths=[SETTINGS_PATH],
                               reason=f"its {SETTINGS_PATH} is invalid: {bad}")
        if touched and not c.approved:
            return Verdict(
                c.branch, "held", c.job, paths=list(touched),
                reason=f"it changes {protect.words(touched)}, so it waits for you: look with "
                       f"`git diff {self.lead.branch}...{c.tip[:12]}`, then `git balanced land {c.branch} --yes`")
        m = self.merged[(lead_tip, c.tip)] = repo.merge_tree(lead_tip, c.tip)
        if not m.clean:
            return Verdict(c.branch, "conflict", c.job, paths=list(m.conflicts),
                           reason=f"it conflicts with {self.lead.branch} in " + ", ".join(m.conflicts))
        return None

    def _bad_settings(self, repo: Repo, rev: str) -> str | None:
        """Why the settings a branch brings are invalid (landing them would stop every later landing)."""
        from git_balanced.errors import SettingsError
        from git_balanced.lead import settings_at

        try:
            settings_at(repo, rev)
        except SettingsError as exc:
            return exc.message.splitlines()[0]
        return None

    def _chain(self, tip: str, batch: list[Candidate]) -> tuple[list[Link], list[Candidate]]:
        """Merge the batch onto `tip`; a branch that conflicts with one ahead of it waits for a later round."""
        # What a check ahead of its round built on this tip already is taken as it is (rounds.py).
        chain = [Link(c, commit, tree) for c, (commit, tree) in
                 zip(batch, self.checker.built_on(tip, [c.tip for c in batch]), strict=False)]
        later: list[Candidate] = []
        cur = chain[-1].commit if chain else tip
        for c in batch[len(chain):]:
            m = self._merge(cur, c.tip)
            if not m.clean:
                lead_only = self._merge(tip, c.tip)
                if not lead_only.clean or c.set_aside:
                    who = "" if not lead_only.clean else " and the branches landing with it"
                    self.verdicts.append(Verdict(c.branch, "conflict", c.job, paths=list(m.conflicts),
                                                 reason=f"it conflicts with {self.lead.branch}{who} in "
                                                        + ", ".join(m.conflicts)))
                else:
                    c.set_aside += 1
                    later.append(c)
                continue
            commit = self.repo.commit_tree(m.tree, [cur, c.tip], c.label)
            chain.append(Link(c, commit, m.tree))
            cur = commit
        return chain, later

    def _merge(self, ours: str, theirs: str) -> MergeResult:
        """`git merge-tree` of two commits, or what the preflight found for the same two."""
        found = self.merged.get((ours, theirs))
        return found if found is not None else self.repo.merge_tree(ours, theirs)

    def _checkout_changes(self) -> dict[str, str]:
        """The lead's uncommitted and untracked files, when its checkout is on the lead's branch (a landing
        moves that checkout); each with the words for it."""
        if self.repo.current_branch() != self.lead.branch:
            return {}
        entries = self.repo.status_entries()
        self._status = [p for _, p in entries]  # the first chain's guard takes it, read a moment ago
        return {path: f"your untracked file {path}" if code == "??" else f"your uncommitted change to {path}"
                for code, path in entries}

    def _in_the_way(self, tip: str, c: Candidate) -> bool:
        """Whether landing `c` on `tip` would write over the lead's own files; if so, it waits, saying which."""
        m = self._merge(tip, c.tip)
        if not m.clean:  # the chain names the conflict
            return False
        written = set(self.repo.changed_paths(tip, m.tree))
        folders = {w.rsplit("/", k)[0] for w in written for k in range(1, w.count("/") + 1)}

        def hit(path: str) -> bool:  # the same path, a file where a folder comes, or a folder where a file comes
            parts = path.split("/")
            return path in written or path in folders or any("/".join(parts[:k]) in written
                                                             for k in range(1, len(parts)))

        hits = sorted(p for p in self.checkout if hit(p))
        if not hits:
            return False
        what, it = ", ".join(self.checkout[p] for p in hits), "them" if len(hits) > 1 else "it"
        self.verdicts.append(Verdict(
            c.branch, "in_the_way", c.job, paths=hits,
            reason=f"{what} {'are' if len(hits) > 1 else 'is'} in the way: landing {c.branch} would overwrite "
                   f"{it}. Commit, move or remove {it}; then " +
                   (f"it lands on the engine's next pass, or with `git balanced land {c.branch}`" if c.job
                    else f"run `git balanced land {c.branch}` again")))
        return True

    def _dirty_guard(self, tip: str, top: str) -> None:
        """Refuse before any check runs when the lead's uncommitted changes overlap what would land."""
        fresh, self._status = self._status, None
        if fresh is None and self.repo.current_branch() != self.lead.branch:
            return
        dirty = set(self.repo.status_paths() if fresh is None else fresh)
        if not dirty:
            return
        overlap = sorted(dirty & set(self.repo.changed_paths(tip, top)))
        if overlap:
            raise BalancedError(
                f"Your uncommitted changes in {', '.join(overlap)} overlap what would land, so nothing moved.",
                hint="commit or stash them (`git stash`), then run `git balanced land` again.")

    # -- checking ------------------------------------------------------------------------------------------
    def _search(self, tip: str, chain: list[Link]) -> Search:
        """The longest passing prefix of `chain`, built on `tip`, and its first culprit (rounds.py)."""
        n = len(chain)
        if not self.cmds.check:  # no check set: landing is on your word, which `land` is
            return search(n, lambda idx: {i: True for i in idx}, 1, known={n: True})
        return self.checker.search(tip, chain)

    @property
    def check_runs(self) -> int:
        """Check runs spent, the speculative ones included."""
        return self.checker.runs

    @property
    def checks_stopped(self) -> int:
        """Checks stopped before their end, once their round's top passed: not among check_runs."""
        return self.checker.stopped

    @property
    def rounds(self) -> int:
        return self.checker.rounds

    @property
    def machine_checks(self) -> list[dict[str, Any]]:
        """The checks idle machines ran for this landing, each a hint (machine_checks.Machines.report)."""
        return self.checker.machines.report() if self.checker.machines else []

    @property
    def machines_dropped(self) -> dict[str, str]:
        """The machines dropped from this landing, and why."""
        return dict(self.checker.machines.dropped) if self.checker.machines else {}

    # -- landing -------------------------------------------------------------------------------------------
    def _move(self, tip: str, links: list[Link]) -> bool:
        """Note each landed merge, then move the lead's branch (compare-and-swap) and its checkout."""
        repo = self.repo
        target = links[-1]
        checked_out = repo.current_branch() == self.lead.branch
        if checked_out:
            # A merge that finds the branch locked has moved the files already when it fails: the checkout would
            # hold the landing and the branch not. So a live lock means wait; a stale one is removed.
            held = repo.held_locks(self.lead.ref)
            if held:
                raise LandingBusy(f"Another git command is writing {self.lead.branch} ({held[0]} exists), so "
                                    "nothing moved.", hint="landing goes on once it is done; a lock no git holds "
                                    "is removed once it is a minute old.")
        res = checks.for_landing(repo, target.tree, self.cmds.check) if self.cmds.check else None
        found: dict[str, dict[str, Any]] = {}
        for link in links:
            info = link.cand.info
            if any(r.get("job") == link.cand.job and r.get("branch") == link.cand.branch
                   for r in notes.read_json(repo, notes.LANDINGS, link.commit)):
                continue  # this landing, made again after a fault (the same merge, the same id), is noted already
            found[link.commit] = {
                "branch": link.cand.branch, "job": link.cand.job, "piece": info.get("piece"),
                "plan": info.get("plan"), "attempt": info.get("attempt"), "machine": info.get("machine"),
                "agent": info.get("agent"), "model": info.get("model"), "cost_usd": info.get("cost_usd"),
                "check": self.cmds.check, "result": "pass" if self.cmds.check else "unchecked",
                "seconds": res.seconds if res else None, "tree": link.tree, "checked_tree": target.tree,
                "into": self.lead.branch,
                "at": round(time.time(), 3)}
        notes.add_json_many(repo, notes.LANDINGS, found)  # one notes commit for the whole move, not one a merge
        crashpoint("after-notes")
        # Checks of a round not waited for may still run (rounds.py): this move is the lead's, not their code's.
        checks.landing_moves(repo, self.lead.ref, target.commit)
        if checked_out:
            # All or nothing: a move that fails (a full disk) leaves your checkout and index as they were.
            if not checkout.fast_forward(repo, self.lead.branch, tip, target.commit):
                return False
        elif not repo.cas_ref(self.lead.ref, target.commit, tip, message="balanced land"):
            return False
        crashpoint("after-move")
        for link in links:
            self.verdicts.append(Verdict(link.cand.branch, "landed", link.cand.job, commit=link.commit,
                                         check_seconds=res.seconds if res else None))
        return True
