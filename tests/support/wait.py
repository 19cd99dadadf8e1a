"""Waiting on another process: poll for the event or the file it makes, with a deadline, never a fixed sleep."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")


def wait_until(predicate: Callable[[], T], timeout: float, what: str, *, every: float = 0.05,
               said: Callable[[], object] | None = None) -> T:
    """Poll `predicate` until it returns a true value, and return that value; after `timeout` seconds fail
    the test saying that `what` did not happen, with `said()` (what there was to see) when given."""
    deadline = time.monotonic() + timeout
    while True:
        got = predicate()
        if got:
            return got
        if time.monotonic() >= deadline:
            seen = f"\n{said()}" if said is not None else ""
            pytest.fail(f"waited {timeout:g} s for {what}, in vain{seen}")
        time.sleep(every)


def wait_for_file(path: Path, timeout: float, what: str) -> str:
    """Wait until the file at `path` exists and holds something; return its text."""
    def text() -> str:
        try:
            return path.read_text()
        except FileNotFoundError:
            return ""

    return wait_until(text, timeout, what)
