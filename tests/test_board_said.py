"""`board`, `board --json`, `inbox` and `inbox --json` keep their last answer (kit/boardsaid.py, kit/boardstamp.py):
the next look through the front door prints it, byte for byte what the command prints in full, while nothing it
is made from changed; after each kind of change it runs in full again. A kept file that is junk or cut short is
read past, and a worktree's own folder is never where an answer is read from."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from git_balanced import cli, front, jobs
from git_balanced.channel import inbox, presence
from git_balanced.engine.background import EngineLock
from git_balanced.git import Repo
from git_balanced.kit import headless
from git_balanced.kit.boardsaid import CLOCK_ENV, path_of
from git_balanced.lead import open_lead
from git_balanced.machines.placing import check_seats
from git_balanced.shipped import seats
from git_balanced.state import cache, refs
from git_balanced.vocab import JobState, LeadState
from tests.support.builders import commit, git
from tests.support.cli import Ran, _as_a_process, balanced
from tests.support.plans import lead_repo, piece, plan

KINDS = {"board": ["board"], "board-all": ["board", "--all"], "board-json": ["board", "--json"], "inbox": ["inbox"],
         "inbox-json": ["inbox", "--json"]}
PLANTED = "PLANTED: an answer this test wrote into the kept file\n"


def later() -> float:
    """A clock past SETTLED after every write of the test so far (the files it stamps are not brand new)."""
    return time.time() + 5


def front_run(repo: Path, args: list[str], env: dict[str, str | None] | None = None, at: float | None = None) -> Ran:
    """`git balanced ARGS` through the front door, as a fresh process would run it, its clock at `at`."""
    with _as_a_process(repo, None, {CLOCK_ENV: repr(at or later()), **(env or {})}) as (out, err):
        code = front.main(list(args))
    return Ran(code, out.getvalue(), err.getvalue())


def full(repo: Path, args: list[str], env: dict[str, str | None] | None = None) -> Ran:
    """The same through cli.py's click app, which never prints a kept answer."""
    with _as_a_process(repo, None, env or {}) as (out, err):
        code = cli.main(list(args))
    return Ran(code, out.getvalue(), err.getvalue())


def kept_path(repo: Path, kind: str) -> Path:
    return Path(path_of(str(repo / ".git"), kind))


def plant(repo: Path, kind: str) -> None:
    """Put PLANTED in place of the kept answer of `kind`, its stamp as it is: printed only while the stamp holds."""
    path = kept_path(repo, kind)
    head = path.read_text(encoding="utf-8").split("\n", 5)
    facts = head[5].split("\n", int(head[4]) + 1)[:-2]
    path.write_text("\n".join([*head[:5], *facts, str(len(PLANTED)), PLANTED]), encoding="utf-8")


def keep_and_plant(repo: Path, kind: str, env: dict[str, str | None] | None = None) -> None:
    """Look until the answer of `kind` is kept, check that what is kept is what the command prints in full, then
    plant PLANTED and see that a look prints it. (A cache a look writes once the refs' folder is a second old, the
    refs' listing, changes the stamp once after a change: then the next round keeps the answer again.)"""
    args = KINDS[kind]
    for _ in range(3):
        front_run(repo, args, env)
        kept = front_run(repo, args, env)
        assert kept.code == 0 and kept == full(repo, args, env), f"{kind}: the kept answer is not the command's"
        if kept_path(repo, kind).exists():
            plant(repo, kind)
            if front_run(repo, args, env).out == PLANTED:
                return
    raise AssertionError(f"{kind}: the kept answer was not used")


def assert_fresh(repo: Path, kind: str, why: str, env: dict[str, str | None] | None = None,
                 at: float | None = None) -> None:
    ran = front_run(repo, KINDS[kind], env, at)
    assert ran.out != PLANTED, f"{kind}: the kept answer was printed after {why}"
    assert ran == full(repo, KINDS[kind], env), f"{kind}: after {why}, not what the command prints"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The lead each test copies (made once: a plan takes a while to store), made under a HOME of its own."""
    home = tmp_path_factory.mktemp("made-home")
    with pytest.MonkeyPatch.context() as mp:
        for var in [v for v in os.environ if v.startswith(("GIT_", "BALANCED_", "XDG_"))]:
            mp.delenv(var)
        mp.setenv("HOME", str(home))
        mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
        (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n[user]\n\tname = Ada\n\temail = a@b.c\n")
        return _made(tmp_path_factory.mktemp("made"))


@pytest.fixture
def lead(made: Path, tmp_path: Path) -> Path:
    """A copy of `made`, for a test to change."""
    return Path(shutil.copytree(made, tmp_path / "lead", symlinks=True))


def _made(tmp: Path) -> Path:
    """A started plan with a landed job, one finished and waiting for its check and one queued; the inbox's
    lines naming them; and a second plan, done, whose landed job `gc` can fold away."""
    repo = lead_repo(tmp)
    assert plan(repo, [piece(n, f"echo {n} > {n}.txt") for n in ("a", "b", "c")], "--start", task="Work").code == 0
    assert plan(repo, [piece("old", "echo old > old.txt")], "--start", task="Old").code == 0
    r = Repo.discover(repo)
    ids = {st["fields"]["task"]: pid for pid, st in cache.read_all(r, "plans").items()}
    tip = r.rev_parse("main") or ""
    for n, pid, end in (("a", ids["Work"], JobState.LANDED), ("b", ids["Work"], JobState.FINISHED),
                        ("c", ids["Work"], None), ("old", ids["Old"], JobState.LANDED)):
        jid = jobs.place(r, {"plan": pid, "plan_task": "t", "piece": n, "task": f"Do {n}.", "title": f"Do {n}.",
                             "agent": "shell", "run": "true", "machine": "local", "branch": f"balanced/{n}",
                             "base": tip, "attempt": 1, "lead": "main"})
        chain = refs.ref_for("jobs", jid)
        if end is None:
            continue
        refs.append(r, chain, "started", f"{n}: started", {"started_at": 1.0e9, "pid": 1}, state=JobState.RUNNING)
        refs.append(r, chain, "finished", f"{n}: finished", {"exit_code": 0, "head": tip, "commits": 1,
                                                             "outcome": "done"}, state=JobState.FINISHED)
        if end == JobState.LANDED:
            refs.append(r, chain, "landed", f"{n}: landed", {"landed": tip, "landed_in": "main"},
                        state=JobState.LANDED)
            inbox.post(r, "main", f"balanced/{n} landed in main as {tip[:7]}", kind="landed", job=jid)
    refs.append(r, refs.ref_for("plans", ids["Old"]), "done", "Plan done: 1 landed", {"summary": "1 landed"},
                state="done")
    return repo


def test_each_answer_is_kept_and_is_the_commands_to_the_byte(lead: Path) -> None:
    """Kept, each answer is what the command prints in full; through the console script's entry point in a
    process of its own too (stdout a pipe, not a test's capture: a stamp of its own), read there without json,
    re, pathlib, typing, enum, dataclasses or the state's modules."""
    for kind in KINDS:
        keep_and_plant(lead, kind)
        kept_path(lead, kind).unlink()
        keep_and_plant(lead, kind)
    # `--json` prints every job with `--all` or without: the two share one kept answer
    assert full(lead, ["board", "--json", "--all"]) == full(lead, ["board", "--json"])
    keep_and_plant(lead, "board-json")  # again: the inbox's first read made its cache since, which the stamp holds
    assert front_run(lead, ["board", "--json", "--all"]).out == PLANTED
    script = ("import sys\nfrom git_balanced import front\ncode = front.main(sys.argv[1:])\n"
              "print(' '.join(sorted(m for m in ('json', 're', 'pathlib', 'typing', 'enum', 'dataclasses',"
              " 'git_balanced.state') if m in sys.modules)), file=sys.stderr)\nsys.exit(code)\n")
    env = {**os.environ, "PYTHONPATH": str(Path(front.__file__).parents[1])}

    def run(args: list[str]) -> tuple[int, str, str]:
        # The clock past SETTLED after what the run before wrote, taken anew for each run: a clock taken once
        # falls behind what a slow machine writes meanwhile, and an answer whose files are that new is not kept.
        cp = subprocess.run([sys.executable, "-c", script, *args], cwd=lead, env={**env, CLOCK_ENV: repr(later())},
                            capture_output=True, text=True, timeout=60)
        return cp.returncode, cp.stdout, cp.stderr.strip()

    for kind in ("board", "inbox-json"):
        args = KINDS[kind]
        # The command in full first: a full read writes the caches it keeps once the refs' folders are a second
        # old (a plan's summary), so one between the two runs below would change what the first one stamped.
        said = full(lead, args).out
        whole = run(args)  # run in full, kept
        assert whole[0] == 0 and whole[1] == said and "git_balanced.state" in whole[2], (kind, whole)
        assert run(args) == (0, whole[1], ""), f"{kind}: not read back as kept, or read with heavy modules"
        plant(lead, kind)
        assert run(args) == (0, PLANTED, ""), kind


def _job_event(repo: Path) -> None:
    r = Repo.discover(repo)
    queued = next(jid for jid, st in cache.read_all(r, "jobs").items() if st["state"] == JobState.QUEUED)
    refs.append(r, refs.ref_for("jobs", queued), "failed", "c: failed", {"failure": "command-failed",
                "exit_code": 3, "reason": "the command exited 3"}, state=JobState.FAILED)
    inbox.post(r, "main", "c did not finish: the command exited 3", kind="failed", job=queued)


def _engine_crashed(repo: Path) -> None:
    """An engine that took its lock in a process of its own, killed: its pid file stays, naming no process."""
    code = ("from git_balanced.engine.background import EngineLock\nfrom git_balanced.lead import open_lead\n"
            "assert EngineLock(open_lead()).acquire()\nprint('ok', flush=True)\nimport time\ntime.sleep(60)\n")
    child = subprocess.Popen([sys.executable, "-c", code], cwd=repo, stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(Path(front.__file__).parents[1])})
    assert child.stdout is not None and child.stdout.readline() == "ok\n"
    for kind in KINDS:  # its pid file is written: kept again with the engine running
        keep_and_plant(repo, kind)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()


BOARDS = ("board", "board-all", "board-json")
# Each change, and the answers it must make run in full (the others may still be printed as kept).
CHANGES = [
    ("a job event and an inbox line written", _job_event, tuple(KINDS)),
    ("the refs packed", lambda repo: git(repo, "pack-refs", "--all"), tuple(KINDS)),
    ("a done plan and its job archived", lambda repo: balanced(repo, "gc", "--older-than", "0"), tuple(KINDS)),
    ("the lead's branch moved", lambda repo: commit(repo, {"more.txt": "more\n"}, "More"), tuple(KINDS)),
    ("the check seats' budget changed", lambda repo: check_seats.remember(Repo.discover(repo), "local", 7), BOARDS),
]


@pytest.mark.parametrize(("why", "change", "kinds"), CHANGES, ids=[w for w, _, _ in CHANGES])
def test_after_each_change_the_command_runs_in_full(lead: Path, why: str, change: object, kinds: tuple[str]) -> None:
    for kind in KINDS:
        keep_and_plant(lead, kind)
    change(lead)  # type: ignore[operator]
    for kind in KINDS:
        if kind in kinds:
            assert_fresh(lead, kind, why)
        else:  # what it does not read: still kept
            assert front_run(lead, KINDS[kind]).out == PLANTED, f"{kind} ran in full after {why}"


def test_an_engine_started_stopped_or_gone_is_seen(lead: Path) -> None:
    for kind in BOARDS:
        keep_and_plant(lead, kind)
    engine = EngineLock(open_lead(str(lead)))
    assert engine.acquire()
    try:
        for kind in BOARDS:
            assert_fresh(lead, kind, "an engine started")
            keep_and_plant(lead, kind)
    finally:
        engine.release()
    for kind in BOARDS:
        assert_fresh(lead, kind, "the engine stopped")
    _engine_crashed(lead)
    for kind in BOARDS:
        assert_fresh(lead, kind, "the engine was killed")


def test_a_check_seat_taken_and_let_go_is_seen(lead: Path) -> None:
    """A seat of this machine taken (its lock held, its holder's note written) and let go: the board shows seats."""
    for kind in BOARDS:
        keep_and_plant(lead, kind)
    seat = seats.seat_take(2, {"who": "a check of this test", "command": "true"})
    assert seat is not None
    try:
        for kind in BOARDS:
            assert_fresh(lead, kind, "a check seat taken")
            keep_and_plant(lead, kind)
    finally:
        seat.release()
    for kind in BOARDS:
        assert_fresh(lead, kind, "the check seat let go")


def test_a_headless_leads_driver_ending_is_seen(lead: Path) -> None:
    """The headless lead's record names its driver (pid and start tick); the driver ending turns its row to
    `ended` with no file changed: the board runs in full."""
    driver = subprocess.Popen(["sleep", "60"])
    try:
        headless._save(open_lead(str(lead)), {"agent": "claude", "state": LeadState.WAITING, "turns": 2,
                                              "cost_usd": 0.5, **presence.driver(driver.pid)})
        for kind in BOARDS:
            keep_and_plant(lead, kind)
        assert "claude, waiting" in full(lead, ["board"]).out
    finally:
        driver.kill()
        driver.wait()
    for kind in BOARDS:
        assert_fresh(lead, kind, "the headless lead's driver ended")
    assert "claude, ended" in full(lead, ["board"]).out


def test_the_environment_and_the_clock_are_in_the_stamp(lead: Path) -> None:
    for kind in KINDS:
        keep_and_plant(lead, kind)
        assert_fresh(lead, kind, "NO_COLOR set", env={"NO_COLOR": "1"})
        assert_fresh(lead, kind, "TZ set", env={"TZ": "Asia/Tokyo"})
    probed = json.loads((lead / ".git" / "balanced" / "fence.json").read_text())["at"]
    for kind in BOARDS:  # the fence's remembered probe is shown an hour: the answer no longer
        assert_fresh(lead, kind, "the fence's hour passed", at=probed + 3601)


def test_a_kept_file_that_is_junk_or_cut_short_is_read_past(lead: Path) -> None:
    keep_and_plant(lead, "board")
    path = kept_path(lead, "board")
    whole = path.read_bytes()
    for junk in (b"", b"junk", b"\xff\xfe\x00", whole[: len(whole) // 2], whole[:-3], whole.replace(b"\t", b" "),
                 whole.replace(b"said 1", b"said 9"), whole + b"more"):
        path.write_bytes(junk)
        assert_fresh(lead, "board", f"the kept file became {junk[:20]!r}")
    path.unlink()
    path.mkdir()  # a folder where the file should be: read past, and not written over
    assert_fresh(lead, "board", "a folder in the kept file's place")


def test_a_worktrees_own_folder_is_never_read_for_an_answer(lead: Path, tmp_path: Path) -> None:
    """From a linked worktree (a worker's is one) no answer is kept nor read: its git folder and what its `.git`
    file names are the worktree's own to write. Neither is a clone under ~/.balanced/, where workers' copies are."""
    for kind in KINDS:
        keep_and_plant(lead, kind)
    tree = tmp_path / "tree"
    git(lead, "worktree", "add", "-q", "-b", "other", str(tree))
    own = Path(git(tree, "rev-parse", "--absolute-git-dir").strip())
    planted = own / "balanced" / "cache" / "said"  # the worktree's own git folder
    planted.mkdir(parents=True)
    for kind in KINDS:
        (planted / kind).write_bytes(kept_path(lead, kind).read_bytes())
    for kind in KINDS:
        for _ in range(2):
            assert_fresh(tree, kind, "a look from a linked worktree")
    copy = Path(os.environ["HOME"]) / ".balanced" / "copies" / "lead"
    git(tmp_path, "clone", "-q", str(lead), str(copy))
    for _ in range(2):
        assert front_run(copy, ["board"]) == full(copy, ["board"])
    assert not kept_path(copy, "board").exists(), "an answer was kept in a copy under ~/.balanced/"


def test_nothing_is_kept_where_a_ref_folder_is_a_link(lead: Path, tmp_path: Path) -> None:
    """A link among the refs' folders: what changes behind it changes no folder the stamp holds, so no answer is
    kept (the board runs in full each time)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (lead / ".git" / "refs" / "balanced" / "linked").symlink_to(elsewhere, target_is_directory=True)
    for _ in range(2):
        assert front_run(lead, ["board"]) == full(lead, ["board"])
    assert not kept_path(lead, "board").exists()
