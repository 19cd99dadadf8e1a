"""The waits tests shorten through the environment (knobs.py) are read one way: unset or empty is the default, a
number in range is taken, and anything else stops the command before it starts with one message naming the
variable and what to set (exit 1, no traceback), by click's door and by the front door's engine alike; only the
commands that read them look (knobs.READERS), never their help or shell completion."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_balanced import front, knobs
from git_balanced.chief import session
from git_balanced.errors import BalancedError
from git_balanced.git import Repo
from git_balanced.kit import headless
from git_balanced.lead import Lead
from git_balanced.machines.placing import accounts
from tests.support.builders import make_repo
from tests.support.cli import balanced, balanced_process

READERS = {knobs.LEAD_POLL: headless.poll_every, knobs.CHIEF_LOOK: session.look_every,
           knobs.RESUME_MARGIN: accounts.resume_margin, knobs.UNKNOWN_RESET: accounts.unknown_reset}


@pytest.mark.parametrize("knob", knobs.KNOBS, ids=lambda k: k.name)
def test_each_reader_takes_a_number_in_range_and_its_default_when_unset(knob: knobs.Knob,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    read = READERS[knob]
    monkeypatch.delenv(knob.name, raising=False)
    assert read() == knob.default
    monkeypatch.setenv(knob.name, "  ")
    assert read() == knob.default, "empty is unset"
    for good in (knob.floor, knob.ceiling, " 2.5 "):
        monkeypatch.setenv(knob.name, str(good))
        assert read() == float(good)
    for bad in ("nan", "inf", "-inf", "-1", str(knob.ceiling * 2), "1s", "0x10"):
        monkeypatch.setenv(knob.name, bad)
        with pytest.raises(BalancedError) as told:
            read()
        assert told.value.message.startswith(f"{knob.name}={bad!r} is not a number of seconds from ")
        assert told.value.hint == (f"set it to one, such as {knob.name}={knob.default:g}, or unset it for the "
                                   f"default ({knob.default:g}).")


def test_a_bad_one_stops_a_command_before_it_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "lead")
    said = ("error: GIT_BALANCED_LEAD_POLL='nan' is not a number of seconds from 0.1 to 3600 (the seconds between "
            "a headless lead's looks at its inbox).\nhint: set it to one, such as GIT_BALANCED_LEAD_POLL=1, or "
            "unset it for the default (1).\n")
    ran = balanced(repo, "lead", "run", env={"GIT_BALANCED_LEAD_POLL": "nan"})
    assert (ran.code, ran.out, ran.err) == (1, "", said), "click's door"
    ran = balanced(repo, "lead", "start", "--agent", "claude", "Do it.", env={"GIT_BALANCED_LEAD_POLL": "nan"})
    assert (ran.code, ran.out, ran.err) == (1, "", said), "a driver started detached would stop in its log only"
    lead = Lead(Repo.discover(repo), "main")
    assert headless.read(lead) is None, "no driver started"
    monkeypatch.setenv("GIT_BALANCED_LEAD_POLL", "nan")
    ran = balanced_process(repo, "engine", "--once", timeout=60)
    assert (ran.code, ran.out, ran.err) == (1, "", said), "the front door's engine, in a process of its own"
    assert not (repo / ".git" / "balanced" / "engine.lock").exists(), "no engine started"


def test_only_the_commands_that_read_them_look(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "lead")
    bad = {"GIT_BALANCED_UNKNOWN_RESET": "soon"}
    for args in (["gc"], ["board", "-h"], ["engine", "--help"], ["lead", "run", "-h"], ["log"], ["__complete", "eng"]):
        ran = balanced(repo, *args, env=bad)
        assert ran.code == 0 and "GIT_BALANCED" not in ran.err, (args, ran)
    ran = balanced(repo, "no-such-command", env=bad)
    assert ran.code == 2 and "No such command" in ran.err and "GIT_BALANCED" not in ran.err, ran
    for args in (["engine", "--once"], ["plan", "x.yaml"], ["mcp"], ["chief", "run"], ["lead", "run", "--", "-h"],
                 ["lead", "start"], ["chief", "start", "--agent", "pi"]):
        assert knobs.reads(args), args
    fast = {"board", "inbox", "plan", "engine", "mcp", "log", "hook"}
    assert front.KNOBS_READ == {w for w in fast if knobs.reads([w])}, "the front door looks where click's does"
    monkeypatch.chdir(repo)
    monkeypatch.setenv("GIT_BALANCED_UNKNOWN_RESET", "soon")
    assert front.main(["log"]) == 0, "the front door's log does not look"
    assert "GIT_BALANCED" not in capsys.readouterr().err
