"""The command line's front door: help, version, exit codes, and the man page behind `--help`."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
from pytest_mock import MockerFixture

from git_balanced.cli import cli, main, manpage
from tests.support.cli import balanced

ROOT = Path(__file__).resolve().parents[1]


def test_every_command_is_listed_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-h"]) == 0
    out = capsys.readouterr().out
    for name in (n for n, c in cli.commands.items() if not c.hidden):
        assert f"  {name} " in out or f"  {name}\n" in out, f"{name} is in -h"


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("git balanced 0.")


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["nosuchcommand"]) == 2
    assert main(["check", "--nosuchflag"]) == 2


def test_the_committed_man_page_is_current() -> None:
    fix = "python -c 'from git_balanced.cli import manpage; print(manpage(), end=\"\")' > man/git-balanced.1"
    assert (ROOT / "man" / "git-balanced.1").read_text() == manpage(), f"regenerate it: {fix}"


@pytest.mark.skipif(shutil.which("man") is None, reason="needs man(1) to show the page")
def test_git_balanced_help_opens_the_man_page(tmp_path: Path) -> None:
    venv = Path(os.environ["PATH"].split(os.pathsep)[0]).parent
    if not (venv / "share" / "man" / "man1" / "git-balanced.1").exists():
        pytest.fail("the man page is not installed beside the venv's bin: run `make test`, which installs it")
    env = dict(os.environ, MANPAGER="cat", PAGER="cat")
    cp = subprocess.run(["git", "balanced", "--help"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert cp.returncode == 0 and "git balanced land" in cp.stdout, cp.stdout + cp.stderr


def test_internal_errors_exit_3_with_a_request_to_report(mocker: MockerFixture,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from git_balanced.commands import trust as trust_cmd

    broken = mocker.patch.object(trust_cmd, "trust_command", side_effect=RuntimeError("a bug"))
    assert main(["trust"]) == 3
    broken.assert_called_once()  # the exit 3 is the bug's, not an earlier failure's
    err = capsys.readouterr().err
    assert "RuntimeError: a bug" in err and "please report it" in err


def test_user_errors_exit_1_without_a_traceback(tmp_path: Path) -> None:
    r = balanced(tmp_path, "board")
    assert r.code == 1 and r.err.startswith("error: ") and "hint: " in r.err and "Traceback" not in r.err


def test_help_and_version_start_without_the_heavy_modules() -> None:
    import sys

    code = ("import sys; from git_balanced.cli import main; main(['--version']); "
            "heavy = [m for m in ('dulwich', 'pydantic', 'ruamel', 'rich') if m in sys.modules]; "
            "print('HEAVY', heavy)")
    cp = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "HEAVY []" in cp.stdout, cp.stdout + cp.stderr


def test_bad_input_gets_one_message_and_exit_1(tmp_path: Path, sealed: Path) -> None:
    """A handful of wrong inputs, each refused with its own words, no traceback, exit 1."""
    from tests.support.builders import git, make_repo

    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    for args in (["init"], ["check"], ["trust"], ["allow", "--yes"]):
        r = balanced(bare, *args)
        assert r.code == 1 and "bare repository" in r.err and "Traceback" not in r.err, (args, r)
    assert not (bare / ".magnum").exists(), "nothing was written into the bare repository"

    empty = tmp_path / "empty"
    git(tmp_path, "init", "-q", "-b", "main", str(empty))
    r = balanced(empty, "worker", "hi", "--run", "true")
    assert r.code == 1 and "has no commits yet" in r.err, r

    repo = make_repo(tmp_path / "r")
    r = balanced(repo, "worker", "w4", "--agent", "shell")
    assert r.code == 1 and "--run" in r.err and "piece" not in r.err, r
    r = balanced(repo, "worker", "  ", "--run", "true")
    assert r.code == 1 and "TASK is empty" in r.err, r
    r = balanced(repo, "plan", "-", "--budget", "-5", input='{"task": "t", "pieces": [{"id": "a", "task": "t"}]}')
    assert r.code == 1 and "--budget -5 is not" in r.err, r
    assert balanced(repo, "log", "-n", "0").code == 2, "a count below 1 is wrong usage"

    cfg = sealed / ".config" / "git-balanced"
    cfg.mkdir(parents=True, exist_ok=True)
    (cfg / "machines.json").write_text('{"machines": {"box1": "oops"}}')
    r = balanced(repo, "machines")
    assert r.code == 1 and "machines.json" in r.err and "Traceback" not in r.err, r
    (cfg / "machines.json").unlink()
    r = balanced(repo, "machines", "add", "box1", "--host", "-evil")
    assert r.code == 1 and "Refusing the host '-evil'" in r.err, r


def test_a_recursion_error_from_input_exits_1_naming_the_command(tmp_path: Path) -> None:
    """Nesting the checks at the edge let through that still overflows the stack (here: a lower stack) is
    yours to fix, so exit 1 with the command that was given, not a traceback and exit 3."""
    import inspect
    import sys

    from tests.support.builders import make_repo

    repo = make_repo(tmp_path / "r", {".magnum/settings.toml": '[balanced]\nagent = "shell"\n'})
    flat, deep = tmp_path / "flat.yaml", tmp_path / "deep.yaml"
    flat.write_text("task: t\npieces:\n  - id: a\n    task: x\n")
    deep.write_text("task: t\npieces:\n  - id: a\n    task: x\n    paths: " + "[" * 16 + "]" * 16 + "\n")
    # Stored once at the usual limit first, so that every module the command imports is imported whole: an
    # import cut short by the lowered limit would leave a package half-imported for the tests after this one.
    assert balanced(repo, "plan", str(flat)).code == 0
    here, limit = len(inspect.stack()), sys.getrecursionlimit()
    try:
        # The lowest stack a flat plan is stored with: 16 more levels of nesting overflow it.
        room = next(n for n in range(40, 400, 5) if (sys.setrecursionlimit(here + n) or
                                                       balanced(repo, "plan", str(flat)).code == 0))
        r = balanced(repo, "plan", str(deep))
    finally:
        sys.setrecursionlimit(limit)
    assert room < 395, "a flat plan was stored"
    assert r.code == 1 and "Traceback" not in r.err, r
    assert f"error: an input of `git balanced plan {deep}`" in r.err and "nested too deeply" in r.err, r.err


@pytest.mark.parametrize(("args", "said"), [
    (["worker", "a\0b", "--run", "true"], "error: worker:1: task: \"a\\x00b\": it holds a NUL character"),
    (["worker", "\ud800", "--run", "true"], "lone surrogate (\\ud800)"),
    (["worker", "t" * 40_000, "--run", "true"], "it has 40,000 characters, more than 32,768"),
    (["worker", "t", "--run", "x\0"], "pieces[0].run"),
    (["worker", "t", "--run", "true", "--budget", "1e308"], "from 0 to 100,000"),
    (["plan", "-", "--budget", "1e308"], "--budget 1e+308 is not a number of US dollars from 0 to 100,000"),
    (["mcp", "--call", "idea", '{"text": ' + "[" * 100_000 + "]" * 100_000 + "}"], "Input should be a valid string"),
    (["mcp", "--call", "idea", '{"text": "\\ud800"}'], "`text` holds a lone surrogate (\\ud800)"),
    (["schedule", "add", "daily 09:00", "caf\udce9"], "error: an argument of `git balanced schedule add daily "
     "09:00 caf\\udce9` is not UTF-8 text."),
    (["correct", "caf\udce9"], "is not UTF-8 text"),
], ids=["worker-nul", "worker-surrogate", "worker-long", "run-nul", "budget-flag", "plan-budget-flag",
        "call-deep", "call-surrogate", "schedule-not-utf8", "correct-not-utf8"])
def test_bad_text_on_the_command_line_exits_1(tmp_path: Path, args: list[str], said: str) -> None:
    from tests.support.builders import make_repo

    repo = make_repo(tmp_path / "r", {".magnum/settings.toml": '[balanced]\nagent = "shell"\n'})
    r = balanced(repo, *args, input='{"task": "t", "pieces": [{"id": "a", "task": "t"}]}')
    assert r.code == 1 and "Traceback" not in r.err, (r.code, r.err[-2000:])
    assert said in r.err, r.err[-2000:]


def test_a_tool_name_that_is_not_text_is_wrong_usage(tmp_path: Path) -> None:
    from tests.support.builders import make_repo

    r = balanced(make_repo(tmp_path / "r"), "mcp", "--call", "bo\udcffard")
    assert r.code == 2 and "Traceback" not in r.err, r
    assert 'error: --call "bo\\udcffard" names no tool: it holds a lone surrogate (\\udcff)' in r.err, r.err


@pytest.mark.parametrize("front", [["git", "balanced"], ["git-balanced"]])
def test_ctrl_c_in_a_real_engine_exits_130(tmp_path: Path, front: list[str]) -> None:
    """Ctrl-C reaches the whole foreground group (git and git-balanced under it): the engine says it was
    interrupted and exits 130, not click's `Aborted.` and 1. git itself dies of the same SIGINT, which a
    shell shows as 130 too."""
    import signal
    import sys
    import time

    from tests.support.builders import make_repo

    repo = make_repo(tmp_path / "repo")
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["PYTHONFAULTHANDLER"] = "1"  # an engine that does not end shows where each of its threads is
    # As a shell at a terminal starts a foreground job: SIGINT at its default, even where this test's own runner
    # was started in the background (where a shell ignores it, and the engine keeps what it was given).
    p = subprocess.Popen([*front, "engine"], cwd=repo, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # noqa: PLW1509
    try:
        lock = repo / ".git" / "balanced"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(lock.glob("engine*")):
            time.sleep(0.1)
        time.sleep(1.0)  # past its start, into the loop's sleep
        os.killpg(p.pid, signal.SIGINT)
        try:
            out, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGABRT)
            out, err = p.communicate(timeout=30)
            raise AssertionError(f"the engine did not end within 30 s of Ctrl-C; its threads:\n{err[-6000:]}") from None
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    code = 128 - p.returncode if p.returncode < 0 else p.returncode  # killed by signal N: a shell says 128+N
    assert code == 130, (out, err)
    assert "Interrupted." in err and "Aborted." not in err


def test_ctrl_c_at_a_prompt_exits_130(mocker: MockerFixture, capsys: pytest.CaptureFixture[str]) -> None:
    """click turns a Ctrl-C in a prompt into Abort; it still exits 130. The end of the input stays 1."""
    mocker.patch("git_balanced.commands.board.board_command", side_effect=KeyboardInterrupt)
    assert main(["board"]) == 130
    assert "Interrupted." in capsys.readouterr().err
    mocker.patch("git_balanced.commands.board.board_command", side_effect=EOFError)
    assert main(["board"]) == 1
    assert "Aborted." in capsys.readouterr().err


def test_plan_help_shows_a_plan_file_that_loads(capsys: pytest.CaptureFixture[str]) -> None:
    from git_balanced.plans.planfile import load_plan

    assert main(["plan", "--help"]) == 0
    out = capsys.readouterr().out
    start = out.rindex("\n", 0, out.index("task:")) + 1
    block = textwrap.dedent(out[start:out.index("\n\n", start)])
    plan = load_plan(block, "plan -h")
    assert [p.id for p in plan.pieces] == ["orders-api", "orders-tests", "changelog"]
