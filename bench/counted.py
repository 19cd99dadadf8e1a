"""Run one command and count the CPU of every process it started, those that left it included.

    python bench/counted.py OUT -- COMMAND...

It makes itself the subreaper of what it runs (prctl PR_SET_CHILD_SUBREAPER): a process whose parent ended
(a worker a runner started and let go of) comes to it when it ends, and its CPU is counted here rather than
lost. Once the command ended it waits for its leftovers (5 s at the most), then writes the user and system CPU
seconds of them all to OUT, on a second line when the command itself ended (time.time(): what its caller
waited for, not what it left running, such as the cleanup an ending engine hands to a process of its own), and on
a third when it was launched (time.time() as this process starts it: this process's own start, tens of ms of
Python and ctypes, is not the command's), and exits with the command's code. Linux only.
"""

from __future__ import annotations

import ctypes
import os
import resource
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
LEFTOVERS = 5.0  # seconds it waits for what the command left running


def main(argv: list[str]) -> int:
    out, rest = argv[0], argv[2:]  # OUT -- COMMAND...
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    began = time.time()
    code = subprocess.call(rest)
    ended = time.time()
    deadline = time.monotonic() + LEFTOVERS
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break  # none left
        if pid == 0:
            time.sleep(0.01)
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out, "w") as fh:
        fh.write(f"{use.ru_utime + use.ru_stime}\n{ended!r}\n{began!r}\n")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
