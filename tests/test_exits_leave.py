"""exits.leave ends a process without Python's teardown through atexit's `_run_exitfuncs`, a name atexit does not
promise: on a Python without it, leave ends the ordinary way (SystemExit), and the atexit functions run once
all the same, the output is all there and the exit code is kept. Real processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

LEAVE = """
import atexit, sys
from pathlib import Path
from git_balanced import exits
out = Path(sys.argv[1])
if sys.argv[2] == "missing":
    del atexit._run_exitfuncs  # as on a Python whose atexit has no such function
atexit.register(lambda: out.joinpath("atexit").open("a").write("ran;"))
sys.stdout.write("buffered, no newline")
try:
    exits.leave(7)
except SystemExit:
    out.joinpath("ordinary").write_text("yes")
    raise
"""


@pytest.mark.parametrize("case", ["missing", "there"])
def test_leave_without_run_exitfuncs_ends_the_ordinary_way(tmp_path: Path, case: str) -> None:
    cp = subprocess.run([sys.executable, "-c", LEAVE, str(tmp_path), case], capture_output=True, text=True,
                        timeout=60)
    assert (cp.returncode, cp.stdout, cp.stderr) == (7, "buffered, no newline", ""), cp
    assert (tmp_path / "atexit").read_text() == "ran;", "the atexit functions ran, once"
    assert (tmp_path / "ordinary").exists() == (case == "missing"), "SystemExit only when the function is missing"
