"""Profiles `git balanced engine` by CPU time, every thread of it (bench/engine.py --profile puts this folder
first on PYTHONPATH and names an output folder in BENCH_PROFILE). Python imports it at its start; in any other
process, or without BENCH_PROFILE, it does nothing. Each thread's profile, and the main thread's at exit, is
written to the folder, `<pid>-<n>.prof`; the bench adds them up."""

from __future__ import annotations

import os

OUT = os.environ.get("BENCH_PROFILE")


def _is_engine() -> bool:
    try:
        with open("/proc/self/cmdline", "rb") as fh:
            argv = fh.read().split(b"\0")
    except OSError:
        return False
    return (b"git_balanced.cli" in argv or b"git_balanced.front" in argv) and b"engine" in argv


def _profile_all(out: str) -> None:
    """Every thread's run, and the main thread's, under a cProfile of its own timed by the thread's CPU."""
    import atexit
    import cProfile
    import itertools
    import threading
    import time

    count = itertools.count()
    run = threading.Thread.run

    def profiled(self: threading.Thread) -> None:
        prof = cProfile.Profile(time.thread_time)
        prof.enable()
        try:
            run(self)
        finally:
            prof.disable()
            prof.dump_stats(f"{out}/{os.getpid()}-{next(count)}.prof")

    threading.Thread.run = profiled  # type: ignore[method-assign]
    main = cProfile.Profile(time.thread_time)

    def done() -> None:
        main.disable()
        main.dump_stats(f"{out}/{os.getpid()}-main.prof")

    atexit.register(done)
    main.enable()


if OUT and _is_engine():
    _profile_all(OUT)
