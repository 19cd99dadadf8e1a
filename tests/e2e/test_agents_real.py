"""The real Claude Code, Codex and Pi, run with the command lines the adapters build, against the scripted
model server, in real repositories. Set GIT_BALANCED_REFRESH_STREAMS=1 to rewrite tests/fixtures/streams/
from these runs (the parse tests read them)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from git_balanced.agents import get
from git_balanced.agents.base import AgentRun, Outcome
from git_balanced.shipped.meter import Meter
from tests.support import agent_home
from tests.support.builders import make_repo
from tests.support.model_server import (
    ModelServer,
    Turn,
    Usage,
    hang,
    run_shell,
    say,
    server_error,
    unauthorized,
    usage_limit,
    write_file,
)

STREAMS = Path(__file__).parents[1] / "fixtures" / "streams"
REFRESH = os.environ.get("GIT_BALANCED_REFRESH_STREAMS") == "1"
SHOWN_TREE = "/home/ada/work/tree"  # the worktree path as the captures show it
SHOWN_HOME = "/home/ada"


@dataclass
class Ran:
    log: str
    code: int | None
    outcome: Outcome
    tree: Path
    server: ModelServer


def run_cli(tmp_path: Path, agent_bin: str, cli: str, turns: list[Turn], *, capture: str = "",
            budget: float | None = None, extra: list[str] | None = None, kill_after: float | None = None,
            subscription: bool = False, signed_in: bool = True, model: str | None = None,
            plan_used_percent: float | None = None) -> Ran:
    """Run `cli` on a fresh repository the way the runner does, and read its outcome."""
    tree = make_repo(tmp_path / "tree")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    home = Path(os.environ["HOME"])
    adapter = get(cli)
    model = model or {"claude": agent_home.CLAUDE_MODEL, "codex": agent_home.CODEX_MODEL,
             "pi": agent_home.PI_MODEL}[cli]
    with ModelServer(turns, plan_used_percent=plan_used_percent) as server:
        env = {"claude": lambda: agent_home.claude_env(home, server.url, subscription=subscription,
                                                       signed_in=signed_in),
               "codex": lambda: agent_home.codex_env(home, server.url, signed_in=signed_in),
               "pi": lambda: agent_home.pi_env(home, server.url, signed_in=signed_in)}[cli]()
        run = adapter.build(task="Write hello.txt saying hello, then stop.", rules="You are a worker.",
                            model=model, budget_usd=budget, worktree=str(tree), run_dir=str(run_dir),
                            settings_json="{}" if cli == "claude" else None)
        env.update(run.env)
        env["PATH"] = agent_bin + os.pathsep + env["PATH"]
        code, log = _start(run, env, tree, run_dir, extra or [], kill_after)
    outcome = adapter.outcome(log, code)
    if REFRESH and capture:
        STREAMS.mkdir(parents=True, exist_ok=True)
        shown = log.replace(str(tree), SHOWN_TREE).replace(str(home), SHOWN_HOME)
        shown = shown.replace(str(tmp_path), "/tmp")
        (STREAMS / f"{cli}-{capture}.jsonl").write_text(shown)
    return Ran(log, code, outcome, tree, server)


def _start(run: AgentRun, env: dict[str, str], tree: Path, run_dir: Path, extra: list[str],
           kill_after: float | None) -> tuple[int | None, str]:
    """Start like the runner: files first, stdin /dev/null, stdout and stderr into one log; SIGTERM when the
    meter passes the budget (then append the meter's line) or when `kill_after` seconds have gone by."""
    for rel, content in run.files.items():
        (run_dir / rel).write_text(content)
    argv = [a.replace("{run_dir}", str(run_dir)) for a in run.argv] + extra
    meter = Meter(run.meter) if run.meter else None
    log_path = run_dir / "log"
    deadline = time.monotonic() + (kill_after or 120)
    stopped = ""
    with open(log_path, "w") as log:
        proc = subprocess.Popen(argv, cwd=tree, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)

        def copy() -> None:  # the log and the meter see every line as it comes
            assert proc.stdout is not None
            for line in proc.stdout:
                log.write(line)
                log.flush()
                if meter:
                    meter.feed(line)

        reader = threading.Thread(target=copy, daemon=True)
        reader.start()
        while proc.poll() is None:
            if not stopped and meter and meter.over_budget:
                stopped = "budget"
            elif not stopped and time.monotonic() > deadline:
                stopped = "time"
            if stopped:
                os.killpg(proc.pid, signal.SIGTERM)
            time.sleep(0.1)
        reader.join(10)
        if meter:
            log.write(meter.summary_line() + "\n")
    if stopped == "time" and kill_after is None:
        pytest.fail(f"{argv[0]} did not finish within 120 seconds:\n{log_path.read_text()[-3000:]}")
    return (None if stopped else proc.returncode), log_path.read_text()


# -- Claude Code ------------------------------------------------------------------------------------------

def test_claude_writes_a_file_and_succeeds(tmp_path: Path, agent_bin: str) -> None:
    tree = tmp_path / "tree"
    ran = run_cli(tmp_path, agent_bin, "claude", [write_file(f"{tree}/hello.txt", "hello\n"),
                                                  say("I wrote hello.txt.")], capture="success", budget=5.0)
    assert (tree / "hello.txt").read_text() == "hello\n", f"the file was not written:\n{ran.log[-3000:]}"
    assert ran.outcome.kind == "success", ran.log[-3000:]
    assert ran.outcome.summary == "I wrote hello.txt."
    assert ran.outcome.cost_usd and ran.outcome.cost_usd > 0, "Claude prices the tokens the server reported"
    assert ran.outcome.tokens["input"] == 2400, "two requests of 1200 input tokens each"
    first = ran.server.main_requests()[0]
    assert "You are a worker." in str(first.body["system"]), "the rules reach the system prompt"


def test_claude_stops_at_its_budget(tmp_path: Path, agent_bin: str) -> None:
    tree = tmp_path / "tree"
    turns = [write_file(f"{tree}/{name}.txt", f"{name}\n", Usage(20000, 500)) for name in "abcdef"]
    ran = run_cli(tmp_path, agent_bin, "claude", turns + [say("done")], capture="budget", budget=0.10)
    assert ran.outcome.kind == "budget", ran.log[-3000:]
    assert ran.outcome.cost_usd is not None and ran.outcome.cost_usd >= 0.10
    assert not (tree / "f.txt").exists(), "it stopped before the last write"


def test_claude_stops_at_max_turns(tmp_path: Path, agent_bin: str) -> None:
    tree = tmp_path / "tree"
    turns = [write_file(f"{tree}/a.txt", "a\n"), write_file(f"{tree}/b.txt", "b\n"), say("done")]
    ran = run_cli(tmp_path, agent_bin, "claude", turns, capture="turns", extra=["--max-turns", "1"])
    assert ran.outcome.kind == "turns", ran.log[-3000:]


def test_claude_usage_limit(tmp_path: Path, agent_bin: str) -> None:
    reset = int(time.time()) + 7200
    ran = run_cli(tmp_path, agent_bin, "claude", [usage_limit(reset)], capture="usage-limit",
                  subscription=True)
    assert ran.outcome.kind == "usage_limit", ran.log[-3000:]
    assert ran.outcome.reset_at == reset
    assert {"type": "five_hour", "used_percent": 100.0, "resets_at": reset} in ran.outcome.windows
    assert "limit" in ran.outcome.summary


def test_claude_reports_its_plan_window(tmp_path: Path, agent_bin: str) -> None:
    ran = run_cli(tmp_path, agent_bin, "claude", [say("Nothing to do.")], capture="plan-window",
                  subscription=True, plan_used_percent=84.0)
    assert ran.outcome.kind == "success", ran.log[-3000:]
    assert [(w["type"], w["used_percent"]) for w in ran.outcome.windows] == [("five_hour", 84.0)]


def test_claude_server_error_is_transient(tmp_path: Path, agent_bin: str) -> None:
    ran = run_cli(tmp_path, agent_bin, "claude", [server_error(500)], capture="server-error")
    assert ran.outcome.kind == "transient", ran.log[-3000:]
    assert "500" in ran.outcome.summary


def test_claude_bad_request_fails(tmp_path: Path, agent_bin: str) -> None:
    ran = run_cli(tmp_path, agent_bin, "claude", [server_error(400)], capture="bad-request")
    assert ran.outcome.kind == "failed", ran.log[-3000:]


def test_claude_without_a_key_needs_signin(tmp_path: Path, agent_bin: str) -> None:
    ran = run_cli(tmp_path, agent_bin, "claude", [say("unreached")], capture="signin", signed_in=False)
    assert ran.outcome.kind == "signin", ran.log[-3000:]
    assert not ran.server.main_requests(), "nothing was sent without a key"


def test_claude_rejected_key_needs_signin(tmp_path: Path, agent_bin: str) -> None:
    ran = run_cli(tmp_path, agent_bin, "claude", [unauthorized()], capture="rejected-key")
    assert ran.outcome.kind == "signin", ran.log[-3000:]


def test_claude_killed_while_the_server_hangs_crashed(tmp_path: Path, agent_bin: str) -> None:
    ran = run_cli(tmp_path, agent_bin, "claude", [hang(60)], capture="killed", kill_after=4)
    assert ran.code is None
    assert ran.outcome.kind == "crashed", ran.log[-3000:]


# -- Codex ------------------------------------------------------------------------------------------------

def test_codex_writes_a_file_and_succeeds(tmp_path: Path, agent_bin: str) -> None:
    tree = tmp_path / "tree"
    turns = [write_file(f"{tree}/hello.txt", "hello\n"), run_shell("echo ran > shell.txt"),
             say("I wrote hello.txt.")]
    ran = run_cli(tmp_path, agent_bin, "codex", turns, capture="success", budget=5.0)
    assert (tree / "hello.txt").read_text() == "hello\n", f"apply_patch did not write:\n{ran.log[-3000:]}"
    assert (tree / "shell.txt").read_text() == "ran\n", "exec_command ran in the worktree"
    assert ran.outcome.kind == "success", ran.log[-3000:]
    assert ran.outcome.summary == "I wrote hello.txt."
    assert ran.outcome.tokens["input"] == 3600 and ran.outcome.tokens["output"] == 240
    # gpt-5.5 list price: 3600 input at $5/M and 240 output at $30/M.
    assert ran.outcome.cost_usd == pytest.approx(3600 * 5 / 1e6 + 240 * 30 / 1e6)
    first = ran.server.main_requests()[0]
    assert "You are a worker." in json.dumps(first.body["input"]), "the rules reach the developer message"


def test_codex_is_stopped_at_its_budget(tmp_path: Path, agent_bin: str) -> None:
    tree = tmp_path / "tree"
    dear = Usage(100_000, 2_000)  # $0.56 a reply at gpt-5.5 prices
    turns = [write_file(f"{tree}/a.txt", "a\n", dear), write_file(f"{tree}/b.txt", "b\n", dear), hang(60)]
    ran = run_cli(tmp_path, agent_bin, "codex", turns, capture="budget", budget=1.0)
    assert ran.code is None, "the meter stopped it while the model was still answering"
    assert ran.outcome.kind == "budget", ran.log[-3000:]
    assert ran.outcome.cost_usd is not None and ran.outcome.cost_usd >= 1.0


def test_codex_usage_limit(tmp_path: Path, agent_bin: str) -> None:
    reset = int(time.time()) + 7200
    ran = run_cli(tmp_path, agent_bin, "codex", [usage_limit(reset)], capture="usage-limit")
    assert ran.outcome.kind == "usage_limit", ran.log[-3000:]
    assert "You’ve hit your usage limit" in ran.outcome.summary
    # The message names the minute only: the reset is that minute, in local time.
    assert ran.outcome.reset_at is not None and abs(ran.outcome.reset_at - reset) < 60


def test_codex_server_error_is_transient(tmp_path: Path, agent_bin: str) -> None:
    ran = run_cli(tmp_path, agent_bin, "codex", [server_error(500)], capture="server-error")
    assert ran.outcome.kind == "transient", ran.log[-3000:]


def test_codex_bad_request_fails(tmp_path: Path, agent_bin: str) -> None:
    ran = run_cli(tmp_path, agent_bin, "codex", [server_error(400)], capture="bad-request")
    assert ran.outcome.kind == "failed", ran.log[-3000:]


def test_codex_rejected_key_needs_signin(tmp_path: Path, agent_bin: str) -> None:
    ran = run_cli(tmp_path, agent_bin, "codex", [unauthorized()], capture="rejected-key")
    assert ran.outcome.kind == "signin", ran.log[-3000:]


def test_codex_without_a_key_needs_signin(tmp_path: Path, agent_bin: str) -> None:
    ran = run_cli(tmp_path, agent_bin, "codex", [say("unreached")], capture="signin", signed_in=False)
    assert ran.outcome.kind == "signin", ran.log[-3000:]
    assert not ran.server.main_requests(), "nothing was sent without a key"


# -- Pi ---------------------------------------------------------------------------------------------------

def test_pi_writes_a_file_and_succeeds(tmp_path: Path, agent_bin: str) -> None:
    tree = tmp_path / "tree"
    turns = [write_file(f"{tree}/hello.txt", "hello\n"), run_shell("echo ran > shell.txt"),
             say("I wrote hello.txt.")]
    ran = run_cli(tmp_path, agent_bin, "pi", turns, capture="success", budget=5.0)
    assert (tree / "hello.txt").read_text() == "hello\n", f"the write tool did not write:\n{ran.log[-3000:]}"
    assert (tree / "shell.txt").read_text() == "ran\n", "the bash tool ran in the worktree"
    assert ran.outcome.kind == "success", ran.log[-3000:]
    assert ran.outcome.summary == "I wrote hello.txt."
    assert ran.outcome.tokens["input"] == 3600
    # Pi prices with the models.json figures: 3 replies of 1200 input at $3/M and 80 output at $15/M.
    assert ran.outcome.cost_usd == pytest.approx(3 * (1200 * 3 + 80 * 15) / 1e6)
    first = ran.server.main_requests()[0]
    assert "You are a worker." in json.dumps(first.body["messages"]), "the rules reach the system prompt"


def test_pi_is_stopped_at_its_budget(tmp_path: Path, agent_bin: str) -> None:
    tree = tmp_path / "tree"
    dear = Usage(100_000, 10_000)  # $0.45 a reply at the scripted prices
    turns = [write_file(f"{tree}/a.txt", "a\n", dear), write_file(f"{tree}/b.txt", "b\n", dear),
             write_file(f"{tree}/c.txt", "c\n", dear), hang(60)]
    ran = run_cli(tmp_path, agent_bin, "pi", turns, capture="budget", budget=0.80)
    assert ran.code is None, "the meter stopped it while the model was still answering"
    assert ran.outcome.kind == "budget", ran.log[-3000:]
    assert ran.outcome.cost_usd is not None and ran.outcome.cost_usd >= 0.80


def test_pi_usage_limit(tmp_path: Path, agent_bin: str) -> None:
    ran = run_cli(tmp_path, agent_bin, "pi", [usage_limit(time.time() + 7200)], capture="usage-limit")
    assert ran.code == 0, "Pi exits 0 even when the model call failed"
    assert ran.outcome.kind == "usage_limit", ran.log[-3000:]
    assert ran.outcome.summary.startswith("429")


def test_pi_server_error_is_transient(tmp_path: Path, agent_bin: str) -> None:
    ran = run_cli(tmp_path, agent_bin, "pi", [server_error(500)], capture="server-error")
    assert ran.outcome.kind == "transient", ran.log[-3000:]


def test_pi_bad_request_fails(tmp_path: Path, agent_bin: str) -> None:
    ran = run_cli(tmp_path, agent_bin, "pi", [server_error(400)], capture="bad-request")
    assert ran.outcome.kind == "failed", ran.log[-3000:]


def test_pi_rejected_key_needs_signin(tmp_path: Path, agent_bin: str) -> None:
    ran = run_cli(tmp_path, agent_bin, "pi", [unauthorized()], capture="rejected-key")
    assert ran.outcome.kind == "signin", ran.log[-3000:]


def test_pi_without_a_key_needs_signin(tmp_path: Path, agent_bin: str) -> None:
    # A built-in provider with no key in the environment, as on a machine nobody signed in on.
    ran = run_cli(tmp_path, agent_bin, "pi", [say("unreached")], capture="signin", signed_in=False,
                  model="anthropic/claude-sonnet-4-5")
    assert ran.outcome.kind == "signin", ran.log[-3000:]
    assert not ran.server.main_requests(), "nothing was sent without a key"
