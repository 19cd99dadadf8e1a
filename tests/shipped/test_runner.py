"""The runner, end to end: real repositories, real detached processes, the real budget meter."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from git_balanced.agents.shell import ShellAdapter, commit_message
from git_balanced.errors import BalancedError
from git_balanced.machines.reach.transport import BOOTSTRAP
from git_balanced.shipped import launch, reap, runfiles, runner
from git_balanced.shipped.messages import MessageError, Result, StartRequest
from tests.support.builders import git, make_repo
from tests.support.runner_calls import RUNNER, call, status_of
from tests.support.wait import wait_for_file, wait_until

BRANCH = "balanced/piece"


def wait_for(job: str, runs: Path, states: tuple[str, ...] = ("finished",), timeout: float = 30) -> dict:
    """Poll `status` until the job is in one of `states`; its status entry."""
    def status() -> dict:
        return status_of(runs, job)

    return wait_until(lambda: (st := status())["state"] in states and st, timeout, f"{job} to be {' or '.join(states)}",
                      said=status)


@pytest.fixture
def lead(tmp_path: Path) -> tuple[Path, str]:
    repo = make_repo(tmp_path / "lead", {"README.md": "sample\n"})
    return repo, git(repo, "rev-parse", "HEAD")


def request(tmp_path: Path, lead: tuple[Path, str], job: str, run: str, task: str = "Do the piece.",
            **extra: object) -> dict:
    """A start request for a shell piece, built by the shell adapter as the engine would."""
    repo, base = lead
    runs, worktree = tmp_path / "runs", tmp_path / "worktrees" / job
    built = ShellAdapter().build(task=task, rules="", model=None, budget_usd=None, worktree=str(worktree),
                                 run_dir=str(runs / job), run=run)
    req = {"job": job, "repo": str(repo), "worktree": str(worktree), "branch": BRANCH, "base": base,
           "setup": None, "argv": built.argv, "env": built.env, "files": built.files, "meter": built.meter,
           "commit_message": commit_message("piece", task), "commit_leftovers": True, "runs_dir": str(runs),
           "grace": 2}
    req.update(extra)
    return req


def test_shell_worker_commits_the_file_it_wrote(tmp_path: Path, lead: tuple[Path, str]) -> None:
    repo, base = lead
    started = call("start", request(tmp_path, lead, "j1", "echo hello > out.txt; echo wrote it"))
    assert started["job"] == "j1" and started["pid"] > 0
    assert started["run_dir"] == str(tmp_path / "runs" / "j1")
    res = wait_for("j1", tmp_path / "runs")["result"]
    assert res["exit_code"] == 0 and res["signal"] is None and res["error"] is None, res
    assert res["commits"] == 1 and not res["dirty"] and res["commit_error"] is None, res
    assert res["reason"] == "exited", "the agent ran to its end: its adapter says how"
    assert res["head"] == git(repo, "rev-parse", BRANCH), "head is the branch tip in the lead's repository"
    assert res["base"] == base and res["seconds"] >= 0 and res["ended"] >= res["started"]
    assert git(repo, "show", f"{BRANCH}:out.txt") == "hello"
    assert git(repo, "log", "-1", "--format=%s", BRANCH) == "piece: Do the piece."
    assert git(repo, "rev-parse", "HEAD") == base, "the lead's branch is untouched"
    log = (tmp_path / "runs" / "j1" / "log").read_text()
    assert "wrote it" in log
    assert ShellAdapter().outcome(log, res["exit_code"]).kind == "success"
    assert json.loads((tmp_path / "runs" / "j1" / "request.json").read_text())["job"] == "j1"


def test_a_later_attempt_continues_from_the_earlier_commit(tmp_path: Path, lead: tuple[Path, str]) -> None:
    repo, base = lead
    call("start", request(tmp_path, lead, "a1", "echo one > a.txt"))
    first = wait_for("a1", tmp_path / "runs")["result"]
    gone = call("cleanup", {"job": "a1", "repo": str(repo), "worktree": str(tmp_path / "worktrees" / "a1"),
                            "runs_dir": str(tmp_path / "runs")})
    assert gone["worktree_removed"] and gone["run_dir_removed"], gone
    assert not (tmp_path / "worktrees" / "a1").exists() and not (tmp_path / "runs" / "a1").exists()
    assert git(repo, "rev-parse", BRANCH) == first["head"], "cleanup never deletes the branch"

    call("start", request(tmp_path, lead, "a2", "test -f a.txt && echo two > b.txt"))
    second = wait_for("a2", tmp_path / "runs")["result"]
    assert second["exit_code"] == 0 and second["commits"] == 2, second
    assert git(repo, "rev-parse", f"{second['head']}^") == first["head"], "built on the first attempt"

    # A third attempt handed the second's worktree folder reuses it as it is.
    again = request(tmp_path, lead, "a3", "echo three > c.txt", worktree=str(tmp_path / "worktrees" / "a2"))
    call("start", again)
    third = wait_for("a3", tmp_path / "runs")["result"]
    assert third["error"] is None and third["commits"] == 3, third
    assert git(repo, "show", f"{BRANCH}:c.txt") == "three"


def test_a_failing_command_records_its_exit_code_and_commits_nothing(tmp_path: Path,
                                                                     lead: tuple[Path, str]) -> None:
    repo, base = lead
    call("start", request(tmp_path, lead, "f1", "echo oops; exit 3"))
    st = wait_for("f1", tmp_path / "runs")
    res = st["result"]
    assert res["exit_code"] == 3 and res["commits"] == 0 and not res["dirty"], res
    assert res["head"] == base, "the new branch stays at the base"
    outcome = ShellAdapter().outcome(st["log_tail"], res["exit_code"])
    assert outcome.kind == "failed" and "exited 3" in outcome.summary and "oops" in outcome.summary


def test_a_failing_setup_ends_the_run_before_the_agent(tmp_path: Path, lead: tuple[Path, str]) -> None:
    req = request(tmp_path, lead, "s1", "touch agent-ran", setup="echo installing; echo broken >&2; exit 4")
    call("start", req)
    st = wait_for("s1", tmp_path / "runs")
    res = st["result"]
    assert res["setup_failed"] and res["setup_exit_code"] == 4 and res["exit_code"] is None, res
    assert res["reason"] == "setup_failed", res
    assert not (tmp_path / "worktrees" / "s1" / "agent-ran").exists(), "the agent never started"
    assert "broken" in st["log_tail"] and "setup exited 4" in st["log_tail"]


def test_setup_runs_in_the_worktree_before_the_agent(tmp_path: Path, lead: tuple[Path, str]) -> None:
    req = request(tmp_path, lead, "s2", "test -f .ready && cat .ready > seen.txt && rm .ready",
                  setup="echo set > .ready")
    call("start", req)
    res = wait_for("s2", tmp_path / "runs")["result"]
    assert res["exit_code"] == 0 and not res["setup_failed"] and res["commits"] == 1, res
    assert git(lead[0], "show", f"{BRANCH}:seen.txt") == "set"


def test_stop_during_setup_ends_the_setup_and_never_starts_the_agent(tmp_path: Path,
                                                                     lead: tuple[Path, str]) -> None:
    runs = tmp_path / "runs"
    call("start", request(tmp_path, lead, "s3", "touch agent-ran", setup="echo setting up; sleep 30"))
    wait_until(lambda: "setting up" in wait_for("s3", runs, ("running",))["log_tail"], 10, "the setup to start")
    res = call("stop", {"job": "s3", "runs_dir": str(runs), "wait": 10})["result"]
    assert res["stopped"] and res["signal"] == signal.SIGTERM and not res["setup_failed"], res
    assert res["reason"] == "stopped", res
    assert res["exit_code"] is None and not (tmp_path / "worktrees" / "s3" / "agent-ran").exists()


def test_a_folder_that_is_not_a_worktree_is_never_used(tmp_path: Path, lead: tuple[Path, str]) -> None:
    stranger = make_repo(tmp_path / "worktrees" / "w1", {"mine.txt": "keep\n"})
    call("start", request(tmp_path, lead, "w1", "echo x > x.txt"))
    res = wait_for("w1", tmp_path / "runs")["result"]
    assert "is not a worktree of" in res["error"] and res["exit_code"] is None, res
    assert res["reason"] == "crashed", res
    assert not (stranger / "x.txt").exists() and git(stranger, "status", "--porcelain") == ""


def test_a_refusing_commit_hook_is_recorded_as_the_commit_error(tmp_path: Path,
                                                                 lead: tuple[Path, str]) -> None:
    repo, base = lead
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "pre-commit").write_text("#!/bin/sh\necho 'secret.txt belongs to the piece vault' >&2\nexit 1\n")
    (hooks / "pre-commit").chmod(0o755)
    call("start", request(tmp_path, lead, "h1", "echo x > secret.txt"))
    res = wait_for("h1", tmp_path / "runs")["result"]
    assert res["exit_code"] == 0 and res["commits"] == 0 and res["dirty"], res
    assert "belongs to the piece vault" in res["commit_error"]
    assert res["reason"] == "failed", "the repository's own hook refused it, not the guard, whatever it said"


def test_status_answers_for_several_jobs_in_one_call(tmp_path: Path, lead: tuple[Path, str]) -> None:
    runs = tmp_path / "runs"
    call("start", request(tmp_path, lead, "done", "echo fine"))
    call("start", request(tmp_path, lead, "busy", "sleep 30", branch="balanced/busy"))
    killed = call("start", request(tmp_path, lead, "killed", "sleep 30", branch="balanced/killed"))
    wait_for("done", runs)
    wait_for("killed", runs, ("running",))
    os.kill(killed["pid"], signal.SIGKILL)  # the runner killed hard: no result.json will ever come
    wait_until(lambda: not runfiles.alive(killed["pid"]), 10, "the killed runner to end")

    jobs = call("status", {"jobs": ["done", "busy", "killed", "never"], "runs_dir": str(runs)})["jobs"]
    assert jobs["done"]["state"] == "finished" and jobs["done"]["result"]["exit_code"] == 0
    assert "fine" in jobs["done"]["log_tail"]
    assert jobs["busy"]["state"] == "running" and jobs["busy"]["result"] is None and jobs["busy"]["pid"]
    assert jobs["killed"]["state"] == "dead" and jobs["killed"]["result"] is None
    assert jobs["killed"]["agent_alive"], "the agent outlives a runner killed hard"
    assert jobs["never"] == {"state": "missing", "pid": None, "result": None, "log_tail": "", "log_size": 0}
    everything = call("status", {"jobs": None, "runs_dir": str(runs)})["jobs"]
    assert sorted(everything) == ["busy", "done", "killed"]

    # Stopping the dead job's orphaned agent falls to `stop` itself; the busy one's runner does it.
    dead_stop = call("stop", {"job": "killed", "runs_dir": str(runs), "grace": 2})
    assert dead_stop["state"] == "dead"
    assert not call("status", {"jobs": ["killed"], "runs_dir": str(runs)})["jobs"]["killed"]["agent_alive"]
    call("stop", {"job": "busy", "runs_dir": str(runs), "wait": 10})
    assert wait_for("busy", runs)["result"]["stopped"]


def test_a_runner_that_ends_while_its_status_is_read_is_finished_not_dead(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner writes its result and exits between status's read of result.json and its look at the pid:
    the engine must see the result, not a dead runner (which it would try again as a crash)."""
    run_dir = tmp_path / "runs" / "job"
    run_dir.mkdir(parents=True)
    ended = subprocess.Popen(["true"])
    ended.wait()
    (run_dir / "pid").write_text(f"{ended.pid}\n\n")
    real_alive = runfiles.alive

    def ends_meanwhile(pid: int | None, tick: str = "") -> bool:
        if pid == ended.pid:  # the runner's last act, just before this look
            (run_dir / "result.json").write_text(json.dumps({"exit_code": 0, "commits": 1}))
        return real_alive(pid, tick)

    monkeypatch.setattr(reap, "alive", ends_meanwhile)  # where status looks
    st = reap._job_status(str(run_dir))
    assert st["state"] == "finished" and st["result"] == {"exit_code": 0, "commits": 1}, st
    (run_dir / "result.json").unlink()
    monkeypatch.setattr(reap, "alive", real_alive)
    assert reap._job_status(str(run_dir))["state"] == "dead", "with no result at all, it is dead"


def test_stop_ends_the_agent_with_sigterm(tmp_path: Path, lead: tuple[Path, str]) -> None:
    runs = tmp_path / "runs"
    call("start", request(tmp_path, lead, "st1", "echo partial > p.txt; sleep 30"))
    wait_for("st1", runs, ("running",))
    wait_for_file(tmp_path / "worktrees" / "st1" / "p.txt", 10, "the agent to write its file")
    answer = call("stop", {"job": "st1", "runs_dir": str(runs), "wait": 10})
    assert answer["state"] == "finished", answer
    res = answer["result"]
    assert res["signal"] == signal.SIGTERM and res["exit_code"] is None and res["stopped"], res
    assert res["seconds"] < 20 and not res["stopped_by_budget"]
    again = call("stop", {"job": "st1", "runs_dir": str(runs)})
    assert again["state"] == "finished", "stopping a finished job is harmless"


def test_stop_kills_an_agent_that_ignores_sigterm_after_the_grace(tmp_path: Path,
                                                                 lead: tuple[Path, str]) -> None:
    runs = tmp_path / "runs"
    # An ignored signal stays ignored across exec, so sleep ignores SIGTERM too.
    call("start", request(tmp_path, lead, "st2", "trap '' TERM; echo ready; sleep 30", grace=1))
    # Its trap is set once it says so.
    wait_until(lambda: "ready" in wait_for("st2", runs, ("running",))["log_tail"], 10, "the agent to be ready")
    started = time.monotonic()
    res = call("stop", {"job": "st2", "runs_dir": str(runs), "wait": 15})["result"]
    assert res is not None and res["signal"] == signal.SIGKILL, res
    assert time.monotonic() - started >= 0.9, "SIGKILL only after the grace"


def test_the_worker_survives_its_caller_and_start_returns_at_once(tmp_path: Path,
                                                                  lead: tuple[Path, str]) -> None:
    runs = tmp_path / "runs"
    began = time.monotonic()
    started = call("start", request(tmp_path, lead, "bg", "sleep 3; echo done > done.txt"))
    assert time.monotonic() - began < 2.5, "start does not wait for the worker"
    # The caller (the `python runner.py start` process) has exited; the runner lives on, in a session of
    # its own, not a child of this test.
    assert runfiles.alive(started["pid"])
    assert os.getsid(started["pid"]) != os.getsid(0)
    assert int(runfiles.stat_fields(started["pid"])[1]) != os.getpid()
    assert call("status", {"jobs": ["bg"], "runs_dir": str(runs)})["jobs"]["bg"]["state"] == "running"
    res = wait_for("bg", runs)["result"]
    assert res["exit_code"] == 0 and res["commits"] == 1 and res["seconds"] >= 3, res
    assert git(lead[0], "show", f"{BRANCH}:done.txt") == "done"


PI_COST = '{"type":"message_end","message":{"role":"assistant","usage":{"cost":{"total":0.3}}}}'


def test_the_budget_meter_stops_an_agent_past_its_budget(tmp_path: Path, lead: tuple[Path, str]) -> None:
    runs = tmp_path / "runs"
    run = f"echo kept > kept.txt; for i in 1 2 3; do echo '{PI_COST}'; done; sleep 30; echo no > no.txt"
    call("start", request(tmp_path, lead, "b1", run, meter={"format": "pi", "budget_usd": 0.5}))
    st = wait_for("b1", runs, timeout=20)
    res = st["result"]
    assert res["stopped_by_budget"] and res["signal"] == signal.SIGTERM and res["seconds"] < 15, res
    assert res["reason"] == "budget", res
    assert 0.5 <= res["cost_usd"] <= 0.9 + 1e-9, res
    assert res["commits"] == 1, "what it finished before the stop is still committed"
    assert git(lead[0], "show", f"{BRANCH}:kept.txt") == "kept"
    assert PI_COST in st["log_tail"], "the metered output is teed to the log"


def test_meter_and_runner_as_one_script_on_stdin(tmp_path: Path, lead: tuple[Path, str]) -> None:
    """What a remote machine runs: the combined source through `python3`, with no package importable."""
    python3 = shutil.which("python3", path="/usr/bin:/bin") or shutil.which("python3")
    assert python3, "a python3 on PATH"
    script = runner.source()
    assert script.splitlines().count("from __future__ import annotations") == 1 and "class Meter" in script
    req = request(tmp_path, lead, "r1", f"echo '{PI_COST}'; echo '{PI_COST}'; sleep 30",
                  meter={"format": "pi", "budget_usd": 0.5})
    del req["runs_dir"]  # the default, ~/.balanced/runs, in the sealed home
    stdin = str(len(script.encode())).encode() + b"\n" + script.encode() + json.dumps(req).encode()
    # -I: the package must not be importable, so Meter can only come from the script itself.
    cp = subprocess.run([python3, "-I", "-c", BOOTSTRAP, "start"], input=stdin, capture_output=True,
                        cwd=tmp_path, timeout=30)
    assert cp.returncode == 0, cp.stderr.decode()
    assert json.loads(cp.stdout)["job"] == "r1"
    runs = Path.home() / ".balanced" / "runs"
    res = wait_for("r1", runs, timeout=20)["result"]
    assert res["stopped_by_budget"] and res["cost_usd"] == pytest.approx(0.6), res

    # Plain `python3 -`: the script is all of stdin, so the request is empty and defaults apply.
    cp = subprocess.run([python3, "-I", "-", "status"], input=script.encode(), capture_output=True,
                        cwd=tmp_path, timeout=30)
    assert cp.returncode == 0, cp.stderr.decode()
    assert json.loads(cp.stdout)["jobs"]["r1"]["state"] == "finished"


def test_the_script_on_stdin_imports_nothing_from_the_folder_it_starts_in(tmp_path: Path) -> None:
    """Over SSH a script starts in the machine's home, which a worker without a fence could write: a module left
    there is never imported in place of the standard library's."""
    python3 = shutil.which("python3", path="/usr/bin:/bin") or shutil.which("python3")
    assert python3
    marker = tmp_path / "planted-ran"
    (tmp_path / "json.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    script = b"import json\nprint(json.dumps({'from': json.__file__}))\n"
    cp = subprocess.run([python3, "-c", BOOTSTRAP], input=str(len(script)).encode() + b"\n" + script,
                        capture_output=True, cwd=tmp_path, timeout=30)
    assert cp.returncode == 0, cp.stderr.decode()
    assert not marker.exists() and not json.loads(cp.stdout)["from"].startswith(str(tmp_path)), cp.stdout


def test_a_budget_with_no_meter_here_refuses_to_run_the_agent(tmp_path: Path, lead: tuple[Path, str]) -> None:
    python3 = shutil.which("python3", path="/usr/bin:/bin") or shutil.which("python3")
    assert python3
    req = request(tmp_path, lead, "n1", "touch agent-ran", meter={"format": "pi", "budget_usd": 1})
    # The runner's script without meter.py, under a python3 that cannot import the package: no Meter anywhere.
    script = runner.source(with_meter=False)
    stdin = str(len(script.encode())).encode() + b"\n" + script.encode() + json.dumps(req).encode()
    cp = subprocess.run([python3, "-I", "-c", BOOTSTRAP, "start"], input=stdin, capture_output=True,
                        cwd=tmp_path, timeout=30)
    assert cp.returncode == 0 and json.loads(cp.stdout)["job"] == "n1", cp.stdout + cp.stderr
    res = wait_for("n1", tmp_path / "runs")["result"]
    assert "meter" in res["error"] and res["exit_code"] is None, res
    assert not (tmp_path / "worktrees" / "n1" / "agent-ran").exists(), "an unwatched budget never runs"


TRICKY = 'Say "hi" & it\'s $(touch pwned) `touch pwned2`;\nthen $HOME and \\n and {worktree}\n\ttabbed \u00e9'


def test_task_text_travels_untouched(tmp_path: Path, lead: tuple[Path, str]) -> None:
    req = request(tmp_path, lead, "t1", 'printf "%s" "$BALANCED_TASK" > task.txt', task=TRICKY)
    call("start", req)
    res = wait_for("t1", tmp_path / "runs")["result"]
    assert res["exit_code"] == 0, res
    worktree = tmp_path / "worktrees" / "t1"
    assert (worktree / "task.txt").read_text() == TRICKY
    assert not list(tmp_path.rglob("pwned*")), "nothing in the task was run"
    message = git(lead[0], "log", "-1", "--format=%B", BRANCH)
    assert message == commit_message("piece", TRICKY).strip()
    assert "$(touch pwned)" in message and "{worktree}" in message


def test_argv_placeholders_and_files_land_in_the_run_folder(tmp_path: Path, lead: tuple[Path, str]) -> None:
    req = request(tmp_path, lead, "p1", "true")
    req.update(argv=["sh", "-c", 'cat "$1" > got.txt; echo "$2" > where.txt', "sh", "{run_dir}/cfg/a.json",
                     "{worktree}"], files={"cfg/a.json": '{"k": 1}'})
    call("start", req)
    res = wait_for("p1", tmp_path / "runs")["result"]
    assert res["exit_code"] == 0, res
    assert (tmp_path / "runs" / "p1" / "cfg" / "a.json").read_text() == '{"k": 1}'
    assert git(lead[0], "show", f"{BRANCH}:got.txt") == '{"k": 1}'
    assert git(lead[0], "show", f"{BRANCH}:where.txt") == str(tmp_path / "worktrees" / "p1")


def test_log_follows_from_an_offset_without_splitting_a_character(tmp_path: Path,
                                                                  lead: tuple[Path, str]) -> None:
    runs = tmp_path / "runs"
    call("start", request(tmp_path, lead, "l1", "printf 'h\\303\\251llo\\n'"))
    wait_for("l1", runs)
    first = call("log", {"job": "l1", "runs_dir": str(runs), "offset": 0, "limit": 2})
    assert first["data"] == "h" and first["next_offset"] == 1, "the é cut in two waits for the next call"
    rest = call("log", {"job": "l1", "runs_dir": str(runs), "offset": first["next_offset"]})
    assert rest["data"] == "éllo\n" and rest["next_offset"] == rest["size"] == 7


def test_bad_requests_are_answered_not_crashed(tmp_path: Path) -> None:
    assert "'repo'" in call("start", {"job": "x", "runs_dir": str(tmp_path)})["error"]
    jobs = call("status", {"jobs": ["../etc"], "runs_dir": str(tmp_path)})["jobs"]
    assert "job id" in jobs["../etc"]["error"] and jobs["../etc"]["state"] == "missing"
    assert "job id" in call("log", {"job": "../x"})["error"]
    bad = subprocess.run([sys.executable, RUNNER, "start"], input="not json", capture_output=True, text=True)
    assert bad.returncode == 2 and "could not read the request" in json.loads(bad.stdout)["error"]
    usage = subprocess.run([sys.executable, RUNNER, "start", "x"], input="{}", capture_output=True, text=True)
    assert usage.returncode == 2 and "usage" in json.loads(usage.stdout)["error"]


def test_a_missing_repository_is_recorded_not_hung(tmp_path: Path, lead: tuple[Path, str]) -> None:
    call("start", request(tmp_path, lead, "m1", "true", repo=str(tmp_path / "nowhere")))
    res = wait_for("m1", tmp_path / "runs")["result"]
    assert "does not exist" in res["error"] and res["exit_code"] is None and res["head"] is None, res


def test_the_shell_adapter() -> None:
    adapter = ShellAdapter()
    built = adapter.build(task="t", rules="r", model=None, budget_usd=1.0, worktree="/w", run_dir="/r",
                          run="make x")
    assert built.argv == ["sh", "-c", "make x"] and built.meter is None and built.env["BALANCED_TASK"] == "t"
    with pytest.raises(BalancedError) as err:
        adapter.build(task="t", rules="", model=None, budget_usd=None, worktree="/w", run_dir="/r")
    assert "--run" in (err.value.hint or "")
    stopped = adapter.outcome("working\n", None)
    assert stopped.kind == "failed" and "signal" in stopped.summary
    assert commit_message("api", "Add it.") == "api: Add it."
    long = commit_message("api", "A task\nwith a second line.")
    assert long.startswith("api: A task with a second line.")
    assert long.endswith("\n\nA task\nwith a second line."), "the whole task follows a folded subject"


def test_an_agent_that_is_not_installed_says_so_by_its_reason(tmp_path: Path, lead: tuple[Path, str]) -> None:
    req = request(tmp_path, lead, "m1", "true", argv=["no-such-agent-here", "--print"])
    call("start", req)
    res = wait_for("m1", tmp_path / "runs")["result"]
    assert res["reason"] == "not_installed" and "no-such-agent-here" in res["error"], res


def test_a_misspelt_field_of_a_start_request_is_refused_naming_it(tmp_path: Path, lead: tuple[Path, str]) -> None:
    answer = call("start", request(tmp_path, lead, "x1", "true", comit_message="typo"))
    assert "comit_message" in answer["error"] and "does not know" in answer["error"], answer
    assert not (tmp_path / "runs" / "x1").exists(), "nothing was started"


def test_a_result_the_runner_filled_wrongly_is_still_written_and_says_so(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A result that fails its own check (the runner's bug) is still written, as crashed, with the error: not
    left out, which would read as a killed runner."""
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    run_dir = tmp_path / "runs" / "job"
    run_dir.mkdir(parents=True)

    def broken(self: Result) -> None:
        raise MessageError("a field the runner filled wrongly")

    monkeypatch.setattr(Result, "check", broken)
    req = StartRequest.from_json({"job": "job", "repo": str(repo), "worktree": str(tmp_path / "wt"),
                                  "branch": "balanced/job", "base": git(repo, "rev-parse", "HEAD"),
                                  "argv": ["true"], "runs_dir": str(tmp_path / "runs")})
    launch._work(req, str(run_dir), launch.Live())
    data = json.loads((run_dir / "result.json").read_text())
    assert data["reason"] == "crashed", data
    assert data["error"] == "the runner's result was malformed: a field the runner filled wrongly", data
    assert data["job"] == "job" and data["base"] == req.base, "the rest of the result is kept"


def test_no_two_parts_of_the_one_script_bind_the_same_name() -> None:
    """Sent to another machine, the runner's parts are one script's globals: a part that binds a name an earlier
    part bound (outside the `if "NAME" not in globals():` of a part run alone) takes its place for all of them,
    as landcheck.py's `pen` once did launch.py's."""
    import ast
    from collections import defaultdict

    from git_balanced.shipped import runner

    def guarded(node: ast.stmt) -> bool:  # `if "X" not in globals():` — its body runs only where X is missing
        t = node.test if isinstance(node, ast.If) else None
        return (isinstance(t, ast.Compare) and isinstance(t.ops[0], ast.NotIn)
                and isinstance(t.comparators[0], ast.Call) and getattr(t.comparators[0].func, "id", "") == "globals")

    def bound(body: list[ast.stmt]) -> set[str]:
        names: set[str] = set()
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names |= {t.id for t in targets if isinstance(t, ast.Name)}
            elif isinstance(node, ast.If):
                names |= (set() if guarded(node) else bound(node.body)) | bound(node.orelse)
        return names

    folder = Path(runner.__file__).parent
    where: dict[str, list[str]] = defaultdict(list)
    for part in (*runner.PARTS, "runner.py"):
        for name in bound(ast.parse((folder / part).read_text()).body):
            where[name].append(part)
    assert {n: ps for n, ps in where.items() if len(ps) > 1} == {}
