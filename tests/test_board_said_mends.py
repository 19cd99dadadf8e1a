"""What a worker can put in `~/.balanced/` (which it may write) does not hang, crash or fool the lead's `board`,
kept answer or not (kit/boardsaid.py, kit/boardstamp.py, shipped/seats.py, shipped/pids.py); and a kept answer
is refused when it is not one the command could have printed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from git_balanced import front
from git_balanced.kit import boardsaid, boardstamp
from git_balanced.kit.boardsaid import CLOCK_ENV
from git_balanced.shipped import seats
from tests.support.cli import _as_a_process
from tests.test_board_said import (
    PLANTED,
    assert_fresh,
    front_run,
    full,
    keep_and_plant,
    kept_path,
    later,
    lead,
    made,
    plant,
)

__all__ = ["lead", "made"]  # the fixtures, shared with tests/test_board_said.py

SCRIPT = "import sys\nfrom git_balanced import front\nsys.exit(front.main(sys.argv[1:]))\n"


def board_process(repo: Path, *args: str, package: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`git balanced board ARGS` through the front door in a process of its own (its package from the folder
    `package`, else this one), ended if it takes over 60 s."""
    where = str(package or Path(front.__file__).parents[1])
    env = {**os.environ, CLOCK_ENV: repr(later()), "PYTHONPATH": where}
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


def planted(repo: Path, kind: str, said: str, keep_facts: bool = True) -> None:
    """`said` in place of the kept answer of `kind`, its stamp as it is (or with no fact at all)."""
    path = kept_path(repo, kind)
    head = path.read_text(encoding="utf-8").split("\n", 5)
    facts = head[5].split("\n", int(head[4]) + 1)[:-2] if keep_facts else []
    path.write_text("\n".join([*head[:4], str(len(facts)), *facts, str(len(said)), said]), encoding="utf-8")


def test_a_kept_answer_with_escapes_or_without_its_stamp_is_refused(lead: Path) -> None:
    """A kept file whose words hold a terminal's escapes, or whose stamp has no facts, or lacks the fixed ones
    (the version first, HEAD's file), is refused: the command runs in full. A board's own bold passes."""
    keep_and_plant(lead, "board")
    whole = kept_path(lead, "board").read_bytes()
    for said, keep_facts in (("\x1b]0;owned\x07" + PLANTED, True), ("a\rb\n", True), (PLANTED, False)):
        planted(lead, "board", said, keep_facts)
        assert_fresh(lead, "board", f"{said!r} planted")
    kept_path(lead, "board").write_bytes(whole)
    head = whole.decode().split("\n", 5)
    facts = head[5].split("\n", int(head[4]) + 1)
    for left in ("version\t", "st\t" + str(lead / ".git" / "HEAD") + "\t"):
        some = [f for f in facts[:-2] if not f.startswith(left)]
        kept_path(lead, "board").write_text("\n".join([*head[:4], str(len(some)), *some, *facts[-2:]]))
        assert_fresh(lead, "board", f"the fact {left!r} left out")
    assert boardsaid.printable("\x1b[1mJOBS\x1b[0m\n· a\tb ⠋ ✓\n") and not boardsaid.printable("\x1b[31mred\n")


def test_a_change_to_any_module_the_board_loaded_is_a_change(lead: Path, tmp_path: Path) -> None:
    """Each module of the package the command loaded is in the stamp, not only those that word the board (the
    version stays the same while developing): one edited (here git/peek.py, in a copy of the package) runs the
    board in full."""
    package = tmp_path / "package"
    shutil.copytree(Path(front.__file__).parent, package / "git_balanced",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for _ in range(3):
        board_process(lead, package=package)
        if kept_path(lead, "board").exists() and board_process(lead, package=package).returncode == 0:
            plant(lead, "board")
            if board_process(lead, package=package).stdout == PLANTED:
                break
    else:
        raise AssertionError("the board was not kept")
    with (package / "git_balanced" / "git" / "peek.py").open("a") as fh:
        fh.write("# edited\n")
    assert board_process(lead, package=package).stdout == full(lead, ["board"]).out


def test_a_note_edited_in_place_with_its_time_set_back_is_seen(lead: Path) -> None:
    """A holder's note rewritten in place, same size, its times set back with utime: its change time tells."""
    folder = Path(seats.seat_prepare(2))
    note = folder / f"held-{os.getpid()}-0.json"
    words = '{"who": "%s", "command": "true", "pid": %d, "seat": 0, "since": 1000000000.0, "budget": 2}'
    note.write_text(words % ("AAAA", os.getpid()))
    keep_and_plant(lead, "board")
    was = note.stat()
    with note.open("r+") as fh:
        fh.write(words % ("BBBB", os.getpid()))
    os.utime(note, ns=(was.st_atime_ns, was.st_mtime_ns))
    assert note.stat().st_size == was.st_size
    assert_fresh(lead, "board", "a holder's note edited, its time set back")


def test_settled_is_judged_from_when_the_stamp_was_taken(lead: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file changed just before the stamp was taken: its answer is not kept, however long the command ran."""
    monkeypatch.chdir(lead)
    head = lead / ".git" / "HEAD"
    head.write_text(head.read_text())  # changed now
    monkeypatch.setenv(CLOCK_ENV, repr(time.time()))
    stamp = boardstamp.before("inbox")
    assert stamp is not None
    boardstamp.told(True)
    monkeypatch.setenv(CLOCK_ENV, repr(time.time() + 10))  # a command that ran ten seconds
    assert not boardstamp.keep(stamp, "an inbox\n")
    assert not kept_path(lead, "inbox").exists()
    stamp = boardstamp.before("inbox")  # taken well after the change: kept
    assert stamp is not None
    boardstamp.told(True)
    assert boardstamp.keep(stamp, "an inbox\n")


def test_a_kept_file_above_the_limit_is_not_read_nor_written(lead: Path) -> None:
    """A kept file past boardsaid.LIMIT is read past without reading it; an answer past it is not kept."""
    keep_and_plant(lead, "board")
    path = kept_path(lead, "board")
    with path.open("r+b") as fh:
        fh.truncate(boardsaid.LIMIT + 1)  # sparse: no 64 MB written
    assert boardsaid._open(str(path)) is None
    assert_fresh(lead, "board", "the kept file grew past the limit")
    path.unlink()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(boardstamp, "LIMIT", 1000)
        ran = front_run(lead, ["board"])
    assert ran.code == 0 and ran.out and not path.exists()
    assert front_run(lead, ["board"]) == ran and path.exists()  # kept under the true limit


def test_an_answer_kept_on_the_tests_clock_is_not_used_without_it(lead: Path) -> None:
    """GIT_BALANCED_SAID_NOW is for tests: whether it is set is in the stamp, so a look without it never prints
    an answer kept with it."""
    keep_and_plant(lead, "board")
    with _as_a_process(lead, None, {CLOCK_ENV: None}) as (out, _):
        assert front.main(["board"]) == 0
    assert out.getvalue() not in ("", PLANTED)
    assert out.getvalue() == full(lead, ["board"]).out


def test_a_stamp_longer_than_its_first_read_is_read_whole(lead: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stamp is read first, alone (boardsaid.HEAD_READ characters), and the answer after it only when it holds;
    a stamp longer than that first read is read on to its end: the kept answer is printed all the same, and one
    cut short, or a stamp that no longer holds, is read past."""
    keep_and_plant(lead, "board")
    whole = kept_path(lead, "board").read_text(encoding="utf-8")
    into_facts = len("\n".join(whole.split("\n", 5)[:5])) + 4  # the head's five lines, and a few of its facts
    for first in (10, into_facts):  # less than the stamp's first line; less than its facts
        monkeypatch.setattr(boardsaid, "HEAD_READ", first)
        assert front_run(lead, ["board"]).out == PLANTED, first
    kept_path(lead, "board").write_text(whole[:-5], encoding="utf-8")  # the answer cut short of its length
    assert_fresh(lead, "board", "its answer was cut short")
    kept_path(lead, "board").write_text(whole.replace("\tst\t", "\tst\tX", 1) if "\tst\t" in whole else
                                        whole.replace("\nst\t", "\nst\t/gone", 1), encoding="utf-8")
    assert_fresh(lead, "board", "a fact of its stamp no longer held")


def test_printable_told_in_c_as_isprintable_tells_it() -> None:
    """boardsaid.printable's quick answer for ASCII text (JSON's, most boards') is the one its words give: every
    character of ASCII, alone and beside a board's bold, line ends and tabs."""
    def words(said: str) -> bool:
        return said.replace("\x1b[1m", "").replace("\x1b[0m", "").replace("\n", "").replace("\t", "").isprintable()

    for n in range(0x80):
        for said in (f'{{\n  "a": "x{chr(n)}y"\n}}\n', f"\x1b[1mJOBS\x1b[0m\n\t{chr(n)}", chr(n), chr(n) * 3):
            assert boardsaid.printable(said) == words(said), f"{said!r}"
    assert not boardsaid.printable('{"a": "\x7f"}') and boardsaid.printable('{"a": "é"}')
