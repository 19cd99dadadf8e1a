"""Start-up: the commands run most often, at a glance or by a hook, against `python -c pass`.

    python bench/startup.py [--rounds R] [--by cpu|wall] [--no-before] [--against DIR] [--only commands|mcp] [--keep]

In a throwaway lead (bench/engine.py's: a private HOME, its check committed and allowed), with the package
byte-compiled as `pip install` compiles it, it runs the console script the way an install writes it (a script
calling the entry point pyproject.toml declares for `git-balanced`, which `git balanced` execs), and times each
command against `python -c pass` on the same interpreter, in turn (A B A B ...), R rounds after a warm-up:

  --version, board, board --json, inbox, inbox --json                  what a person runs to look
  hook pre-tool-use, hook user-prompt-submit, hook stop, hook pre-push  what the agents' and git's hooks run
  mcp, mcp --chief                                                     what an agent CLI starts on each turn

`mcp` is timed from its start to its answer to `tools/list`, asked as an agent CLI asks it (`initialize`, then
`notifications/initialized`, then `tools/list`, the wire held open until the answer), with the answers the
server keeps (kit/said.py) in a folder of the benchmark's, written by the warm-up run; beside it, what bounds it:
the same start without click (what front.py's door would run), and the SDK's server at every start (nothing
kept: what each start cost before kit/stdio.py). Then its first tool call (the board's, read-only): the clock
from the start to that call's answer, the call sent FIRST_CALL_GAP (0.3 s) after the answer to `tools/list`
as an agent sends it, and again 2 s after; each start with the SDK's server loaded once the list is answered
(`mcp`, kit/stdio.py's preload) and in turn the same start loading it only at the call (kit/stdio.py's
serve(preload=False), run by a `python -c` of the benchmark's: what every start did before the preload).

A worker's `hook pre-tool-use` runs as its agent runs it on this machine: the command line its hook settings
name (agents/wiring.py's balanced_argv), in a worktree of its own, with the environment the engine gives a
worker (its worktree, run folder, lead, branch, job and the lead's mode file) and the lead's mode recorded.
`hook stop` runs twice: with the smallest input, and with what Claude Code hands it (its session's transcript
named, which the hook reads for the lead's model). `hook pre-push` is handed what git hands it when main is
pushed, main's tip having passed the check (`git balanced check`, run once before).

It prints the medians of the CPU time (the command's and every process it waited for) and of the clock, the
median of the pairs' ratios, the load average beside each, and (unless --no-before) the CPU ratio of the same
command through cli.py's click app alone, as every command started before the front door (front.py); with
--against DIR, the CPU ratio of the same command run from the package in DIR (a checkout before a change), timed
in the same minute.

Goal: each within 2x of `python -c pass` (by CPU time unless --by wall: on a shared machine the clock mostly
measures the neighbours); `mcp` within MCP_GOAL (3x) of it, and at least 10x less CPU than the SDK's server at
every start; its first tool call (by the clock: it is what the agent waits for), sent 2 s after the list, answered
at least FIRST_CALL_GAIN (1.5x) sooner with the preload than without; sent 0.3 s after it, at least
FIRST_CALL_USED (80%) of those 0.3 s saved (a preload can save no more than the time the agent gives it, while the
load takes some 2 CPU seconds: no ratio is in reach there, so the goal is the time given, used).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing
sys.path.insert(0, str(HERE))  # the other benchmarks' helpers

import engine as engine_bench  # noqa: E402

GOAL = 2.0
MCP_GOAL = 3.0  # front.py takes `mcp` without click; `json` (1.8x by itself) and the checksum are most of the rest
MCP_GAIN = 10.0  # at least this much less CPU than the SDK's server started at every start
FIRST_CALL_GAP = 0.3  # seconds between the answer to tools/list and the first tool call, as an agent sends it
FIRST_CALL_GAIN = 1.5  # the first call's answer at least this much sooner (from the start) with the preload
FIRST_CALL_USED = 0.8  # sent FIRST_CALL_GAP after the list: at least this share of the gap saved
FIRST_CALL = b'{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "board", "arguments": {}}}\n'
# The light start, the SDK's server loaded only at the first tool call (as before kit/stdio.py's preload).
NO_PRELOAD = ("import sys; from git_balanced.kit import stdio; sys.exit(stdio.serve('lead', lambda: "
              "__import__('git_balanced.kit.verbs', fromlist=['VERBS']).VERBS, preload=False))")
MCP_ASKED = b"".join(json.dumps(m).encode() + b"\n" for m in (
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {"roots": {"listChanged": True}},
                "clientInfo": {"name": "claude-code", "version": "2.0.1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
READ_CALL = b'{"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": "README.md"}}'
PROMPT = b'{"hook_event_name": "UserPromptSubmit", "permission_mode": "default", "prompt": "go on"}'
STOP = b'{"hook_event_name": "Stop", "permission_mode": "default"}'
ZERO = "0" * 40


def commands(lead: Path, tmp: Path) -> list[tuple[str, list[str], bytes]]:
    """(what the line says, the arguments, what the command reads on stdin) of each command timed in `lead`."""
    tip = subprocess.run(["git", "rev-parse", "HEAD"], cwd=lead, capture_output=True, text=True,
                         check=True).stdout.strip()
    return [
        ("--version", ["--version"], b""),
        ("board" + SEEN[0], ["board"], b""),
        ("board" + SEEN[1], ["board"], b""),
        ("board --json" + SEEN[0], ["board", "--json"], b""),
        ("board --json" + SEEN[1], ["board", "--json"], b""),
        ("inbox" + SEEN[0], ["inbox"], b""),
        ("inbox" + SEEN[1], ["inbox"], b""),
        ("inbox --json" + SEEN[0], ["inbox", "--json"], b""),
        ("inbox --json" + SEEN[1], ["inbox", "--json"], b""),
        ("hook pre-tool-use", ["hook", "pre-tool-use"], READ_CALL),  # as a worker's agent runs it (worker_hook)
        ("hook user-prompt-submit", ["hook", "user-prompt-submit"], PROMPT),
        ("hook stop", ["hook", "stop"], STOP),
        ("hook stop (Claude Code's)", ["hook", "stop"], claude_stop(lead, tmp)),
        ("hook pre-push", ["hook", "pre-push", "origin"], f"refs/heads/main {tip} refs/heads/main {ZERO}\n".encode()),
    ]


def claude_stop(lead: Path, tmp: Path) -> bytes:
    """Claude Code's Stop input (tests/support/hook_inputs.py), its transcript a session of 300 entries (350 KB)."""
    transcript = tmp / "transcript.jsonl"
    with transcript.open("w", encoding="utf-8") as fh:
        for i in range(300):
            kind = "assistant" if i % 2 else "user"
            message = {"role": kind, "content": [{"type": "text", "text": "word " * (10 + i * 37 % 390)}],
                       **({"model": "claude-sonnet-4-5-20250929"} if kind == "assistant" else {})}
            fh.write(json.dumps({"parentUuid": str(i - 1), "type": kind, "message": message, "uuid": str(i),
                                 "sessionId": "77dca979-a16d-4399-8ceb-7bceb54d53b6"}) + "\n")
    return json.dumps({"session_id": "77dca979-a16d-4399-8ceb-7bceb54d53b6", "transcript_path": str(transcript),
                       "cwd": str(lead), "prompt_id": "29b9aa88-c445-46a7-b4a9-a27f9bb9d75e",
                       "permission_mode": "default", "effort": {"level": "medium"}, "hook_event_name": "Stop",
                       "stop_hook_active": False, "last_assistant_message": "Done.", "background_tasks": [],
                       "session_crons": []}).encode()


# One git process started from Python as hooks/prepush.py starts its `git cat-file --batch` (with os alone).
ONE_GIT = ("import os; os.waitpid(os.posix_spawnp('git', ['git', 'cat-file', '--batch'], dict(os.environ), "
           "file_actions=[(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0)]), 0)")
# What bounds them, timed the same way (figures, no goal): the standard library the package is written with, and
# the modules every command that reads the repository imports (the door to git, the state's types and checks).
BOUNDS: list[tuple[str, str]] = [
    ("json alone", "import json"),  # json imports re and enum: the hooks read and write JSON without it
    ("one git process", ONE_GIT),  # what `hook pre-push` cannot do without
    ("stdlib the package uses", "import dataclasses, enum, json, pathlib, re, subprocess, typing"),
    # what `board` and `inbox` still import of it (no dataclasses, no subprocess: tests/test_board_fast.py; no
    # typing, json, threading, hashlib: tests/test_board_imports.py)
    ("stdlib board and inbox use", "import contextlib, enum, pathlib, re"),
    ("git door and state types", "import git_balanced.git, git_balanced.state.health"),
]


@dataclass(frozen=True)
class Took:
    """One run: seconds on the clock, and CPU seconds of the command and the processes it waited for."""

    wall: float
    cpu: float


@dataclass(frozen=True)
class Pair:
    """Medians of R rounds of a command (A) and of `python -c pass` (B), run in turn, and of their ratios."""

    a: Took
    b: Took
    cpu_ratio: float
    wall_ratio: float
    load: float


def entry_point() -> str:
    """What pyproject.toml's [project.scripts] names for `git-balanced` (module:function)."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    return str(scripts["git-balanced"])


def console_script(where: Path, entry: str) -> Path:
    """A `git-balanced` script as pip writes one for `entry`, run by this Python."""
    module, function = entry.split(":")
    where.mkdir(parents=True, exist_ok=True)
    path = where / "git-balanced"
    path.write_text(f"#!{sys.executable}\nimport sys\nfrom {module} import {function}\n"
                    f"if __name__ == '__main__':\n    sys.exit({function}())\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def run(argv: list[str], cwd: Path, env: dict[str, str], stdin: bytes) -> Took:
    """What one run takes; a command that fails stops the benchmark (it would time its error, not its work)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    res = subprocess.run(argv, cwd=cwd, env=env, input=stdin, capture_output=True)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed (exit {res.returncode}):\n{res.stdout.decode()}{res.stderr.decode()}")
    return Took(took, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)


# `board` and `inbox` print the answer they kept (kit/boardsaid.py) when nothing changed since their last run, and
# read the state in full after a change: each is timed both ways, the change being the bench's own variable of
# the GIT_ family set to a value no run had, which the kept answer's stamp names (nothing else differs).
SEEN = (" (nothing changed)", " (after a change)")
CHANGED = "GIT_BALANCED_BENCH_LOOK"
LOOKS = iter(range(10**9))
SETTLE = 1.2  # kit/boardsaid.SETTLED and a little: no answer is kept while a file of its stamp is younger


def run_changed(argv: list[str], cwd: Path, env: dict[str, str], stdin: bytes) -> Took:
    """`run`, after a change: the kept answer's stamp no longer holds."""
    return run(argv, cwd, {**env, CHANGED: str(next(LOOKS))}, stdin)


def run_mcp(argv: list[str], cwd: Path, env: dict[str, str], stdin: bytes) -> Took:
    """What one start of the MCP server takes to its answer to `tools/list` (the last request of `stdin`, id 2),
    the wire held open until then; CPU counted to its exit, which closing the wire then brings."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(stdin)
    proc.stdin.flush()
    answered = any(json.loads(line).get("id") == 2 for line in iter(proc.stdout.readline, b""))
    took = time.perf_counter() - start
    proc.stdin.close()
    err = proc.stderr.read()
    code = proc.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if not answered or code != 0:
        sys.exit(f"{' '.join(argv)} did not answer tools/list (exit {code}):\n{err.decode()}")
    return Took(took, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)


def paired(argv: list[str], stdin: bytes, cwd: Path, env: dict[str, str], rounds: int,
           runner: Callable[[list[str], Path, dict[str, str], bytes], Took] = run) -> Pair:
    """The command and `python -c pass` in turn, one warm-up each, then `rounds` pairs."""
    floor = [sys.executable, "-c", "pass"]
    runner(argv, cwd, env, stdin)
    run(floor, cwd, env, b"")
    load = os.getloadavg()[0]
    pairs = [(runner(argv, cwd, env, stdin), run(floor, cwd, env, b"")) for _ in range(rounds)]

    def med(values: list[float]) -> float:
        return statistics.median(values)

    return Pair(Took(med([a.wall for a, _ in pairs]), med([a.cpu for a, _ in pairs])),
                Took(med([b.wall for _, b in pairs]), med([b.cpu for _, b in pairs])),
                med([a.cpu / b.cpu for a, b in pairs if b.cpu > 0]), med([a.wall / b.wall for a, b in pairs]),
                (load + os.getloadavg()[0]) / 2)


def build(tmp: Path) -> tuple[Path, dict[str, str]]:
    """The lead, and the environment its commands run in: the package compiled, nothing more written."""
    box = engine_bench.Box(tmp)
    lead = engine_bench.build(box, tmp / "lead")
    box.balanced(lead, "check")  # main's tip passed: what a push of it finds
    compileall.compile_dir(str(ROOT / "git_balanced"), quiet=1)
    env = {k: v for k, v in box.env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT)
    return lead, env


def worker_hook(tmp: Path, lead: Path, env: dict[str, str]) -> tuple[list[str], Path, dict[str, str]]:
    """How a worker's agent on this machine starts its PreToolUse hook: the command line (without `hook ...`),
    the folder (a worktree of its own) and the environment the engine gives it, the lead's mode recorded."""
    from git_balanced.agents import levels, wiring

    worktree, run_dir = tmp / "worktree", tmp / "run"
    run_dir.mkdir()
    subprocess.run(["git", "clone", "-q", str(lead), str(worktree)], env=env, check=True, capture_output=True)
    state = subprocess.run(["git", "rev-parse", "--path-format=absolute", "--git-common-dir"], cwd=lead, env=env,
                           capture_output=True, text=True, check=True).stdout.strip() + "/balanced"
    mode_file = levels.mode_file_in(state, "main")
    os.makedirs(os.path.dirname(mode_file), exist_ok=True)
    Path(mode_file).write_text('{"mode": "acceptEdits", "level": "edits", "agent": "claude"}\n')
    return wiring.balanced_argv(), worktree, {
        **env, "GIT_BALANCED_JOB": "bench", "GIT_BALANCED_BRANCH": "main", "GIT_BALANCED_WORKTREE": str(worktree),
        "GIT_BALANCED_LEAD": str(lead), levels.MODE_FILE_ENV: mode_file, "BALANCED_RUN_DIR": str(run_dir),
        "GIT_BALANCED_WORKER_MODE": "edits", "GIT_BALANCED_ASK_COMMANDS": "0", "GIT_BALANCED_EDIT_WITHOUT_ASKING": "1"}


def mcp_lines(front: Path, lead: Path, env: dict[str, str], tmp: Path,
              args: argparse.Namespace) -> list[tuple[bool, str]]:
    """Time `mcp` and `mcp --chief` to their answer to `tools/list`, and what bounds them; their verdicts."""
    kept = {**env, "GIT_BALANCED_MCP_CACHE": str(tmp / "mcp-said")}
    every = {**env, "GIT_BALANCED_MCP_CACHE": "/dev/null/nothing-kept"}  # a folder no file can be kept in
    door = [sys.executable, "-c", "import sys; from git_balanced.commands.mcp import mcp_command; "
                                  "sys.exit(mcp_command(chief='--chief' in sys.argv))"]
    verdicts: list[tuple[bool, str]] = []
    for label, words in (("mcp to tools/list", ["mcp"]), ("mcp --chief to tools/list", ["mcp", "--chief"])):
        got = paired([str(front), *words], MCP_ASKED, lead, kept, args.rounds, run_mcp)
        old = {**kept, "PYTHONPATH": str(args.against)}
        then = "" if args.against is None else \
            f"{paired([str(front), *words], MCP_ASKED, lead, old, args.rounds, run_mcp).cpu_ratio:7.1f}x"
        _line(label, got, "", then)
        ratio = got.cpu_ratio if args.by == "cpu" else got.wall_ratio
        verdicts.append((ratio <= MCP_GOAL, f"start-up of `git balanced {' '.join(words)}` to its answer to "
                                            f"tools/list within {MCP_GOAL:.0f}x of python -c pass ({args.by}): "
                                            f"{ratio:.1f}x, load {got.load:.2f}"))
        bare = paired([*door, *words[1:]], MCP_ASKED, lead, kept, args.rounds, run_mcp)
        _line("  without click", bare, "", "")
        sdk = paired([str(front), *words], MCP_ASKED, lead, every, max(3, args.rounds // 3), run_mcp)
        _line("  the SDK at every start", sdk, "", "")
        gain = sdk.a.cpu / got.a.cpu
        verdicts.append((gain >= MCP_GAIN, f"`git balanced {' '.join(words)}` to tools/list takes {gain:.0f}x less "
                                           f"CPU than the SDK's server at every start (at least {MCP_GAIN:.0f}x), "
                                           f"load {sdk.load:.2f}"))
    return verdicts + first_call_lines(front, lead, kept, max(3, args.rounds // 3))


def run_first_call(argv: list[str], cwd: Path, env: dict[str, str], gap: float) -> tuple[Took, float]:
    """One start of the MCP server to its answer to its first tool call (FIRST_CALL, the board's), sent `gap`
    seconds after the answer to `tools/list` (CPU counted to its exit, which closing the wire then brings), and
    the seconds that call waited for its answer."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(MCP_ASKED)
    proc.stdin.flush()
    answers = (json.loads(line) for line in iter(proc.stdout.readline, b""))
    listed = any(a.get("id") == 2 for a in answers)
    time.sleep(gap)
    sent = time.perf_counter()
    proc.stdin.write(FIRST_CALL)
    proc.stdin.flush()
    called = next((a for a in answers if a.get("id") == 3), {})
    answered = time.perf_counter()
    proc.stdin.close()
    err = proc.stderr.read()
    code = proc.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if not listed or "result" not in called or called["result"].get("isError") or code != 0:
        sys.exit(f"{' '.join(argv)} did not answer its first tool call (exit {code}): {called}\n{err.decode()}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return Took(answered - start, cpu), answered - sent


def first_call_lines(front: Path, lead: Path, kept: dict[str, str], rounds: int) -> list[tuple[bool, str]]:
    """Time `mcp` from its start to its first tool call's answer, with the preload and without it in turn, the
    call sent FIRST_CALL_GAP after the list and 2 s after; their verdicts."""
    print(f"\n  {'first tools/call, wall':<26}{'preload':>8}{'without':>9}{'ratio':>7}{'waited':>10}{'without':>9}"
          f"{'cpu':>10}{'without':>9}   load")
    verdicts: list[tuple[bool, str]] = []
    for gap in (FIRST_CALL_GAP, 2.0):
        runs = [(*run_first_call([str(front), "mcp"], lead, kept, gap),
                 *run_first_call([sys.executable, "-c", NO_PRELOAD], lead, kept, gap), os.getloadavg()[0])
                for _ in range(rounds)]
        med = statistics.median
        pre, bare = med(r[0].wall for r in runs), med(r[2].wall for r in runs)
        ratio, load = med(r[2].wall / r[0].wall for r in runs), med(r[4] for r in runs)
        print(f"  {f'{gap:.1f} s after the list':<26}{ms(pre):>8}{ms(bare):>9}{ratio:6.2f}x"
              f"{ms(med(r[1] for r in runs)):>10}{ms(med(r[3] for r in runs)):>9}"
              f"{ms(med(r[0].cpu for r in runs)):>10}{ms(med(r[2].cpu for r in runs)):>9}   {load:.2f}", flush=True)
        if gap < 1.0:  # less than the load takes: what the preload can save is the gap itself
            saved = med(r[2].wall - r[0].wall for r in runs)
            verdicts.append((saved >= FIRST_CALL_USED * gap, f"`git balanced mcp`'s first tool call, sent {gap:.1f} s "
                                                             f"after tools/list, answered {ms(saved).strip()} sooner "
                                                             f"with the preload than without (at least "
                                                             f"{FIRST_CALL_USED:.0%} of the {gap:.1f} s, wall): "
                                                             f"{ms(pre).strip()} against {ms(bare).strip()}, "
                                                             f"load {load:.2f}"))
            continue
        verdicts.append((ratio >= FIRST_CALL_GAIN, f"`git balanced mcp`'s first tool call, sent {gap:.1f} s after "
                                                   f"tools/list, answered {ratio:.2f}x sooner from the start with "
                                                   f"the preload than without (at least {FIRST_CALL_GAIN}x, wall): "
                                                   f"{ms(pre).strip()} against {ms(bare).strip()}, load {load:.2f}"))
    return verdicts


def _line(label: str, got: Pair, was: str, then: str) -> None:
    print(f"  {label:<36}{ms(got.a.cpu):>8}{ms(got.b.cpu):>9}{got.cpu_ratio:6.1f}x{ms(got.a.wall):>10}"
          f"{ms(got.b.wall):>9}{got.wall_ratio:6.1f}x{was:>11}{then:>9}   {got.load:.2f}", flush=True)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:5.0f} ms"


def main(argv: list[str] | None = None) -> int:
    """Time each command against python -c pass; print its figures and a PASS or MISS line per command."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9, help="timed pairs per command (default 9)")
    ap.add_argument("--by", choices=("cpu", "wall"), default="cpu",
                    help="what the goal reads: CPU time (default), or the clock")
    ap.add_argument("--no-before", action="store_true", help="skip timing the commands through cli.py alone")
    ap.add_argument("--against", metavar="DIR", type=Path,
                    help="a checkout of the package before a change (`git worktree add DIR REV`): each command is "
                         "timed with it too, in the same minute, its CPU ratio in the column `before`")
    ap.add_argument("--only", choices=("commands", "mcp"), help="time only the commands, or only `mcp`")
    ap.add_argument("--keep", action="store_true", help="keep the folder and print where it is")
    args = ap.parse_args(argv)
    if args.against is not None:
        if not (args.against / "git_balanced" / "front.py").is_file():
            ap.error(f"--against {args.against}: no git_balanced/front.py there; name a checkout of this project")
        compileall.compile_dir(str(args.against / "git_balanced"), quiet=1)
    tmp = Path(tempfile.mkdtemp(prefix="balanced-bench-startup-"))
    verdicts: list[tuple[bool, str]] = []
    try:
        lead, env = build(tmp)
        entry = entry_point()
        front = console_script(tmp / "bin", entry)
        before = console_script(tmp / "bin-click", "git_balanced.cli:main")
        print(f"git balanced start-up benchmark: the console script calls {entry}; python {sys.version.split()[0]}, "
              f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; medians of {args.rounds} pairs, each "
              f"command then `python -c pass`\n")
        print(f"  {'command':<36}{'cpu':>8}{'pass':>9}{'ratio':>7}{'wall':>10}{'pass':>9}{'ratio':>7}"
              f"{'via click':>11}{'before' if args.against else '':>9}   load")
        worker_argv, worktree, worker_env = worker_hook(tmp, lead, env)
        for label, words, stdin in ([] if args.only == "mcp" else commands(lead, tmp)):
            argv, cwd, run_env = ([*worker_argv, *words], worktree, worker_env) if label == "hook pre-tool-use" \
                else ([str(front), *words], lead, env)
            runner = run_changed if label.endswith(SEEN[1]) else run
            if label.endswith(SEEN[0]):  # a change under a second old is not trusted: the answer is kept after it
                runner(argv, cwd, run_env, stdin)  # what a first look writes (the fence's probe, the node), written
                time.sleep(SETTLE)
            got = paired(argv, stdin, cwd, run_env, args.rounds, runner)
            was = "" if args.no_before else \
                f"{paired([str(before), *words], stdin, cwd, run_env, args.rounds, runner).cpu_ratio:9.1f}x"
            against = {**run_env, "PYTHONPATH": str(args.against)}
            then = "" if args.against is None else \
                f"{paired(argv, stdin, cwd, against, args.rounds, runner).cpu_ratio:7.1f}x"
            print(f"  {label:<36}{ms(got.a.cpu):>8}{ms(got.b.cpu):>9}{got.cpu_ratio:6.1f}x{ms(got.a.wall):>10}"
                  f"{ms(got.b.wall):>9}{got.wall_ratio:6.1f}x{was:>11}{then:>9}   {got.load:.2f}", flush=True)
            ratio = got.cpu_ratio if args.by == "cpu" else got.wall_ratio
            verdicts.append((ratio <= GOAL, f"start-up of `git balanced {label}` within {GOAL:.0f}x of python -c "
                                            f"pass ({args.by}): {ratio:.1f}x, load {got.load:.2f}"))
        verdicts += [] if args.only == "commands" else mcp_lines(front, lead, env, tmp, args)
        print("\n  what bounds them (python -c 'IMPORTS', no goal)")
        for label, code in BOUNDS:
            got = paired([sys.executable, "-c", code], b"", lead, env, args.rounds)
            print(f"  {label:<36}{ms(got.a.cpu):>8}{ms(got.b.cpu):>9}{got.cpu_ratio:6.1f}x{ms(got.a.wall):>10}"
                  f"{ms(got.b.wall):>9}{got.wall_ratio:6.1f}x{'':>11}   {got.load:.2f}", flush=True)
        print()
        for ok, words in verdicts:
            print(f"{'PASS' if ok else 'MISS'}  {words}")
        return 0 if all(ok for ok, _ in verdicts) else 1
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
