"""bench/faults.py's quick run (`--quick --seed 1`): a few engine kills, a hanging check, a full disk and a few
dozen junk inputs, with the real engine and CLI. Nothing may be lost and no commit may be red; every other finding
must be one of the open ones named below, and while one is seen the test is an expected failure that names it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "faults.py"
CATEGORIES = ("tracebacks", "hangs", "losses", "red commits", "stalls", "debris")

# Findings open on main when the suite was written, each by the words of its finding line. A fix makes its line
# go away; a finding that matches none of these fails the test.
OPEN = {
    "no [worktree] check_timeout: the engine waits on a check that hangs for ever":
        r"\[hangs, hang\] .*still waited on a check that sleeps",
    "a full disk while notes are written: OSError ENOSPC from state/notes.py is exit 3":
        r"\[tracebacks, disk\] .*No space left on device at state/notes\.py",
    "deeply nested event.json under refs/balanced/: RecursionError in state/events.py (board, engine, doctor, "
    "plan) and a healthy plan beside it stops landing":
        r"\[(tracebacks|stalls), junk refs\] .*(RecursionError: .* at state/events\.py|a healthy plan beside junk"
        r" .*deep-nesting.*exit 3)",
    "deeply nested plan files: RecursionError in plans/planfile.py":
        r"\[tracebacks, junk plans\] .*RecursionError: .* at plans/planfile\.py",
    "a plan file with a lone surrogate escape: pydantic ValidationError escapes plans/planfile.py as exit 3":
        r"\[tracebacks, junk plans\] .*ValidationError: .* at plans/planfile\.py",
    "deeply nested settings: RecursionError in settings.py (allow, engine, plan)":
        r"\[tracebacks, junk settings\] .*RecursionError: .* at settings\.py",
}


def test_quick_fault_run(tmp_path: Path) -> None:
    cp = subprocess.run([sys.executable, str(BENCH), "--quick", "--seed", "1"], cwd=tmp_path, capture_output=True,
                        text=True, timeout=900)
    out = cp.stdout
    assert cp.returncode in (0, 1) and "PASS tried:" in out, out[-4000:] + cp.stderr[-4000:]
    for category in ("losses", "red commits", "debris"):
        assert f"PASS {category}: 0" in out, f"no {category} after kills, a full disk and junk:\n{out[-6000:]}"
    findings = [line.strip() for line in out.splitlines() if line.startswith("  [")]
    unknown = [f for f in findings if not any(re.search(p, f) for p in OPEN.values())]
    assert not unknown, "findings that are not among the open ones:\n" + "\n".join(unknown)
    if cp.returncode:
        seen = [name for name, p in OPEN.items() if any(re.search(p, f) for f in findings)]
        pytest.xfail("open findings: " + "; ".join(seen))
    for category in CATEGORIES:
        assert f"PASS {category}: 0" in out, out[-4000:]


def test_help_names_the_options() -> None:
    cp = subprocess.run([sys.executable, str(BENCH), "-h"], capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, cp.stderr
    for option in ("--kills", "--junk", "--seed", "--quick", "--bound", "--parts"):
        assert option in cp.stdout, f"-h names {option}"
