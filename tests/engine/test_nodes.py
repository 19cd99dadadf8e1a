"""Two clones sharing one plan through `sync` and a bare remote: one engine per job, each piece lands once,
and a job is taken over only when its owner's heartbeat has gone stale."""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from git_balanced import jobs as J
from git_balanced.engine.loop import Engine
from git_balanced.git import Repo
from git_balanced.lead import open_lead
from git_balanced.state import nodes
from git_balanced.state.events import node_id
from git_balanced.state.sync import sync
from tests.support.builders import git, make_remote
from tests.support.cli import balanced
from tests.support.plans import inbox_text, lead_repo, piece
from tests.support.wait import wait_until


class Clone:
    """One clone with a HOME of its own, as if on a machine of its own (its own runs and worktrees)."""

    def __init__(self, path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.path, self.home, self.mp = path, home, monkeypatch
        home.mkdir()
        (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n[protocol \"file\"]\n\tallow = always\n")

    @contextmanager
    def here(self) -> Iterator[Repo]:
        self.mp.setenv("HOME", str(self.home))
        yield Repo.discover(self.path)

    def engine_pass(self) -> None:
        with self.here():
            Engine(open_lead(str(self.path))).pass_once()

    def sync(self) -> None:
        with self.here() as repo:
            sync(repo, "origin")

    def share_main(self) -> None:
        """The lead's branch too, as people sharing a repository do with pull and push."""
        with self.here() as repo:
            git(self.path, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
            assert repo.push("origin", ["main"]).ok

    def node(self) -> str:
        with self.here() as repo:
            return node_id(repo)

    def jobs(self) -> dict[str, J.Job]:
        with self.here() as repo:
            return J.all_jobs(repo)

    def plan(self, pieces: list[dict[str, object]]) -> None:
        """`git balanced plan FILE --start`, in this process (the loop stores forty plans)."""
        from git_balanced.cli import main

        doc = self.home / "plan.json"
        doc.write_text(json.dumps({"task": "A test plan", "pieces": pieces}))
        with self.here():
            self.mp.chdir(self.path)
            assert main(["plan", str(doc), "--start"]) == 0


def monkeypatch_home(mp: pytest.MonkeyPatch, home: Path) -> None:
    mp.setenv("HOME", str(home))


def two_clones(tmp: Path, mp: pytest.MonkeyPatch, extra: str = "") -> tuple[Clone, Clone]:
    a = Clone(lead_repo(tmp, extra=extra), tmp / "home-a", mp)
    bare = make_remote(tmp, a.path)
    b = Clone(tmp / "b", tmp / "home-b", mp)
    monkeypatch_home(mp, b.home)
    git(tmp, "clone", "-q", str(bare), "b")
    with b.here():
        assert balanced(b.path, "allow", "--yes").code == 0
    assert a.node() != b.node(), "each clone is a node of its own"
    return a, b


def inbox(c: Clone) -> str:
    """The lead's inbox on a clone, one line a message ("" while it has none)."""
    with c.here() as repo:
        return inbox_text(c.path) if repo.read_ref("refs/balanced/inbox/main") else ""


def landed_by_piece(c: Clone) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for j in c.jobs().values():
        if j.state == "landed":
            out.setdefault(j.piece, []).append(j.id)
    return out


def board_view(c: Clone) -> dict[str, tuple[str, str, str | None]]:
    return {jid: (j.piece, j.state, j.node or None) for jid, j in c.jobs().items()}


def test_two_clones_racing_for_many_rounds_land_each_piece_once(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = two_clones(tmp_path, monkeypatch, extra="cap = 2\n")
    rng = random.Random(14)
    pieces: list[str] = []
    started_by: dict[str, set[str]] = {}
    for rnd in range(4):  # 16 pieces; each round costs about 2 CPU seconds of syncs and passes
        names = [f"r{rnd}p{i}" for i in range(4)]
        pieces += names
        (a, b)[rnd % 2].plan([piece(n, f"echo {n} > src/{n}.txt") for n in names])

        def step(names: list[str] = names) -> bool:
            for c in rng.sample([a, b], 2):  # who syncs and passes first changes every time
                c.sync()
                c.engine_pass()
            for j in a.jobs().values():
                if j.node:
                    started_by.setdefault(j.piece, set()).add(j.node)
            landed = landed_by_piece(a)
            return all(n in landed for n in names)

        wait_until(step, 90, f"round {rnd} to land")  # 30 s was too short at load 20
    for c in (a, b, a, b):
        c.sync()
        c.share_main()
    assert board_view(a) == board_view(b), "both clones fold every job the same"
    for c in (a, b):
        landed = landed_by_piece(c)
        assert sorted(landed) == sorted(pieces), "every piece landed"
        twice = {p: ids for p, ids in landed.items() if len(ids) != 1}
        assert not twice, f"pieces landed more than once: {twice}"
        for n in pieces:  # in the code too: one commit brought each piece's file, not two runs of it
            assert len(git(c.path, "log", "--format=%H", "main", "--", f"src/{n}.txt").split()) == 1, n
    assert git(a.path, "rev-parse", "main") == git(b.path, "rev-parse", "main")
    owners = {node for ns in started_by.values() for node in ns}
    assert owners == {a.node(), b.node()}, "both clones' engines ran pieces: a real race, not one engine"


@contextmanager
def offline(tmp: Path) -> Iterator[None]:
    """The shared remote out of reach for a while."""
    bare, away = tmp / "origin.git", tmp / "origin.away"
    bare.rename(away)
    try:
        yield
    finally:
        away.rename(bare)


def test_two_clones_apart_never_both_start_a_piece(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the shared remote out of reach, neither clone starts a piece of the shared plan: a claim counts once
    the remote has taken it. What runs goes on; the lead hears why the rest waits; once the remote is back, the
    piece runs on one clone and lands once."""
    a, b = two_clones(tmp_path, monkeypatch, extra="cap = 1\n")
    gate = tmp_path / "first-may-end"
    a.plan([piece("first", f"until [ -f {gate} ]; do sleep 0.05; done; echo 1 > src/first.txt"),
            piece("second", "echo 2 > src/second.txt")])
    a.engine_pass()  # `first` runs on a (its cap is 1); `second` waits, queued
    a.sync()
    b.sync()
    second = next(j for j in b.jobs().values() if j.piece == "second")
    assert second.state == "queued" and not second.node
    with offline(tmp_path):
        b.engine_pass()
        b.engine_pass()
        assert b.jobs()[second.id].state == "queued", "b cannot reach the remote, so it starts nothing new"
        assert inbox(b).count("cannot be reached now") == 1, "b's lead hears why, once"
        gate.touch()
        wait_until(lambda: (a.engine_pass(), "first" in landed_by_piece(a))[1], 20, "first to land on a, offline")
        a.engine_pass()
        assert a.jobs()[second.id].state == "queued", "nor does a start it"
        assert "cannot be reached now" in inbox(a)

    def both_seen_landed() -> bool:
        """A sync and a pass on each clone; True once each sees both pieces landed (the board and inbox of
        both are shown if it never happens)."""
        for c in (a, b):
            c.sync()
            c.engine_pass()
        return all({"first", "second"} <= set(landed_by_piece(c)) for c in (a, b))

    wait_until(both_seen_landed, 120, "both pieces to land, seen from both clones",
               said=lambda: f"a: {board_view(a)}\n{inbox(a)}\nb: {board_view(b)}\n{inbox(b)}")
    with b.here():
        reasons = {r["piece"]: r["reason"] for r in json.loads(balanced(b.path, "board", "--json").out)["jobs"]}
    assert "on another clone" in reasons["first"] and "not in this clone's main yet" in reasons["first"], \
        "b never says `first` landed in its main before it pulled a's"
    with b.here():
        said = balanced(b.path, "inbox").out
    assert f"(clone {a.node()}) Its check passed, so balanced/first landed in main as " in said, \
        f"a's lines, synced to b, say whose they are:\n{said}"
    for c in (a, b, a):
        c.share_main()
    with b.here():
        reasons = {r["piece"]: r["reason"] for r in json.loads(balanced(b.path, "board", "--json").out)["jobs"]}
    assert reasons["first"].startswith("landed in main as "), reasons
    owner = a.jobs()[second.id].node
    assert owner == b.jobs()[second.id].node, "both clones fold to one owner"
    for c in (a, b):
        landed = landed_by_piece(c)
        assert len(landed["second"]) == 1 and len(landed["first"]) == 1, landed
        assert len(git(c.path, "log", "--format=%H", "main", "--", "src/second.txt").split()) == 1
    history = git(a.path, "log", "--format=%s", f"refs/balanced/jobs/{second.id}").splitlines()
    assert len([s for s in history if s.startswith("second: started on")]) == 1, \
        f"one clone started `second`, never both: {history}"
    assert "start again" in inbox(a) + inbox(b), "the lead hears the pieces start again"


def test_a_job_is_taken_over_only_once_its_owner_is_silent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = two_clones(tmp_path, monkeypatch, extra="takeover_after = 2\n")
    # On a the piece hangs (its machine is as good as gone); anywhere else it is done at once.
    run = f'if [ "$HOME" = "{a.home}" ]; then sleep 60; fi; echo slow > src/slow.txt'
    a.plan([piece("slow", run)])
    a.engine_pass()
    a.sync()
    b.sync()
    [job] = b.jobs().values()
    assert job.state == "running" and job.node == a.node()

    # While a's engine keeps passing and syncing, its heartbeat stays fresh: b never takes the job.
    end = time.monotonic() + 4
    while time.monotonic() < end:
        a.engine_pass()
        a.sync()
        b.sync()
        b.engine_pass()
        assert b.jobs()[job.id].node == a.node(), "a fresh heartbeat keeps the job with its owner"
    with b.here() as repo:
        assert nodes.silent_since(repo, a.node(), 2) is None
        assert "takes it over" not in inbox(b)
        beat = nodes.beats(repo)[a.node()]
    assert time.time() - beat < 3, "the heartbeat was rewritten while the engine ran"
    assert len(git(a.path, "rev-list", f"refs/balanced/nodes/{a.node()}").split()) == 1, \
        "the heartbeat is one commit rewritten, not a chain that grows"

    # a's engine stops. Once b has seen the same heartbeat for longer than the limit, it takes the job over.
    def taken() -> bool:
        b.sync()
        b.engine_pass()
        return b.jobs()[job.id].node == b.node()

    wait_until(taken, 15, "b to take the job over")
    text = inbox(b)
    assert re.search(rf"slow: its engine on {a.node()} has been silent since \d\d:\d\d; this clone takes it over",
                     text), text
    assert b.jobs()[job.id].state in ("lost", "retried") and b.jobs()[job.id].taken_from == a.node()
    wait_until(lambda: (b.sync(), b.engine_pass(), "slow" in landed_by_piece(b))[2], 20, "slow to land on b")
    # a comes back: it learns the job was taken over, stops its own worker, and lands nothing.
    a.sync()
    a.engine_pass()
    assert f"slow: the engine on {b.node()} took it over; this clone stopped its own worker" in inbox(a)
    for c in (a, b, a):
        c.sync()
        c.share_main()
    for c in (a, b):
        assert len(landed_by_piece(c)["slow"]) == 1
        assert len(git(c.path, "log", "--format=%H", "main", "--", "src/slow.txt").split()) == 1
    assert board_view(a) == board_view(b)


def test_land_refuses_a_job_another_clone_owns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = two_clones(tmp_path, monkeypatch)
    gate = tmp_path / "go"
    a.plan([piece("held", f"until [ -f {gate} ]; do sleep 0.05; done; echo h > src/held.txt")])
    a.engine_pass()
    a.sync()
    b.sync()
    [job] = b.jobs().values()
    with b.here():
        r = balanced(b.path, "land", job.id)
    assert r.code == 1 and f"belongs to the engine on node {a.node()}" in r.err, r
    assert "Traceback" not in r.err
    gate.touch()
    wait_until(lambda: (a.engine_pass(), "held" in landed_by_piece(a))[1], 20, "held to land on a")
