"""bench/faults.py's quick run of its kills, hang and disk parts (`--quick --seed 1 --parts kills,hang,disk`): a few
engine kills, a hanging check and a full disk, with the real engine and CLI. Every count must be zero: no traceback,
no hang, nothing lost, no red commit, no stall, nothing left half-written. Its junk inputs are the shapes
tests/state/test_bad_refs.py, tests/plans/test_bad_plans.py and tests/test_bad_settings.py try one by one; `make bench`
runs them all again, with the rest of the suite at its full size."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "faults.py"
CATEGORIES = ("tracebacks", "hangs", "losses", "red commits", "stalls", "debris")


def test_quick_fault_run(tmp_path: Path) -> None:
    cp = subprocess.run([sys.executable, str(BENCH), "--quick", "--seed", "1", "--parts", "kills,hang,disk"],
                        cwd=tmp_path, capture_output=True, text=True, timeout=900)
    out = cp.stdout
    assert "PASS tried:" in out, out[-4000:] + cp.stderr[-4000:]
    findings = [line.strip() for line in out.splitlines() if line.startswith("  [")]
    assert cp.returncode == 0 and not findings, "the quick fault run found:\n" + "\n".join(findings) + out[-3000:]
    for category in CATEGORIES:
        assert f"PASS {category}: 0" in out, out[-4000:]


def test_help_names_the_options() -> None:
    cp = subprocess.run([sys.executable, str(BENCH), "-h"], capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, cp.stderr
    for option in ("--kills", "--junk", "--seed", "--quick", "--bound", "--parts"):
        assert option in cp.stdout, f"-h names {option}"
