"""A machine's check seats: at most `budget` checks run at once on one machine, whoever runs them (every worker's
own check, through `git balanced seat`, and the landing's check there). A seat is a lock file in the machine's
seats folder (`~/.balanced/seats/seat-N.lock`) held with flock while its check runs: the kernel lets it go when
its holder ends, however it ends, so no seat is ever left taken. Who holds a seat is a note beside its holder
(`seat.json` in a worker's run folder, which a fenced worker may write; `held-PID-SEAT.json` in the seats
folder for the landing), read back only while its pid lives (pids.py). Stdlib only, Python 3.9+: the engine
sends its source, after pids.py's, with a worker's start (its run folder's `bin/seats.py`, which the workers'
`git-balanced` script loads) and with the runner's `seats` action; the runner's own script does not carry it."""

from __future__ import annotations

import fcntl
import os
import time

if "alive" not in globals():  # as sent, pids.py's source comes first and defines them
    from git_balanced.shipped.pids import alive, plain_fd

SEATS_DIR = "~/.balanced/seats"
SEAT_RUNS = "~/.balanced/runs"
SEAT_ENV_DIR = "GIT_BALANCED_SEATS_DIR"  # where a worker's seats are: the runner sets it (a pen may move HOME)
SEAT_ENV_BUDGET = "GIT_BALANCED_CHECK_SEATS"  # the budget a worker's checks go by: the runner sets it
SEAT_ENV_WHO = "GIT_BALANCED_SEAT_WHO"  # who a worker's checks are, in words: the engine sets it
SEAT_NOTE = "seat.json"
SEAT_POLL = 0.5


def seat_budget(value: object = None) -> int:
    """The seats of this machine: `value` when it is a positive number, else the machine's cores."""
    try:
        n = int(str(value)) if value not in (None, "") else 0
    except ValueError:
        n = 0
    return n if n > 0 else (os.cpu_count() or 1)


def seat_folder(where: str | None = None) -> str:
    return os.path.abspath(os.path.expanduser(where or os.environ.get(SEAT_ENV_DIR) or SEATS_DIR))


def seat_prepare(n: int, where: str | None = None) -> str:
    """Make the seats folder and its first `n` lock files (a fenced worker can open them, not make them)."""
    d = seat_folder(where)
    os.makedirs(d, exist_ok=True)
    for i in range(n):
        path = os.path.join(d, f"seat-{i}.lock")
        if not os.path.exists(path):
            os.close(os.open(path, os.O_RDONLY | os.O_CREAT, 0o644))
    return d


def _seat_lock(d: str, i: int) -> int | None:
    """The descriptor of seat `i` locked by this process, or None while another holds it; OSError when the seat
    cannot be opened at all (a seat the runner did not make, in a folder this process may not write)."""
    path = os.path.join(d, f"seat-{i}.lock")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO in a seat's place must not hold the open
    except FileNotFoundError:
        fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


class Seat:
    """A seat taken: its number, and the note that says who holds it. `release()` (or the holder's end) frees it."""

    def __init__(self, fd: int, number: int, note: str) -> None:
        self.fd, self.number, self.note = fd, number, note

    def release(self) -> None:
        if self.fd < 0:
            return
        try:
            os.unlink(self.note)
        except OSError:
            pass
        os.close(self.fd)
        self.fd = -1

    def __enter__(self) -> Seat:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _seat_write_note(path: str, data: dict) -> None:
    """Write who holds a seat; where the holder may not write (an agent's own sandbox), the seat is held all the
    same, only nameless."""
    import json  # here, as in each function that reads or writes JSON: the board reads seats no one holds

    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    except OSError:
        pass


def seat_take(n: int, holder: dict, note: str | None = None, where: str | None = None, on_wait=None,
         stop=None) -> Seat | None:
    """Take one of the machine's `n` seats, waiting for one: `on_wait(holders)` hears who holds them when all are
    taken (again each time that changes); `stop()` true ends the wait with None. `holder` says who asks (`who`,
    `command`); its note goes to `note` (default: the seats folder's `held-PID-SEAT.json`)."""
    d = seat_prepare(0, where)
    told = None
    while True:
        for i in range(n):
            fd = _seat_lock(d, i)
            if fd is not None:  # one process may hold several seats (the landing's slots): a note for each
                mine = note or os.path.join(d, f"held-{os.getpid()}-{i}.json")
                _seat_write_note(mine, {**holder, "seat": i, "pid": os.getpid(), "since": time.time(), "budget": n})
                return Seat(fd, i, mine)
        if stop is not None and stop():
            return None
        now = seat_holders(d)
        key = sorted((h.get("pid"), h.get("seat")) for h in now)
        if on_wait is not None and key != told:
            told = key
            on_wait(now)
        time.sleep(SEAT_POLL)


def _seat_names(d: str, start: str = "", end: str = "") -> list:
    """The paths of the entries of folder `d` named `start`...`end`, hidden ones left out (as a shell's `*`
    matches them); none when there is no such folder. Without `glob`: the board reads seats on every look."""
    try:
        names = os.listdir(d)
    except OSError:
        return []
    return [os.path.join(d, n) for n in names if n.startswith(start) and n.endswith(end) and not n.startswith(".")
            and len(n) >= len(start) + len(end)]


def seat_holders(where: str | None = None, runs: str | None = None) -> list[dict]:
    """Who holds this machine's seats now: each note whose holder still runs, by seat."""
    d = seat_folder(where)
    paths = _seat_names(d, "held-", ".json")
    paths += [os.path.join(run, SEAT_NOTE) for run in _seat_names(os.path.expanduser(runs or SEAT_RUNS))]
    out = []
    for path in paths:
        fd = plain_fd(path)
        if fd is None:
            continue
        import json  # here: only a seat held has a note to read

        try:
            with os.fdopen(fd, encoding="utf-8") as f:
                note = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(note, dict) and alive(note.get("pid")):
            out.append(note)
    return sorted(out, key=lambda h: (h.get("seat", 0), h.get("since", 0)))


def seats_in_use(where: str | None = None) -> int:
    """How many of this machine's seats are held now (each lock file tried, and let go at once if free)."""
    d = seat_folder(where)
    used = 0
    for path in _seat_names(d, "seat-", ".lock"):
        fd = plain_fd(path)
        if fd is None:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            used += 1
        finally:
            os.close(fd)
    return used


def seats_state(n: int, where: str | None = None, runs: str | None = None) -> dict:
    """This machine's seats as `machines` and the board show them: budget, in use, and who holds them."""
    return {"budget": n, "in_use": seats_in_use(where), "holders": seat_holders(where, runs)}


def seat_holder_words(h: dict) -> str:
    """One holder in words: `the worker on balanced/api (job 1m9x) runs `pytest -q` since 10:02:11 (pid 4242)`."""
    since = time.strftime("%H:%M:%S", time.localtime(float(h.get("since") or 0)))
    return f"{h.get('who') or 'a check'} runs `{h.get('command') or '?'}` since {since} (pid {h.get('pid')})"


def seat_run(command: str, n: int, who: str, note: str | None = None, where: str | None = None, out=None) -> int:
    """`git balanced seat CMD`: run `command` (with `sh -c`) in one of the machine's `n` seats, waiting for one
    and saying who holds them meanwhile; its exit code. In a worker's run folder, each run is kept in
    `checks.jsonl` there (command, exit code, seconds, seat), for its lead."""
    import subprocess
    import sys

    err = out or sys.stderr

    def waiting(now: list) -> None:
        held = "; ".join(seat_holder_words(h) for h in now) or "their holders are starting"
        print(f"All {n} check seats of this machine are taken ({held}); waiting for one.", file=err, flush=True)

    start = time.time()
    try:
        seat = seat_take(n, {"who": who, "command": command}, note, where, waiting)
    except OSError as exc:  # no seats folder it may use: the check still runs, and says so
        print(f"This machine's check seats cannot be used here ({exc}); running `{command}` without one.",
              file=err, flush=True)
        seat = None
    began = time.time()
    if seat is None:
        code = subprocess.call(["sh", "-c", command])
    else:
        with seat:
            print(f"Check seat {seat.number + 1} of {n} taken after {began - start:.1f}s: running `{command}`.",
                  file=err, flush=True)
            began = time.time()
            code = subprocess.call(["sh", "-c", command])
    _seat_keep({"command": command, "exit_code": code, "seconds": round(time.time() - began, 3),
                "waited": round(began - start, 3), "at": time.time()}, err)
    freed = "; its seat is free again" if seat is not None else ""
    print(f"`{command}` {'passed' if code == 0 else f'failed (exit {code})'}{freed}.", file=err, flush=True)
    return code


def _seat_keep(line: dict, err) -> None:
    """In a worker, keep a check's result in its run folder's checks.jsonl, which its runner reports."""
    run_dir = os.environ.get("BALANCED_RUN_DIR")
    if not run_dir or not os.path.isdir(run_dir):
        return
    import json

    try:
        with open(os.path.join(run_dir, "checks.jsonl"), "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
    except OSError:  # an agent's own sandbox may keep it from its run folder: the check ran all the same
        print("(its result could not be kept in the run folder, so its lead does not see it)", file=err)


SEAT_CHECKS_KEPT = 20  # the last checks of a run its result carries


def seat_checks(run_dir: str) -> list:
    """The checks a worker ran through `git balanced seat` (its run folder's checks.jsonl), the last few: each
    `{"command", "exit_code", "seconds", "waited", "at"}` with the fields of the right kinds."""
    out = []
    fd = plain_fd(os.path.join(run_dir, "checks.jsonl"))
    if fd is None:
        return []
    try:
        with os.fdopen(fd, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()[-SEAT_CHECKS_KEPT:]
    except OSError:
        return []
    import json

    for line in lines:
        try:
            c = json.loads(line)
        except ValueError:
            continue
        if isinstance(c, dict) and isinstance(c.get("command"), str) and isinstance(c.get("exit_code"), int):
            out.append({"command": c["command"][:500], "exit_code": c["exit_code"],
                        "seconds": float(c.get("seconds") or 0), "waited": float(c.get("waited") or 0)})
    return out


def seat_main(args: list, budget_value: object = None) -> int:
    """`git balanced seat [--] CMD...` in a worker (or anywhere): CMD run in a seat, one word as a shell line, several
    as the words they are. The budget is `budget_value`, else the runner's (SEAT_ENV_BUDGET), else the cores."""
    import shlex
    import sys

    words = list(args[1:] if args and args[0] == "--" else args)
    command = (words[0] if len(words) == 1 else shlex.join(words)).strip()
    if not command:
        print('Name the check to run in a seat: git balanced seat "pytest -q tests/orders" (one or more words).',
              file=sys.stderr)
        return 2
    n = seat_budget(budget_value if budget_value not in (None, 0, "") else os.environ.get(SEAT_ENV_BUDGET))
    who = os.environ.get(SEAT_ENV_WHO) or f"a check in {os.getcwd()}"
    run_dir = os.environ.get("BALANCED_RUN_DIR")
    note = os.path.join(run_dir, SEAT_NOTE) if run_dir and os.path.isdir(run_dir) else None
    return seat_run(command, n, who, note)
