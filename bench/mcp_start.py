"""The MCP server's start: how long `git balanced mcp` takes to answer `initialize` and then `tools/list`, the
two answers an agent waits for before it offers the model the lead's tools, against `python -c pass`.

    python bench/mcp_start.py [--rounds R]

In a throwaway lead (bench/engine.py's), with the package byte-compiled as `pip install` compiles it, it starts
the server as an agent does (the console script pyproject.toml declares, `mcp`), sends `initialize`, then
`notifications/initialized` and `tools/list`, and times from the start to each answer. In turn with it (A B C A
B C ...): `python -c pass`, and the same server with its record of first answers (kit/listed.json) hidden, so
the MCP SDK is imported before it answers (as every start was before kit/wire.py). Medians of R rounds after
a warm-up, the load average beside them.

Goal: `tools/list` answered within 5x of `python -c pass` by the clock (the agent waits by the clock; the
server's own start, click's import and the record's reading, is what is left), and at least 3x sooner than with
the SDK answering. Claude Code's `-p` waits MCP_CONNECT_TIMEOUT_MS for it (5 s unless set); a loaded machine
made the SDK's answer later than that.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing
sys.path.insert(0, str(HERE))  # the other benchmarks' helpers

import engine as engine_bench  # noqa: E402
import startup  # noqa: E402

GOAL_FLOOR, GOAL_SOONER = 5.0, 3.0
HELLO = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}}
ASKS = [{"jsonrpc": "2.0", "method": "notifications/initialized"}, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
# The server with its record hidden: the SDK answers everything, imported before the first answer.
NO_RECORD = ("import sys\nfrom pathlib import Path\nfrom git_balanced.kit import wire\n"
             "wire.LISTED = Path('/nonexistent/listed.json')\nfrom git_balanced.commands.mcp import mcp_command\n"
             "sys.exit(mcp_command())\n")


def session(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Seconds from the start to the answer to initialize, and to the one to tools/list."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(HELLO).encode() + b"\n")
    proc.stdin.flush()
    first = json.loads(proc.stdout.readline())
    hello = time.perf_counter() - start
    proc.stdin.write(b"".join(json.dumps(a).encode() + b"\n" for a in ASKS))
    proc.stdin.flush()
    listed = json.loads(proc.stdout.readline())
    tools = time.perf_counter() - start
    proc.stdin.close()
    proc.wait(timeout=120)
    if "result" not in first or len(listed.get("result", {}).get("tools", [])) < 10:
        sys.exit(f"{' '.join(argv)} did not answer as a server: {first} {listed}")
    return hello, tools


def floor(cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], cwd=cwd, env=env, check=True)
    return time.perf_counter() - start


def ms(seconds: float) -> str:
    return f"{seconds * 1000:6.0f} ms"


def main(argv: list[str] | None = None) -> int:
    """Time the server's first answers with and without its record, and python -c pass; PASS or MISS lines."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7, help="timed rounds (default 7)")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="balanced-bench-mcp-"))
    try:
        box = engine_bench.Box(tmp)
        lead = engine_bench.build(box, tmp / "lead")
        compileall.compile_dir(str(ROOT / "git_balanced"), quiet=1)
        env = {k: v for k, v in box.env.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPATH"] = str(ROOT)
        script = startup.console_script(tmp / "bin", startup.entry_point())
        now, was = [str(script), "mcp"], [sys.executable, "-c", NO_RECORD]
        session(now, lead, env), session(was, lead, env), floor(lead, env)  # warm-up
        before = os.getloadavg()[0]
        rounds = [(session(now, lead, env), session(was, lead, env), floor(lead, env)) for _ in range(args.rounds)]
        load = (before + os.getloadavg()[0]) / 2
        med = statistics.median
        hello, tools = med([r[0][0] for r in rounds]), med([r[0][1] for r in rounds])
        sdk_hello, sdk_tools = med([r[1][0] for r in rounds]), med([r[1][1] for r in rounds])
        base = med([r[2] for r in rounds])
        vs_floor = med([r[0][1] / r[2] for r in rounds])
        sooner = med([r[1][1] / r[0][1] for r in rounds])
        print(f"git balanced mcp start: python {sys.version.split()[0]}, {os.cpu_count()} cores, load {load:.2f}; "
              f"medians of {args.rounds} rounds\n")
        print(f"  {'':<34}{'initialize':>12}{'tools/list':>12}")
        print(f"  {'git balanced mcp':<34}{ms(hello):>12}{ms(tools):>12}")
        print(f"  {'the SDK answering (no record)':<34}{ms(sdk_hello):>12}{ms(sdk_tools):>12}")
        print(f"  {'python -c pass':<34}{ms(base):>12}\n")
        verdicts = [(vs_floor <= GOAL_FLOOR, f"tools/list answered within {GOAL_FLOOR:.0f}x of python -c pass "
                                             f"(wall): {vs_floor:.1f}x ({ms(tools).strip()}), load {load:.2f}"),
                    (sooner >= GOAL_SOONER, f"tools/list answered {GOAL_SOONER:.0f}x sooner than with the SDK "
                                            f"answering: {sooner:.1f}x ({ms(sdk_tools).strip()} before), "
                                            f"load {load:.2f}")]
        for ok, words in verdicts:
            print(f"{'PASS' if ok else 'MISS'}  {words}")
        return 0 if all(ok for ok, _ in verdicts) else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
