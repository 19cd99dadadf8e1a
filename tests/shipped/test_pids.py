"""One pid check (shipped/pids.py) for the runner and for seats.py, which travels without the runner: seats.py's
source as the engine sends it carries pids.py's, and a seat's holder that has ended is not a holder, even as a
zombie nobody reaped."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from git_balanced.machines.placing import check_seats
from git_balanced.shipped import runner
from git_balanced.shipped.launch import seats_module
from tests.support.wait import wait_until


def test_the_runner_and_the_seats_as_sent_define_one_pid_check_each() -> None:
    for name, source in (("the runner's script", runner.source()), ("seats.py as sent", check_seats.source())):
        assert source.count("\ndef alive(") == 1, f"{name} carries exactly one pid check"
        assert "def _seat_alive(" not in source, f"{name} has no check of its own beside pids.py's"


def test_a_seat_held_by_an_ended_process_is_free_to_tell(tmp_path: Path) -> None:
    """seats.py loaded from what the engine sends, alone (as the runner's `seats` action loads it)."""
    seats = seats_module(check_seats.source())
    assert seats is not None
    ended = subprocess.Popen(["true"])  # not waited for: a zombie until the end of this test
    wait_until(lambda: (Path(f"/proc/{ended.pid}/stat").read_text().rsplit(")", 1)[1].split() or ["?"])[0] == "Z",
               10, "`true` to end")
    for pid, seat in ((os.getpid(), 0), (ended.pid, 1)):
        (tmp_path / f"held-{pid}-{seat}.json").write_text(json.dumps({"pid": pid, "seat": seat, "who": f"p{seat}"}))
    try:
        assert [h["who"] for h in seats["seat_holders"](str(tmp_path), str(tmp_path / "runs"))] == ["p0"], \
            "the ended holder's note is left out"
    finally:
        ended.wait()
