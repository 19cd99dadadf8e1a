"""The CPU each test costs, counting every process it started (engines, agent CLIs, MCP servers, sshd machines),
while the workers of `pytest -n 4` run side by side: each test process moves itself into a cgroup of its own
(cgroup v1 `cpuacct`, which needs root), and the cgroup's CPU before and after each test is written down.

    CPU_BY_TEST=/tmp/cpu.jsonl PYTHONPATH=. pytest -n 4 --dist loadfile --no-loadscope-reorder \
        -p tests.support.cpu_by_test

writes one line a test: {"test", "cpu" (seconds), "wall" (seconds), "worker", "load" (the 1-minute load average
at its end)}. A process a test left running is counted in the tests after it, on the same worker; a module's sum
is what that module costs. Not part of `make test`: docs/performance.md says what it found.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path("/sys/fs/cgroup/cpuacct")
OUT_ENV = "CPU_BY_TEST"


def _group() -> Path:
    """This test process's own cgroup, made and entered (named by the run's start and the worker)."""
    tag = os.environ.get("PYTEST_XDIST_TESTRUNUID", str(os.getppid()))[:12]
    group = ROOT / f"pytest-{tag}-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
    try:
        group.mkdir(exist_ok=True)
        (group / "cgroup.procs").write_text(str(os.getpid()))
    except OSError as exc:
        raise pytest.UsageError(f"tests.support.cpu_by_test needs a writable cgroup v1 cpuacct at {ROOT} "
                                f"(root, cgroup v1): {exc}. Run without `-p tests.support.cpu_by_test`.") from None
    return group


def _cpu(group: Path) -> float:
    """The CPU seconds of every process in `group` so far, those that ended included."""
    return int((group / "cpuacct.usage").read_text()) / 1e9


def pytest_configure(config: pytest.Config) -> None:
    if not os.environ.get(OUT_ENV):
        raise pytest.UsageError(f"tests.support.cpu_by_test writes to the file named by {OUT_ENV}: set it.")
    if os.environ.get("PYTEST_XDIST_WORKER") or not config.getoption("numprocesses", None):
        config.stash[_KEY] = _group()


_KEY = pytest.StashKey[Path]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    group = item.config.stash.get(_KEY, None)
    if group is None:
        yield
        return
    cpu, began = _cpu(group), time.monotonic()
    yield
    line = {"test": item.nodeid, "cpu": round(_cpu(group) - cpu, 3), "wall": round(time.monotonic() - began, 3),
            "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"), "load": os.getloadavg()[0]}
    with open(os.environ[OUT_ENV], "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


def pytest_unconfigure(config: pytest.Config) -> None:
    """The test process back in the top cpuacct cgroup, and its own taken away (kept while a process it started
    still runs there)."""
    group = config.stash.get(_KEY, None)
    if group is None:
        return
    (ROOT / "cgroup.procs").write_text(str(os.getpid()))
    try:
        group.rmdir()
    except OSError:
        pass
