"""The reserve: the plan windows each account reports are kept, and an account past the part you keep takes
no new workers, with the lead told why; among equally busy machines the account with more room wins."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from git_balanced.git import Repo
from git_balanced.lead import Lead
from git_balanced.machines.inventory import records as inventory
from git_balanced.machines.inventory.placement import Seat, counted
from git_balanced.machines.placing import accounts
from git_balanced.machines.placing import seats as seats_mod
from git_balanced.machines.prepare import agents_probe
from git_balanced.settings import load_settings_text
from git_balanced.ui import clock
from tests.support.builders import commit, make_repo
from tests.support.cli import balanced
from tests.support.model_server import say
from tests.support.plans import board, engine, inbox_text, jobs_of, lead_repo, plan
from tests.support.real_agents import agent_piece, commit_turn, real_agents


def test_an_account_past_the_reserve_takes_no_new_worker(tmp_path: Path, agent_bin: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # Claude (signed in to a plan) and Codex both answer with their plan's 5-hour window 84% used.
    turns = {a: [commit_turn(f"src/{a}-1.txt", "1"), say("Done."), commit_turn(f"src/{a}-2.txt", "2"), say("Done.")]
             for a in ("claude", "codex")}
    with real_agents(monkeypatch, agent_bin, turns, subscription=True, plan_used_percent=84.0):
        repo = lead_repo(tmp_path)
        pieces = [agent_piece(f"{a}-1", a) for a in ("claude", "codex")]
        assert plan(repo, pieces, "--start", task="First").code == 0
        assert engine(repo, "--until-idle", timeout=240).code == 0
        assert all(jobs_of(repo, f"{a}-1")[0]["state"] == "landed" for a in ("claude", "codex")), board(repo)
        kept = {a: accounts.windows(Repo.discover(str(repo)), a, "local") for a in ("claude", "codex")}
        for a in ("claude", "codex"):
            assert kept[a]["five_hour"]["used_percent"] == 84.0, (a, kept[a])
        # The default reserve keeps 20%: past 80% used, neither account takes the next piece.
        assert plan(repo, [agent_piece(f"{a}-2", a) for a in ("claude", "codex")], "--start",
                    task="Second").code == 0
        assert engine(repo, "--once").code == 0
        assert engine(repo, "--once").code == 0
        text = inbox_text(repo)
        for a, name in (("claude", "Claude"), ("codex", "Codex")):
            row = jobs_of(repo, f"{a}-2")[0]
            assert row["state"] == "queued", row
            reset = clock(float(kept[a]["five_hour"]["resets_at"]))
            words = f"its plan's 5-hour window is 84% used, past the 20% you keep, resets {reset}"
            assert f"{a}-2 waits: {name} on local takes no new workers, as {words}" in text, text
            assert row["reason"] == f"waits: {words}", row
            assert text.count(f"{a}-2 waits:") == 1, "said once, not on every pass"
        # Keep 10% instead, committed as the lead's settings: 84% is under 90%, so both start and land.
        settings = (repo / ".magnum" / "settings.toml").read_text() + "reserve = 10\n"
        commit(repo, {".magnum/settings.toml": settings}, "Keep 10% of each plan window")
        assert balanced(repo, "allow", "--yes").code == 0
        assert engine(repo, "--until-idle", timeout=240).code == 0
    for a in ("claude", "codex"):
        assert jobs_of(repo, f"{a}-2")[0]["state"] == "landed"
        assert (repo / "src" / f"{a}-2.txt").exists()


# -- the words and the thresholds -------------------------------------------------------------------------

@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo.discover(str(make_repo(tmp_path / "r")))


def test_each_reserve_keeps_its_part(repo: Repo) -> None:
    reset = time.time() + 3600
    accounts.record(repo, "claude", "local", [{"type": "five_hour", "used_percent": 84.0, "resets_at": reset},
                                              {"type": "seven_day", "used_percent": 30.0, "resets_at": reset}])
    past = {r: accounts.room(repo, "claude", "local", r) for r in (0, 10, 20, 30, 50)}
    assert [r for r, room in past.items() if not room.open] == [20, 30, 50]
    assert past[30].words == f"its plan's 5-hour window is 84% used, past the 30% you keep, resets {clock(reset)}"
    assert past[10].open and past[10].used == 84.0 and past[10].fullest == "five_hour"
    assert accounts.refusal(repo, "claude", "local", 10) is None
    assert accounts.refusal(repo, "codex", "local", 50) is None, "an account nobody reported on has room"
    assert accounts.refusal(repo, "shell", "local", 50) is None, "a shell command spends no plan"


def test_windows_are_kept_until_their_reset(repo: Repo) -> None:
    now = time.time()
    accounts.record(repo, "codex", "box", [{"type": "five_hour", "used_percent": 95.0, "resets_at": now + 5}],
                    now=now)
    accounts.record(repo, "codex", "box", [{"type": "seven_day", "used_percent": 40.0, "resets_at": now + 900}],
                    now=now)
    assert set(accounts.windows(repo, "codex", "box", now=now)) == {"five_hour", "seven_day"}, \
        "a newer report keeps the other windows"
    later = now + 10
    assert set(accounts.windows(repo, "codex", "box", now=later)) == {"seven_day"}, "a reset window is gone"
    assert accounts.room(repo, "codex", "box", 50, now=now).words.startswith("its plan's 5-hour window is 95%")
    assert accounts.room(repo, "codex", "box", 50, now=later).open
    assert accounts.windows(repo, "codex", "local") == {}, "each machine's account is its own"


def test_a_limit_counts_as_a_full_window_until_it_resets(repo: Repo) -> None:
    reset = time.time() + 600
    accounts.record(repo, "pi", "local", [], limited_until=reset)
    r = accounts.refusal(repo, "pi", "local", 0)
    assert r is not None and r.words == f"its plan's usage limit is reached, resets {clock(reset)}"


def test_among_equally_busy_machines_the_account_with_more_room_wins(repo: Repo) -> None:
    reset = time.time() + 3600
    accounts.record(repo, "claude", "local", [{"type": "five_hour", "used_percent": 70.0, "resets_at": reset}])
    accounts.record(repo, "claude", "box", [{"type": "five_hour", "used_percent": 30.0, "resets_at": reset}])
    seats = [Seat("local"), Seat("box")]
    p = accounts.choose_with_room(repo, seats, agent="claude", reserve=20)
    assert p.machine == "box", p
    assert p.why == "box: as busy as the others, and Claude has more room there (30% of its plan's 5-hour " \
                    "window used; local 70%)"
    seats = counted(seats, p.machine)
    # Busier now, box loses to local even with more room: room only breaks ties.
    assert accounts.choose_with_room(repo, seats, agent="claude", reserve=20).machine == "local"
    # Codex has no windows on either: placement as usual (local first among equals).
    assert accounts.choose_with_room(repo, [Seat("local"), Seat("box")], agent="codex", reserve=20).machine \
        == "local"
    named = accounts.choose_with_room(repo, [Seat("local"), Seat("box")], agent="claude", reserve=20,
                                      explicit="local")
    assert named.machine == "local" and "named by the plan" in named.why


def test_the_machines_you_ticked_place_on_the_roomier_account(tmp_path: Path) -> None:
    repo_path = lead_repo(tmp_path)
    ssh = Path(os.environ["GIT_BALANCED_SSH_CONFIG"])
    ssh.parent.mkdir(parents=True, exist_ok=True)
    ssh.write_text("Host box\n  HostName 127.0.0.1\n")
    r = balanced(repo_path, "machines", "add", "box")
    assert r.code == 0, r
    r = Repo.discover(str(repo_path))
    # What `ready` records of a box it found ready, with Claude on it.
    inventory.set_readiness(r, "box", {"ready": True, "agents": ["claude"], "why": ""})
    assert balanced(repo_path, "tick", "box").code == 0
    reset = time.time() + 3600
    accounts.record(r, "claude", "local", [{"type": "five_hour", "used_percent": 60.0, "resets_at": reset}])
    accounts.record(r, "claude", "box", [{"type": "five_hour", "used_percent": 10.0, "resets_at": reset}])
    seats = seats_mod.seats(Lead(r, "main"))
    assert {s.name for s in seats if s.ready and s.ticked} == {"local", "box"}
    p = accounts.choose_with_room(r, seats, agent="claude", reserve=20)
    assert p.machine == "box" and "more room" in p.why, p


def test_the_agents_a_piece_may_move_to(tmp_path: Path) -> None:
    only = load_settings_text('[balanced]\nagent = "claude"\n', "s.toml")
    assert agents_probe.configured_agents(only) == ["claude"], "Claude's default ladder names no other agent"
    more = load_settings_text('[balanced]\nagent = "shell"\n[agents.codex]\nmodels = ["gpt-5.5"]\n'
                              '[agents.pi]\nmodels = ["scripted-coder"]\n', "s.toml")
    assert agents_probe.configured_agents(more) == ["codex", "pi"]


def test_the_waits_have_their_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(accounts.ENV_MARGIN, raising=False)
    monkeypatch.delenv(accounts.ENV_UNKNOWN, raising=False)
    assert accounts.resume_margin() == 60.0, "a minute after the reset"
    assert accounts.unknown_reset() == 3600.0, "an hour when the agent does not say (Pi)"
    monkeypatch.setenv(accounts.ENV_MARGIN, "")
    assert accounts.resume_margin() == 60.0, "empty is unset (a wrong one is an error: tests/test_knobs.py)"


def test_windows_are_kept_per_account_so_repositories_and_machines_on_one_share_them(tmp_path: Path) -> None:

    one, two = Repo.discover(str(lead_repo(tmp_path / "one"))), Repo.discover(str(lead_repo(tmp_path / "two")))
    same = {"installed": True, "signed_in": True, "account": "ada@example.com"}
    agents_probe.keep("local", {"agents": {"claude": same}})
    agents_probe.keep("box", {"agents": {"claude": same, "codex": {"installed": True, "signed_in": True}}})
    reset = time.time() + 3600
    accounts.record(one, "claude", "local", [{"type": "five_hour", "used_percent": 90.0, "resets_at": reset}])
    assert accounts.account("claude", "box") == "claude:ada@example.com", "the identity the CLI reported"
    r = accounts.refusal(two, "claude", "box", 20)
    assert r is not None and "90% used" in r.words, "another repository, another machine, the same account"
    accounts.record(two, "codex", "box", [{"type": "primary", "used_percent": 50.0, "resets_at": reset}])
    assert accounts.windows(one, "codex", "box")["primary"]["used_percent"] == 50.0, "shared between repositories"
    assert accounts.windows(one, "codex", "local") == {}, "an account the CLI names no one for is its machine's"
