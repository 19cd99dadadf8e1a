"""exits.quiet_full_disk is Python's hook for what a collected object could not close; it also runs while Python
shuts down, after its modules were cleared, when nothing can be imported any more (`gc` on a packed repository
printed `ImportError: sys.meta_path is None` that way, once for each pack dulwich left open). Real processes."""

from __future__ import annotations

import subprocess
import sys

HOOKED = """
import errno, sys
from git_balanced import exits
sys.unraisablehook = exits.quiet_full_disk

class Closing:
    def __init__(self, err): self.err = err
    def __del__(self): raise OSError(self.err, "closing")

# Kept alive to the end: collected while Python shuts down, as a pack file left open is.
kept = [Closing(errno.ENOSPC), Closing(errno.EIO)]
"""


def test_the_hook_runs_at_shutdown_without_importing() -> None:
    cp = subprocess.run([sys.executable, "-c", HOOKED], capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, cp
    assert "ImportError" not in cp.stderr and "meta_path" not in cp.stderr, cp.stderr
    assert "closing" in cp.stderr and "[Errno 5]" in cp.stderr, "the other error is said, as Python says it"
    assert "[Errno 28]" not in cp.stderr, "the full disk is said once, by the command, not again here"
