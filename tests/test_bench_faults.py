"""bench/faults.py answers for its options. Its quick run of the kills, hang and disk parts (`python bench/faults.py
--quick --seed 1 --parts kills,hang,disk`: a few engine kills, a hanging check and a full disk, 40 to 90 s of one test
process) is a fault loop, so it is run by `make bench` (bench/all.py runs the whole suite) and by hand, not by `make
test`; each fault it tries has its own test: a kill between two writes (tests/channel/test_told_after_kill.py,
tests/landing/test_safety.py's killed landings, tests/test_git_swaps.py), a hanging check (tests/engine/test_bounds.py)
and a full disk (tests/landing/test_disk_full.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "faults.py"


def test_help_names_the_options() -> None:
    cp = subprocess.run([sys.executable, str(BENCH), "-h"], capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, cp.stderr
    for option in ("--kills", "--junk", "--seed", "--quick", "--bound", "--parts"):
        assert option in cp.stdout, f"-h names {option}"
