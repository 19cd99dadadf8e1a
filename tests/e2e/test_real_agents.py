"""The real Claude Code, Codex and Pi as workers through `git balanced plan` and `engine`, each against its
own scripted model server: they land through the check with their cost on the board and in the landing note,
stop at their budgets, and a failed check climbs the model ladder."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from git_balanced.agents import get
from tests.support.model_server import Usage, hang, run_shell, say
from tests.support.plans import engine, inbox_text, jobs_of, lead_repo, plan
from tests.support.real_agents import (
    AGENTS,
    agent_piece,
    balanced_board_text,
    bodies,
    commit_turn,
    notes_by_piece,
    real_agents,
    rows,
)

# -- all three land ---------------------------------------------------------------------------------------

def test_three_real_agents_land_with_their_cost(tmp_path: Path, agent_bin: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    turns = {a: [commit_turn(f"src/{a}.txt", f"from {a}"), say(f"I wrote src/{a}.txt and committed it.")]
             for a in AGENTS}
    with real_agents(monkeypatch, agent_bin, turns) as servers:
        repo = lead_repo(tmp_path)
        r = plan(repo, [agent_piece(a, a) for a in AGENTS], "--start", budget=3.0)
        assert r.code == 0, r
        ran = engine(repo, "--until-idle", timeout=240)
        assert ran.code == 0, ran
    got = rows(repo)
    for a in AGENTS:
        assert got[a]["state"] == "landed", (a, got[a], inbox_text(repo))
        assert got[a]["agent"] == a and got[a]["attempt"] == 1
        assert (repo / "src" / f"{a}.txt").read_text() == f"from {a}\n", f"{a}'s file landed in main"
        assert servers[a].main_requests(), f"{a} talked to its own server"
        assert "Write src/" in bodies(servers[a])[0], f"{a} was given its piece's task"
    # Claude prices its tokens itself; Codex's tokens go through the price table (gpt-5.5: $5 in, $30 out
    # per million); Pi prices them with its models.json figures ($3 in, $15 out).
    assert float(got["claude"]["cost_usd"]) > 0  # type: ignore[arg-type]
    assert got["codex"]["cost_usd"] == pytest.approx(2 * (1200 * 5 + 80 * 30) / 1e6)
    assert got["pi"]["cost_usd"] == pytest.approx(2 * (1200 * 3 + 80 * 15) / 1e6)
    notes = notes_by_piece(repo)
    for a in AGENTS:
        assert notes[a]["agent"] == a and notes[a]["result"] == "pass"
        assert notes[a]["cost_usd"] == got[a]["cost_usd"], "the landing note carries the job's cost"
    shown = balanced_board_text(repo)
    assert f"${float(got['codex']['cost_usd']):.2f} of $1.00" in shown, shown  # type: ignore[arg-type]


# -- budgets ----------------------------------------------------------------------------------------------

def test_each_agent_stops_at_its_budget_and_what_it_committed_lands(tmp_path: Path, agent_bin: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    claude_reply = Usage(20_000, 500)  # $0.0675 a reply at sonnet's prices
    codex_reply = Usage(100_000, 2_000)  # $0.56 at gpt-5.5's
    pi_reply = Usage(100_000, 10_000)  # $0.45 at the scripted prices
    turns = {
        "claude": [commit_turn(f"src/claude-{n}.txt", n, claude_reply) for n in "abcdef"] + [say("done")],
        "codex": [commit_turn("src/codex-a.txt", "a", codex_reply), commit_turn("src/codex-b.txt", "b", codex_reply),
                  hang(120)],
        "pi": [commit_turn("src/pi-a.txt", "a", pi_reply), commit_turn("src/pi-b.txt", "b", pi_reply), hang(120)],
    }
    budgets = {"claude": 0.10, "codex": 1.0, "pi": 0.80}
    with real_agents(monkeypatch, agent_bin, turns) as servers:
        repo = lead_repo(tmp_path)
        for a in AGENTS:
            model = {"model": "sonnet"} if a == "claude" else {}
            assert plan(repo, [agent_piece(a, a, **model)], "--start", task=f"Spend {a}",
                        budget=budgets[a]).code == 0
        began = time.monotonic()
        ran = engine(repo, "--until-idle", timeout=240)
        took = time.monotonic() - began
        assert ran.code == 0, ran
        remaining = {a: servers[a].remaining() for a in AGENTS}
    text = inbox_text(repo)
    for a in AGENTS:
        attempts = jobs_of(repo, a)
        assert len(attempts) == 1, f"{a} was not tried again after its budget: {attempts}"
        row = attempts[0]
        assert row["state"] == "landed", (a, row, text)
        assert "stopped at its budget" in str(row["reason"]), row
        assert float(row["cost_usd"]) >= budgets[a], (a, row)  # type: ignore[arg-type]
        assert (repo / "src" / f"{a}-a.txt").exists(), f"what {a} committed before the stop landed"
        assert f"{a} was stopped at its budget" in text
    # Claude stopped itself between model calls; the meter stopped Codex and Pi once their second reply
    # passed the budget, even while their third request hung for two minutes.
    assert remaining["claude"] > 1, "Claude's own --max-budget-usd stopped it before its last turns"
    assert not (repo / "src" / "claude-f.txt").exists()
    assert took < 60, f"the meter stopped Codex and Pi at once, not when the hang ended ({took:.0f} s)"


# -- a stronger model -------------------------------------------------------------------------------------

def test_a_failed_check_climbs_the_ladder_with_what_is_left_of_the_budget(
        tmp_path: Path, agent_bin: str, monkeypatch: pytest.MonkeyPatch) -> None:
    mend = "git rm -q src/fixme.txt && printf 'fine\\n' > src/fixed.txt && git add src/fixed.txt && " \
           "git commit -q -m 'Mend fixme'"
    turns = {"claude": [commit_turn("src/fixme.txt", "BAD"), say("Done, I think."), run_shell(mend),
                        say("Mended it.")]}
    with real_agents(monkeypatch, agent_bin, turns) as servers:
        repo = lead_repo(tmp_path)
        assert plan(repo, [agent_piece("fixme", "claude")], "--start", budget=1.0).code == 0
        ran = engine(repo, "--until-idle", timeout=240)
        assert ran.code == 0, ran
    attempts = jobs_of(repo, "fixme")
    assert [(j["attempt"], j["model"], j["state"]) for j in attempts] == [
        (1, "haiku", "retried"), (2, "sonnet", "landed")], attempts
    spent = float(attempts[0]["cost_usd"])  # type: ignore[arg-type]
    assert spent > 0
    assert attempts[1]["budget_usd"] == pytest.approx(1.0 - spent, abs=1e-4), "attempt 2 gets what is left"
    models = [r.body.get("model", "") for r in servers.claude.main_requests()]
    assert "haiku" in models[0] and "sonnet" in models[-1], models
    firsts = [json.dumps(r.body.get("messages", [])[:1]) for r in servers.claude.main_requests()
              if "sonnet" in r.body.get("model", "")]
    assert firsts and "Your last attempt at this piece (attempt 1)" in firsts[0] and \
        "its check failed (exit 1)" in firsts[0], "attempt 2's first message says why attempt 1 failed"
    assert (repo / "src" / "fixed.txt").exists() and not (repo / "src" / "fixme.txt").exists()
    text = inbox_text(repo)
    assert f"Tries again with a stronger model: attempt 2 on sonnet, with ${1.0 - spent:.2f} of its budget left" \
        in text, text
    shown = balanced_board_text(repo)
    assert "haiku · attempt 1" in shown and "sonnet · attempt 2" in shown, shown


# -- mixed agents and modes -------------------------------------------------------------------------------

REFUSES_ROOT = ("bypassPermissions", "--dangerously-skip-permissions")
BEYOND = ("danger-full-access", "--dangerously-bypass-approvals-and-sandbox", "--yolo", "--full-auto")


def _argv(agent: str, edit: bool) -> list[str]:
    run = get(agent).build(task="t", rules="r", model=None, budget_usd=1.0, worktree="/w", run_dir="/r",
                           edit_without_asking=edit)
    return run.argv


def test_each_agent_gets_the_leads_mode_and_no_more() -> None:
    # Editing without asking: Claude acceptEdits with the tools named, Codex's workspace-write sandbox, Pi's
    # own tools. Asking first: Claude's default mode with reading tools, Codex read-only, Pi reading tools.
    claude, codex, pi = (_argv(a, True) for a in AGENTS)
    assert claude[claude.index("--permission-mode") + 1] == "acceptEdits"
    assert "Bash" in claude[claude.index("--allowedTools") + 1]
    assert codex[codex.index("--sandbox") + 1] == "workspace-write"
    assert "--tools" not in pi
    claude, codex, pi = (_argv(a, False) for a in AGENTS)
    assert claude[claude.index("--permission-mode") + 1] == "default"
    assert claude[claude.index("--allowedTools") + 1] == "Read,Glob,Grep"
    assert codex[codex.index("--sandbox") + 1] == "read-only"
    assert pi[pi.index("--tools") + 1] == "read,grep,find,ls"
    for a in AGENTS:
        for edit in (True, False):
            argv = " ".join(_argv(a, edit))
            assert not any(word in argv for word in REFUSES_ROOT + BEYOND), (a, edit, argv)


def test_a_piece_names_its_agent_and_the_mode_follows_the_leads(tmp_path: Path, agent_bin: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # The lead lets workers edit only after asking: Codex then runs in its read-only sandbox and Claude in its
    # default mode with reading tools, so neither's shell write goes through. Running as root (as here, on
    # most build machines) changes none of it: no mode that refuses root is used.
    write = {a: run_shell(f"printf 'x\\n' > src/{a}.txt") for a in ("claude", "codex")}
    turns = {a: [write[a], say("I could not write.")] for a in ("claude", "codex")}
    with real_agents(monkeypatch, agent_bin, turns) as servers:
        repo = lead_repo(tmp_path, extra="workers_edit_without_asking = false\nattempts = 1\n")
        assert plan(repo, [agent_piece("codex", "codex"), agent_piece("claude", "claude")], "--start").code == 0
        assert engine(repo, "--until-idle", timeout=240).code == 1, "both pieces fail, as meant"
        asked = {a: len(servers[a].main_requests()) for a in ("claude", "codex")}
    got = rows(repo)
    for a in ("claude", "codex"):
        assert got[a]["agent"] == a, "each piece runs its own agent"
        assert asked[a] == 2, f"{a} ran, asked for the write and was told how it went ({asked[a]} requests)"
        # Had the write gone through, the runner would have committed it and the piece landed.
        assert got[a]["state"] == "failed", got[a]
        assert f"{a} finished without committing anything" in inbox_text(repo)
    assert not (repo / "src" / "codex.txt").exists() and not (repo / "src" / "claude.txt").exists()
