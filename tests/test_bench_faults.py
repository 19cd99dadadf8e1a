"""bench/faults.py's quick run (`--quick --seed 1`): a few engine kills, a hanging check, a full disk and a few
dozen junk inputs, with the real engine and CLI. No commit may be red and nothing may be left half-written; every
finding must be one of the open ones named below, and while one is seen the test is an expected failure that names
it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "faults.py"
CATEGORIES = ("tracebacks", "hangs", "losses", "red commits", "stalls", "debris")

# Findings open on main when the suite was written (a full run, docs/safety/faults.md), each by the words of its
# finding line. A fix makes its line go away; a finding that matches none of these fails the test.
OPEN = {
    "a crash right after the lead's branch moved: the inbox never says the piece landed":
        r"\[losses, kills\] piece \S+'s landing is in the inbox 0 times",
    "a crash right after the landing notes: a piece can carry two landing records on main":
        r"\[losses, kills\] piece \S+: 2 landing notes on main for 1 landed job",
    "no [worktree] check_timeout: the engine waits on a check that hangs for ever":
        r"\[hangs, hang\] .*still waited on a check that sleeps",
    "a full disk while a landing writes: OSError ENOSPC is exit 3 (state/notes.py, git.py cas_ref)":
        r"\[tracebacks, disk\] .*No space left on device at (state/notes\.py|git\.py)",
    "deeply nested event.json under refs/balanced/: RecursionError in state/events.py":
        r"\[tracebacks, junk refs\] .*RecursionError: .* at state/events\.py",
    "huge integers in event.json: OverflowError in state/views.py":
        r"\[tracebacks, junk refs\] .*OverflowError: .* at state/views\.py",
    "event.json with wrong types: TypeError in engine/board.py, AttributeError in state/fold.py":
        r"\[tracebacks, junk refs\] .*(TypeError: .* at engine/board\.py|AttributeError: .* at state/fold\.py)",
    "one junk plan or job ref stops every plan from landing":
        r"\[stalls, junk refs\] a healthy plan beside junk",
    "deeply nested plan files, or 3,000 pieces each after the next: RecursionError in plans/planfile.py":
        r"\[tracebacks, junk plans\] .*RecursionError: .* at plans/planfile\.py",
    "a plan file with a lone surrogate escape: pydantic ValidationError escapes plans/planfile.py as exit 3":
        r"\[tracebacks, junk plans\] .*ValidationError: .* at plans/planfile\.py",
    "a plan file with a 5,000-digit number: ValueError in plans/planfile.py":
        r"\[tracebacks, junk plans\] .*ValueError: Exceeds the limit .* at plans/planfile\.py",
    "`plan /dev/zero`: MemoryError in plans/store.py; `plan FIFO` waits for ever":
        r"\[(tracebacks|hangs), junk plans\] `plan (/dev/zero|junk-plan-fifo)",
    "deeply nested settings: RecursionError in settings.py; settings linked to /dev/zero: MemoryError":
        r"\[tracebacks, junk settings\] .*(RecursionError|MemoryError).* at settings\.py",
}

def test_quick_fault_run(tmp_path: Path) -> None:
    cp = subprocess.run([sys.executable, str(BENCH), "--quick", "--seed", "1"], cwd=tmp_path, capture_output=True,
                        text=True, timeout=900)
    out = cp.stdout
    assert cp.returncode in (0, 1) and "PASS tried:" in out, out[-4000:] + cp.stderr[-4000:]
    for category in ("red commits", "debris"):
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
