"""The lead's spend counts against its plan's budget: a worker starts with its piece's share of what the lead
left, and once the lead and the workers spent the whole budget, the plan's workers are stopped and its waiting
pieces do not start. The lead's spend is written in its headless record by hand, as its turns would."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from git_balanced import jobs as J
from git_balanced.channel import presence
from git_balanced.engine.workers import build_request
from git_balanced.files import write_atomic
from git_balanced.job_events import Failed, record
from git_balanced.lead import Lead, open_lead
from git_balanced.machines.reach.hosts import LocalHost
from git_balanced.vocab import Failure
from tests.support.cli import balanced
from tests.support.model_server import hang
from tests.support.plans import engine, inbox_text, jobs_of, lead_repo, piece, plan
from tests.support.real_agents import agent_piece, balanced_board_text, real_agents, rows
from tests.support.wait import gone, wait_for_file, wait_until


def _lead_spent(lead: Lead, plan_cost: dict[str, float]) -> None:
    """The headless lead's record, its turns having spent `plan_cost` on each plan."""
    write_atomic(presence.lead_dir(lead.repo, lead.branch) / "lead.json",
                 json.dumps({"agent": "claude", "task": "Write it.", "state": "waiting", "turns": 2, "pid": None,
                             "cost_usd": sum(plan_cost.values()), "plan_cost": plan_cost}))


def _place(lead: Lead, plan_id: str, piece: str, budget: float, **more: object) -> J.Job:
    jid = J.place(lead.repo, {"plan": plan_id, "piece": piece, "task": f"Write src/{piece}.txt.", "agent": "claude",
                              "machine": "local", "branch": f"balanced/{piece}", "attempt": 1, "lead": lead.branch,
                              "budget_usd": budget, **more})
    job = J.one(lead.repo, jid)
    assert job is not None
    return job


def _max_budget(lead: Lead, job: J.Job, others: list[J.Job]) -> str:
    argv = build_request(lead, job, LocalHost(lead.repo), None, None, False, others).argv
    return str(argv[argv.index("--max-budget-usd") + 1])


def test_a_workers_start_budget_is_its_share_of_what_the_lead_left(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    pieces = [agent_piece("big", "claude", size=3), agent_piece("small", "claude")]
    assert plan(repo, pieces, "--wait", budget=1.0).code == 0
    lead = open_lead(str(repo))
    stored = next(iter(J.all_plans(lead.repo).values()))
    shares = {p.id: p.budget_usd for p in stored.pieces}
    assert shares == {"big": 0.75, "small": 0.25}, "the budget is split 3:1 by size"
    jobs = [_place(lead, stored.id, p, float(b or 0)) for p, b in shares.items()]
    assert [_max_budget(lead, j, jobs) for j in jobs] == ["0.7500", "0.2500"], "no lead spend: the shares as they are"

    _lead_spent(lead, {stored.id: 0.40})
    assert [_max_budget(lead, j, jobs) for j in jobs] == ["0.4500", "0.1500"], \
        "each share scaled by what the lead left: 0.75 × 0.60 and 0.25 × 0.60"
    argv = build_request(lead, jobs[0], LocalHost(lead.repo), None, None, False, jobs).argv
    assert any("Your budget is $0.45; you are stopped when it is spent." in a for a in argv), \
        "the worker is told the budget it starts with"

    # big's first attempt spent $0.55 and failed: what is left of its share ($0.20 × 0.60 = $0.12) is more than the
    # plan has left ($1.00 − $0.40 − $0.55), so its next attempt starts with the plan's last $0.05.
    first = _place(lead, stored.id, "big", 0.75)
    record(lead.repo, first.id, Failed(failure=Failure.CHECK_FAILED, reason="its check failed", event="failed",
                                        ran={"cost_usd": 0.55}), "big: its check failed")
    again = _place(lead, stored.id, "big", 0.20, attempt=2, previous=first.id)
    everyone = [*jobs[1:], J.one(lead.repo, first.id), again]
    assert _max_budget(lead, again, everyone) == "0.0500", "the lead and the workers never pass the budget"


def test_no_piece_of_a_plan_whose_lead_spent_its_budget_starts(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    assert plan(repo, [piece("alpha", "echo a > src/alpha.txt"), piece("beta", "echo b > src/beta.txt")],
                budget=0.5).code == 0
    lead = open_lead(str(repo))
    plan_id = next(iter(J.all_plans(lead.repo)))
    _lead_spent(lead, {plan_id: 0.6})  # it spent more than the budget on the plan before starting it
    assert balanced(repo, "start").code == 0
    assert engine(repo, "--until-idle").code == 1, "the plan ended with nothing landed"
    assert not (repo / "src" / "alpha.txt").exists() and not (repo / "src" / "beta.txt").exists()
    assert sorted((j.piece, j.state, j.failure, j.pid) for j in J.all_jobs(lead.repo).values()) == [
        ("alpha", "failed", "budget", None), ("beta", "failed", "budget", None)], "placed, never started, not retried"
    assert f"Plan {plan_id} spent its budget of $0.50: its lead $0.60, its workers $0.00. Stopped, and not tried " \
        "again: alpha (it had not started), beta (it had not started)." in inbox_text(repo)


def test_a_failed_piece_of_a_plan_whose_budget_is_spent_is_not_tried_again(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    assert plan(repo, [piece("broken", "echo nope; exit 4")], "--start", budget=0.5).code == 0
    assert engine(repo, "--once").code == 0, "it starts with the whole budget"
    [job] = jobs_of(repo, "broken")
    wait_for_file(Path(os.environ["HOME"]) / ".balanced" / "runs" / str(job["id"]) / "result.json", 30,
                  "its command to end")  # the next pass finds it failed, not running
    lead = open_lead(str(repo))
    plan_id = next(iter(J.all_plans(lead.repo)))
    _lead_spent(lead, {plan_id: 0.5})  # meanwhile the lead spent the rest
    assert engine(repo, "--until-idle").code == 1
    assert [(j["attempt"], j["state"]) for j in jobs_of(repo, "broken")] == [(1, "failed")], "no attempt 2"
    text = inbox_text(repo)
    assert f"Plan {plan_id} spent its budget of $0.50: its lead $0.50, its workers $0.00. Stopped, and not tried " \
        "again: broken (it failed)." in text, text
    assert "Tries again" not in text, text

    ran = balanced(repo, "retry", str(job["id"]))  # nor by hand: another attempt would spend more than was given
    assert ran.code == 1 and "Traceback" not in ran.err, ran
    assert f"broken ({job['id']}) is of plan {plan_id}, which spent its budget of $0.50: its lead $0.50, its " \
        "workers $0.00; another attempt would spend more than the plan was given." in ran.err, ran.err
    assert "To go on, store the pieces still to do as a new plan with a budget of its own: " \
        "`git balanced plan FILE --budget USD --start`" in ran.err, ran.err
    assert [(j["attempt"], j["state"]) for j in jobs_of(repo, "broken")] == [(1, "failed")], "nothing placed"


@pytest.mark.agents
def test_a_plan_whose_lead_spent_its_budget_stops_its_workers(tmp_path: Path, agent_bin: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    with real_agents(monkeypatch, agent_bin, {"claude": [hang(120)]}) as servers:
        repo = lead_repo(tmp_path, extra="cap = 1\n")  # one worker at a time: beta waits, queued
        assert plan(repo, [agent_piece("alpha", "claude"), agent_piece("beta", "claude")], "--start",
                    budget=1.0).code == 0
        assert engine(repo, "--once").code == 0
        wait_until(servers.claude.main_requests, 60, "alpha's Claude Code to ask its model")
        lead = open_lead(str(repo))
        [alpha] = jobs_of(repo, "alpha")
        assert (alpha["state"], rows(repo)["beta"]["state"]) == ("running", "queued")
        agent_pid = int((Path(os.environ["HOME"]) / ".balanced" / "runs" / str(alpha["id"]) / "agent_pid")
                        .read_text().split()[0])
        plan_id = str(alpha["plan"])
        _lead_spent(lead, {plan_id: 1.0})  # the lead's turns spent the whole budget meanwhile

        assert engine(repo, "--once").code == 0
        wait_until(lambda: gone(agent_pid), 30, "alpha's Claude Code to end")
        assert engine(repo, "--until-idle").code == 0, "the pass before ended the plan: nothing is left to run"
    ended = sorted((j.piece, j.state, j.failure, j.budget_stopped, j.decided, j.pid is not None)
                   for j in J.all_jobs(lead.repo).values())
    assert ended == [("alpha", "stopped", "budget", True, True, True),
                     ("beta", "failed", "budget", True, True, False)], \
        "alpha stopped while it ran, beta never started, and neither was tried again"
    text = inbox_text(repo)
    line = (f"Plan {plan_id} spent its budget of $1.00: its lead $1.00, its workers $0.00. Stopped, and not tried "
            "again: alpha (it was running), beta (it had not started). To go on, store the pieces still to do as a "
            "new plan with a budget of its own: `git balanced plan FILE --budget USD --start` (the plan tool's "
            "`budget`).")
    assert text.count(line) == 1, text
    assert "Plan 'A test plan' is done: 0 landed, 2 failed" in text, text
    assert "did not land" not in text and "Tries again" not in text, "one line for the plan, no retry"
    shown = balanced_board_text(repo)
    assert "  ■ alpha: its plan spent its budget of $1.00: its lead $1.00, its workers $0.00. Not tried again: " \
        "store the pieces still to do" in shown, shown
