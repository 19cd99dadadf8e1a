"""The board's kept files (`.git/balanced/cache/`) when something else is in their place: a FIFO, a folder or a link
where a file is kept, a row's text planted in `jobs.rows.txt`, or a done job's ref moved back to a live state while
the board reads. Each board finishes and shows what it shows with no kept file."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from git_balanced import front
from git_balanced.engine import kept
from git_balanced.git import Repo
from git_balanced.state import cache
from tests.support.cli import _as_a_process
from tests.test_board_fast import lead  # noqa: F401 — the same lead: five landed, one failed, live ones

BOARDS = [["board", "--all"], ["board", "--json"], ["board"], ["board", "--all", "--json"]]
KEPT = ("jobs.summary.json", "jobs.summary.detail.json", "jobs.rows.txt", "jobs.listed.json", "jobs.json",
        "jobs.log")


def _run(lead: Path, args: list[str]) -> str:  # noqa: F811
    with _as_a_process(lead, None, {}) as (out, err):
        code = front.main(list(args))
    assert code == 0 and "Traceback" not in err.getvalue(), err.getvalue()
    return out.getvalue()


def _shown(lead: Path) -> list[str]:  # noqa: F811
    return [_run(lead, args) for args in BOARDS]


def _plain(lead: Path) -> list[str]:  # noqa: F811
    """The boards with no kept file."""
    shutil.rmtree(Repo.discover(lead).state_dir / "cache")
    return _shown(lead)


def _unsettled(lead: Path) -> None:  # noqa: F811
    """The job and plan refs' folders as just written: no summary of a plan wholly done is kept (state/summary.py
    keeps one only once they have stayed unchanged for a second), so each board reads the kept rows."""
    refs = Repo.discover(lead).git_dir / "refs" / "balanced"
    for kind in ("jobs", "plans"):
        os.utime(refs / kind)


def _plant(rows: Path, jid: str, text: str) -> None:
    """`text` in place of job `jid`'s kept row in `rows`, the file otherwise as written."""
    whole = rows.read_text()
    head_line, body = whole.split("\n", 1)
    head = json.loads(head_line)
    texts = [body[a:b] for a, b in zip([0, *head["ends"][:-1]], head["ends"], strict=True)]
    texts[head["refs"].index(f"refs/balanced/jobs/{jid}")] = text
    ends, at = [], 0
    for t in texts:
        at += len(t)
        ends.append(at)
    rows.write_text(json.dumps({**head, "ends": ends}, separators=(",", ":")) + "\n" + "".join(texts))


@pytest.mark.timeout(120)
def test_what_is_in_a_kept_files_place_is_passed_over(lead: Path, tmp_path: Path) -> None:  # noqa: F811
    """A FIFO (which a plain read would wait on forever), a folder or a link to a file elsewhere, at each kept
    file's path: each board reads as if there were none (and keeps nothing there)."""
    plain = _plain(lead)
    folder = Repo.discover(lead).state_dir / "cache"
    for name in KEPT:
        path = folder / name
        elsewhere = tmp_path / name
        shutil.copyfile(path, elsewhere) if path.exists() else elsewhere.write_text("{}")
        for kind in ("fifo", "folder", "link"):
            path.unlink(missing_ok=True)
            os.mkfifo(path) if kind == "fifo" else path.mkdir() if kind == "folder" else path.symlink_to(elsewhere)
            held = elsewhere.read_bytes()
            assert [_run(lead, ["board", "--json"]), _run(lead, ["board"])] == [plain[1], plain[2]], (name, kind)
            assert elsewhere.read_bytes() == held, "nothing written through a link"
            path.rmdir() if path.is_dir() and not path.is_symlink() else path.unlink()
    assert _shown(lead) == plain, "kept again once the paths are free"


def test_a_planted_row_text_is_made_again(lead: Path) -> None:  # noqa: F811
    """A kept row's text that is not its job's row as kept (the terminal's escapes, a forged row, another job's
    row, a row missing a field, one with a value changed): the board shows the row made again from the job's state
    (`board --json`, which does not parse a done job's kept text, takes one laid out as kept with a value changed
    other than its state's)."""
    _unsettled(lead)
    plain = _plain(lead)
    rows = Repo.discover(lead).state_dir / "cache" / "jobs.rows.txt"
    head, body = rows.read_text().split("\n", 1)
    refs, ends = json.loads(head)["refs"], json.loads(head)["ends"]
    first = refs[0].rsplit("/", 1)[1]
    texts = [body[a:b] for a, b in zip([0, *ends[:-1]], ends, strict=True)]
    mine = texts[0]
    missing = "\n".join(line for line in mine.split("\n") if '"updated"' not in line).replace(",\n    }", "\n    }")
    for planted in ("\x1b]0;pwned\x07" + "X" * 200, '{\n      "id": "' + first + '", "state": "forged"\n    }',
                    texts[1], missing, mine.replace('"agent": "', '"agent": "\x1b[2J'),
                    mine.replace('"landed": "', '"landed": "x')):
        for args in BOARDS:
            _unsettled(lead)
            _plant(rows, first, planted)
            assert _run(lead, args) == plain[BOARDS.index(args)] or (planted.count('"x') and "--json" in args), \
                (args, planted)


def test_a_done_job_moved_back_while_the_board_reads(lead: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A done job's ref moved back to its live tip after the board counted it done: `board --json` shows its row
    as a board with no kept file shows it, whole (not the few fields of a done row)."""
    repo = Repo.discover(lead)
    folder = repo.git_dir / "refs" / "balanced" / "jobs"
    os.utime(folder, (folder.stat().st_mtime - 10,) * 2)  # settled: the jobs' list is kept, and read first
    _shown(lead)
    landed = sorted(jid for jid, st in cache.read_all(repo, "jobs").items() if st["state"] == "landed")[0]
    ref = f"refs/balanced/jobs/{landed}"
    tip = repo.read_ref(ref) or ""
    before = repo.rev_parse(f"{tip}~1") or ""
    real = kept.cache.fragments
    moved = []

    def fragments(*args, **kwargs):  # type: ignore[no-untyped-def]
        if not moved:
            moved.append(repo.update_ref(ref, before, tip, message="moved back"))
        return real(*args, **kwargs)

    try:
        monkeypatch.setattr(kept.cache, "fragments", fragments)
        raced = json.loads(_run(lead, ["board", "--json"]))
        monkeypatch.undo()
        assert moved == [True]
        plain = json.loads(_plain(lead)[1])
    finally:
        monkeypatch.undo()
        repo.update_ref(ref, tip, before, message="moved forward")
    row = next(r for r in raced["jobs"] if r["id"] == landed)
    assert row == next(r for r in plain["jobs"] if r["id"] == landed) and row["state"] == "finished", row
    assert raced["now"] == plain["now"]


@pytest.mark.timeout(120)
def test_what_is_in_the_inbox_caches_place_is_passed_over(lead: Path, tmp_path: Path) -> None:  # noqa: F811
    """The inbox's kept file (`inbox.<lead>.json`) as a FIFO, a folder or a link: `inbox` reads its messages as if
    there were none, and writes nothing through the link."""
    folder = Repo.discover(lead).state_dir / "cache"
    plain = [_run(lead, ["inbox"]), _run(lead, ["inbox", "--json"])]
    kept = sorted(folder.glob("inbox.*.json"))
    assert kept, "the inbox keeps its file"
    for path in kept:
        elsewhere = tmp_path / path.name
        shutil.copyfile(path, elsewhere)
        held = elsewhere.read_bytes()
        for kind in ("fifo", "folder", "link"):
            path.unlink(missing_ok=True)
            os.mkfifo(path) if kind == "fifo" else path.mkdir() if kind == "folder" else path.symlink_to(elsewhere)
            assert [_run(lead, ["inbox"]), _run(lead, ["inbox", "--json"])] == plain, (path.name, kind)
            assert elsewhere.read_bytes() == held, "nothing written through a link"
            path.rmdir() if path.is_dir() and not path.is_symlink() else path.unlink()


def test_a_row_whose_words_hold_c1_characters_or_del_is_kept(lead: Path) -> None:  # noqa: F811
    """JSON writes C1 characters and DEL as they are, in the rows made here too: a kept row whose title holds one is
    laid out as kept (not made again from every job's state at each look); one holding ESC is not."""
    from git_balanced.engine.board import ROW_KEYS

    _unsettled(lead)
    _plain(lead)
    rows = Repo.discover(lead).state_dir / "cache" / "jobs.rows.txt"
    head_line, body = rows.read_text().split("\n", 1)
    head = json.loads(head_line)
    text, meta = body[: head["ends"][0]], head["meta"][0]
    jid = head["refs"][0].rsplit("/", 1)[1]
    assert kept._laid_out(jid, meta, text, len(ROW_KEYS))
    words = '"title": "'
    assert words in text
    for mark, laid_out in (("\x9b", True), ("\x7f", True), ("\x85", True), ("\x1b", False), ("\x07", False)):
        assert kept._laid_out(jid, meta, text.replace(words, words + mark, 1), len(ROW_KEYS)) is laid_out, repr(mark)
