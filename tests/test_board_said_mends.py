"""What a worker can put in `~/.balanced/` (which it may write) does not hang, crash or fool the lead's `board`,
kept answer or not (kit/boardsaid.py, kit/boardstamp.py, shipped/seats.py, shipped/pids.py); and a kept answer
is refused when it is not one the command could have printed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from git_balanced import front
from git_balanced.kit.boardsaid import CLOCK_ENV
from git_balanced.shipped import seats
from tests.test_board_said import PLANTED, full, keep_and_plant, kept_path, later, lead, made

__all__ = ["lead", "made"]  # the fixtures, shared with tests/test_board_said.py

SCRIPT = "import sys\nfrom git_balanced import front\nsys.exit(front.main(sys.argv[1:]))\n"


def board_process(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`git balanced board ARGS` through the front door in a process of its own, ended if it takes over 60 s."""
    env = {**os.environ, CLOCK_ENV: repr(later()), "PYTHONPATH": str(Path(front.__file__).parents[1])}
    return subprocess.run([sys.executable, "-c", SCRIPT, "board", *args], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=60)


def fifo_kept_as_was(path: Path) -> None:
    """A FIFO in `path`'s place, its folder's times restored (what a worker can do in `~/.balanced/`)."""
    folder = path.parent
    was = folder.stat()
    if path.exists():
        path.unlink()
    os.mkfifo(path)
    os.utime(folder, ns=(was.st_atime_ns, was.st_mtime_ns))


def test_a_fifo_for_a_seat_or_a_note_never_holds_the_board(lead: Path) -> None:
    """A FIFO where a seat's lock is, or where a worker run's seat note is: the board ends, the kept answer or the
    full one, and says what the command says in full (the FIFO read past)."""
    folder = Path(seats.seat_prepare(2))
    keep_and_plant(lead, "board")
    fifo_kept_as_was(folder / "seat-1.lock")
    ran = board_process(lead)
    assert ran.returncode == 0 and ran.stdout not in ("", PLANTED), ran
    assert ran.stdout == full(lead, ["board"]).out
    (folder / "seat-1.lock").unlink()
    runs = Path(os.path.expanduser(seats.SEAT_RUNS))
    (runs / "evil").mkdir(parents=True)
    keep_and_plant(lead, "board-json")
    os.mkfifo(runs / "evil" / seats.SEAT_NOTE)
    ran = board_process(lead, "--json")
    assert ran.returncode == 0 and ran.stdout == full(lead, ["board", "--json"]).out, ran
    assert seats.seats_in_use() == 0 and seats.seat_holders() == []


def test_a_note_naming_a_huge_pid_is_no_process(lead: Path) -> None:
    """A seat note naming a pid past any the kernel gives: no traceback, the board as in full."""
    runs = Path(os.path.expanduser(seats.SEAT_RUNS)) / "evil"
    runs.mkdir(parents=True)
    (runs / seats.SEAT_NOTE).write_text('{"pid": 99999999999999999999, "seat": 0}')
    for args in ((), ("--json",)):
        ran = board_process(lead, *args)
        assert ran.returncode == 0 and "Traceback" not in ran.stderr, ran
        assert ran.stdout == full(lead, ["board", *args]).out
    assert seats.seat_holders() == []
    assert kept_path(lead, "board").exists()
