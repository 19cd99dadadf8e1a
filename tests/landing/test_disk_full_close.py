"""A full disk that breaks a library's write leaves its file open; Python closes it when the process ends, the
close fails for the same reason, and would print that as `Exception ignored … Traceback`. The command line says
the full disk once, as an error, and nothing more (exits.quiet_full_disk), in a real process on a real small
file system."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.landing.test_disk_full import fill, lead_on, small_disk  # noqa: F401  (small_disk: the fixture)
from tests.support.plans import piece, plan


def test_a_file_left_open_by_a_full_disk_is_not_a_traceback_at_exit(small_disk: Path) -> None:  # noqa: F811
    repo = lead_on(small_disk)
    assert plan(repo, [piece("p", "echo x > src/p.txt")], "--start").code == 0
    filler = fill(small_disk, 0)
    cp = subprocess.run([sys.executable, "-m", "git_balanced.cli", "plan", "-"], cwd=repo, capture_output=True,
                        text=True, input=json.dumps({"task": "T", "pieces": [piece("q", "true")]}), timeout=60)
    filler.unlink()
    assert cp.returncode == 1, cp
    assert cp.stderr.startswith(f"error: The disk holding {repo} (mounted at {small_disk}) is full."), cp.stderr
    assert "Exception ignored" not in cp.stderr and "Traceback" not in cp.stderr, cp.stderr
    assert len(cp.stderr.splitlines()) == 2, "the error and its hint, nothing more"
