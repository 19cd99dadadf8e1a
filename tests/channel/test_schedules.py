"""Schedules: names, refusals, and the engine firing them into the inbox at a minute's resolution.

Time is injected through GIT_BALANCED_NOW (the clock the module reads), so no test waits real minutes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from git_balanced.channel import schedules
from git_balanced.channel.inbox import entries
from git_balanced.commands import board
from git_balanced.commands import schedule as schedule_cmd
from git_balanced.engine.loop import Engine
from git_balanced.lead import Lead, open_lead
from tests.support.builders import make_repo
from tests.support.cli import balanced
from tests.support.wait import wait_until


@pytest.fixture
def lead(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Lead:
    monkeypatch.setenv("TZ", "UTC")
    repo = make_repo(tmp_path / "lead")
    monkeypatch.chdir(repo)
    return open_lead(str(repo))


def at(monkeypatch: pytest.MonkeyPatch, moment: str) -> None:
    monkeypatch.setenv(schedules.NOW_ENV, moment)


def said(lead: Lead) -> list[str]:
    return [e["text"] for e in entries(lead.repo, lead.branch) if e.get("kind") == "schedule"]


def test_names_count_up_and_are_never_reused(lead: Lead, monkeypatch: pytest.MonkeyPatch) -> None:
    at(monkeypatch, "2026-11-12T06:00:00")
    assert schedules.add(lead, "daily 09:00", "Morning summary")[0] == "s1"
    assert schedules.add(lead, "every 30 minutes", "Check the board")[0] == "s2"
    schedules.remove(lead, "s2")
    assert schedules.add(lead, "weekdays 18:30", "Wrap up")[0] == "s3", "a removed name is not handed out again"
    assert [r["name"] for r in schedule_cmd.rows(lead)] == ["s1", "s3"]


def test_cli_add_list_rm(lead: Lead, monkeypatch: pytest.MonkeyPatch) -> None:
    at(monkeypatch, "2026-11-12T06:00:00")  # a Thursday
    ran = balanced(lead.repo.root, "schedule", "add", "weekdays 07:00", "Sum up what landed yesterday")
    assert ran.code == 0, ran.err
    assert "Added s1 (weekdays 07:00), first at today 07:00" in ran.out
    ran = balanced(lead.repo.root, "schedule", "list", "--json")
    row = json.loads(ran.out)[0]
    assert (row["name"], row["when"], row["next"]) == ("s1", "weekdays 07:00", "2026-11-12T07:00:00+00:00")
    ran = balanced(lead.repo.root, "schedule", "list")
    assert "s1   weekdays 07:00  next today 07:00" in ran.out
    ran = balanced(lead.repo.root, "schedule", "rm", "s1")
    assert ran.code == 0 and "Removed s1 (weekdays 07:00)" in ran.out
    again = balanced(lead.repo.root, "schedule", "rm", "s1")
    assert again.code == 1 and "s1 was not removed: it was removed already" in again.err
    unknown = balanced(lead.repo.root, "schedule", "rm", "s9")
    assert unknown.code == 1 and "There is no schedule s9" in unknown.err
    bad_name = balanced(lead.repo.root, "schedule", "rm", "nightly")
    assert bad_name.code == 1 and "not a schedule name" in bad_name.err
    assert "No schedules yet" in balanced(lead.repo.root, "schedule", "list").out


@pytest.mark.parametrize("spec, reason", [
    ("daily 25:00", "the hour of `25:00` must be 00 to 23"),
    ("once 2026-02-30 09:00", "2026-02-30 is not a day of the calendar"),
    ("every 0 hours", "N must be 1 or more"),
    ("every 2 minutes", "5 minutes at the least"),
    ("fortnightly", "it starts with none of daily, weekdays, every, once"),
    ("once 2026-11-01 09:00", "is in the past"),
])
def test_bad_specs_show_the_forms(lead: Lead, monkeypatch: pytest.MonkeyPatch, spec: str, reason: str) -> None:
    at(monkeypatch, "2026-11-12T06:00:00")
    ran = balanced(lead.repo.root, "schedule", "add", spec, "text")
    assert ran.code == 1, ran.out
    assert reason in ran.err
    if "past" not in reason:
        assert "daily HH:MM" in ran.err and "once YYYY-MM-DD HH:MM" in ran.err, "the message shows the forms"
    assert lead.repo.list_refs("refs/balanced/schedules/") == {}, "nothing was stored"


def test_the_engine_fires_at_the_minute_and_once(lead: Lead, monkeypatch: pytest.MonkeyPatch) -> None:
    at(monkeypatch, "2026-11-12T06:58:00")
    schedules.add(lead, "daily 07:00", "Sum up the night")
    engine = Engine(lead)
    at(monkeypatch, "2026-11-12T06:59:59")
    engine.pass_once()
    assert said(lead) == [], "a second early is too early"
    at(monkeypatch, "2026-11-12T07:00:00")
    engine.pass_once()
    assert said(lead) == ["[balanced] Scheduled (s1, daily 07:00): Sum up the night"]
    at(monkeypatch, "2026-11-12T07:00:25")
    engine.pass_once()
    assert len(said(lead)) == 1, "the same slot fires once"
    at(monkeypatch, "2026-11-13T07:00:10")
    engine.pass_once()
    assert len(said(lead)) == 2, "and the next day's slot fires again"


def test_missed_slots_fire_once_when_the_engine_comes_back(lead: Lead, monkeypatch: pytest.MonkeyPatch) -> None:
    at(monkeypatch, "2026-11-12T00:00:00")
    schedules.add(lead, "every 30 minutes", "Look at the board")
    at(monkeypatch, "2026-11-12T03:10:00")  # six slots went by while no engine ran
    Engine(lead).pass_once()
    assert said(lead) == ["[balanced] Scheduled (s1, every 30 minutes): Look at the board"]
    at(monkeypatch, "2026-11-12T03:20:00")
    Engine(lead).pass_once()
    assert len(said(lead)) == 1
    at(monkeypatch, "2026-11-12T03:30:00")
    Engine(lead).pass_once()
    assert len(said(lead)) == 2


def test_a_once_schedule_is_done_after_it_fires(lead: Lead, monkeypatch: pytest.MonkeyPatch) -> None:
    at(monkeypatch, "2026-11-12T08:00:00")
    schedules.add(lead, "once 2026-11-12 09:00", "Release day")
    schedules.add(lead, "daily 12:00", "Lunch check")
    nxt = board.collect(lead)["next"]
    assert [n["text"] for n in nxt] == ["· s1 today 09:00 (once 2026-11-12 09:00): Release day"], \
        "the board shows the next schedule only"
    at(monkeypatch, "2026-11-12T09:00:30")
    Engine(lead).pass_once()
    assert said(lead) == ["[balanced] Scheduled (s1, once 2026-11-12 09:00): Release day"]
    row = schedule_cmd.rows(lead)[0]
    assert (row["state"], row["next"]) == ("done", None)
    at(monkeypatch, "2026-11-13T09:00:30")
    Engine(lead).pass_once()
    assert len([t for t in said(lead) if "s1" in t]) == 1, "a once schedule never fires again"
    assert "s2 today 12:00" in board.render(board.collect(lead))


def test_a_running_engine_fires_a_due_schedule(lead: Lead, monkeypatch: pytest.MonkeyPatch) -> None:
    at(monkeypatch, "2026-11-12T06:00:00")
    schedules.add(lead, "weekdays 07:00", "Standup notes")
    env = dict(os.environ, **{schedules.NOW_ENV: "2026-11-12T07:00:05"})
    proc = subprocess.Popen([sys.executable, "-m", "git_balanced.cli", "engine"], cwd=lead.repo.root, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: said(lead), 30, "the engine to post the due schedule")
    finally:
        proc.terminate()
        out = proc.communicate(timeout=30)[0].decode()
    assert said(lead) == ["[balanced] Scheduled (s1, weekdays 07:00): Standup notes"], out
    shown = balanced(lead.repo.root, "inbox").out
    assert "[balanced] Scheduled (s1, weekdays 07:00): Standup notes" in shown


def test_local_time_is_the_lead_machines(lead: Lead, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Europe/Berlin")
    at(monkeypatch, "2026-11-12T06:30:00+01:00")
    name, when, first = schedules.add(lead, "daily 07:00", "Guten Morgen")
    assert first is not None and first.isoformat() == "2026-11-12T07:00:00+01:00"
    at(monkeypatch, "2026-11-12T06:00:00+00:00")  # 07:00 in Berlin
    Engine(lead).pass_once()
    assert said(lead) == ["[balanced] Scheduled (s1, daily 07:00): Guten Morgen"]
