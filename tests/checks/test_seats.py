"""One check budget per machine: every check there (`git balanced seat` in a worker, the landing's) takes a seat,
waits for one when all are taken and hears who holds them; `machines` and the board show the seats in use."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from git_balanced import jobs as J
from git_balanced.engine.workers import rules_for
from git_balanced.git import Repo
from git_balanced.shipped.seats import SEAT_ENV_BUDGET, SEAT_ENV_DIR, Seat, seat_take, seats_state
from tests.support.cli import balanced
from tests.support.plans import board, engine, lead_repo, piece, plan
from tests.support.wait import wait_until

HOLDER = {"who": "the landing of /elsewhere", "command": "make test"}


@contextmanager
def started(args: list[str], cwd: Path, log: Path, env: dict[str, str] | None = None
            ) -> Iterator[subprocess.Popen[str]]:
    """`git balanced ARGS` as a process of its own, its stderr to `log`; ended if still running at the end."""
    with log.open("w") as err:
        p = subprocess.Popen([sys.executable, "-m", "git_balanced.cli", *args], cwd=cwd,
                             env={**os.environ, **(env or {})}, stdout=subprocess.PIPE, stderr=err,
                             stdin=subprocess.DEVNULL, text=True)
    try:
        yield p
    finally:
        if p.poll() is None:
            p.kill()
        p.wait()
        assert p.stdout is not None
        p.stdout.close()


def test_a_check_waits_for_a_free_seat_and_hears_who_holds_them(tmp_path: Path) -> None:
    where = tmp_path / "seats"
    held = seat_take(1, HOLDER, where=str(where))
    assert isinstance(held, Seat)
    log = tmp_path / "seat.err"
    with started(["seat", "echo ran in a seat"], tmp_path, log, {SEAT_ENV_DIR: str(where), SEAT_ENV_BUDGET: "1"}) as p:
        wait_until(lambda: "waiting for one" in log.read_text(), 60, "the check to wait", said=log.read_text)
        assert ("All 1 check seats of this machine are taken (the landing of /elsewhere runs `make test` since "
                in log.read_text()), log.read_text()
        assert p.poll() is None, "it waits while the only seat is taken"
        state = seats_state(1, str(where))
        assert state["in_use"] == 1 and [h["command"] for h in state["holders"]] == ["make test"]
        held.release()
        assert p.wait(60) == 0
        assert p.stdout is not None and p.stdout.read() == "ran in a seat\n"
    assert "Check seat 1 of 1 taken after" in log.read_text()
    assert seats_state(1, str(where))["in_use"] == 0, "its seat is free again"


def test_the_landings_check_takes_a_seat_shown_by_machines_and_the_board(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path, extra="check_seats = 1\n")
    config = Path(os.environ["GIT_BALANCED_SSH_CONFIG"])  # no SSH host here: `machines` lists this machine
    config.parent.mkdir(parents=True, exist_ok=True)
    config.touch()
    held = seat_take(1, HOLDER)  # this machine's only seat (~/.balanced/seats), as another check would hold it
    assert held is not None
    log = tmp_path / "check.err"
    with started(["check"], repo, log) as p:
        wait_until(lambda: "waits for one of this machine's 1 check seats" in log.read_text(), 60,
                   "the landing's check to wait for a seat", said=log.read_text)
        assert "the landing of /elsewhere runs `make test`" in log.read_text()
        listed = balanced(repo, "machines", "--json")
        assert listed.code == 0, listed
        local = json.loads(listed.out)[0]
        assert local["name"] == "local" and local["check_seats"]["budget"] == 1
        assert local["check_seats"]["in_use"] == 1, local
        shown = balanced(repo, "machines")
        assert "check seats: 1/1 in use" in shown.out and "seat 1: the landing of /elsewhere" in shown.out, shown
        assert board(repo)["check_seats"]["local"]["in_use"] == 1
        assert p.poll() is None
        held.release()
        assert p.wait(60) == 0, log.read_text()
    assert json.loads(balanced(repo, "machines", "--json").out)[0]["check_seats"]["in_use"] == 0


def test_a_pieces_own_check_is_named_to_its_worker_run_in_a_seat_and_reported(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path, check=None, extra="check_seats = 2\n")
    own = "test -f src/a.txt && echo own check ran"
    run = f"echo a > src/a.txt && git add -A && git commit -qm a && git balanced seat '{own}'"
    failing = "echo b > src/b.txt && git add -A && git commit -qm b && { git balanced seat 'exit 4' || true; }"
    assert plan(repo, [piece("a", run, check=own), piece("b", failing, check="exit 4")], "--start").code == 0
    ran = engine(repo, "--until-idle")
    assert "waits for `git balanced land" in ran.out or "as no check is set" in ran.out, ran
    jobs = {j.piece: j for j in J.all_jobs(Repo.discover(repo)).values()}
    job = jobs["a"]
    heard = balanced(repo, "inbox").out
    assert f"b finished, but its own check `exit 4` failed (exit 4); its branch goes to the repository's check " \
        f"(`git balanced show {jobs['b'].id}`)" in heard, heard
    assert "a finished, but" not in heard, "a passing check is no news"
    assert job.check == own
    rules = rules_for(job, None, None)
    assert f"run your piece's check in one of this machine's check seats: `git balanced seat '{own}'`" in rules
    assert [(c["command"], c["exit_code"]) for c in job.checks] == [(own, 0)], job.checks
    row = next(r for r in board(repo)["jobs"] if r["piece"] == "a")
    assert row["check"] == own and f"its own check `{own}` passed" in row["reason"], row
    shown = balanced(repo, "board")
    assert f"its own check `{own}` passed" in shown.out, shown


def test_a_check_runs_without_a_seat_where_no_seats_folder_may_be_used(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder\n")
    log = tmp_path / "seat.err"
    with started(["seat", "exit 3"], tmp_path, log, {SEAT_ENV_DIR: str(blocked / "seats")}) as p:
        assert p.wait(60) == 3, log.read_text()
    said = log.read_text()
    assert "This machine's check seats cannot be used here" in said and "running `exit 3` without one" in said
    assert "`exit 3` failed (exit 3)" in said, said
