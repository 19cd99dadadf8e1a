"""The engine on a plan of trivial shell pieces: finish-to-landing latency, idle CPU, and wall time by hand.

    python bench/engine.py [--pieces N] [--rounds R] [--history JOBS] [--idle-seconds S] [--sleep S]
                           [--one-process] [--profile] [--keep]

In throwaway repositories (a private HOME and XDG folders in /tmp; the package byte-compiled first, as
`pip install .` leaves it, so no command compiles its modules again) whose check is a real one
(`python3 -m unittest`, a test reading every file the pieces write, about 0.1 s), it measures

  (a) finish to landing: for each piece, the time from its worker's end (`ended` in the runner's
      result.json, read while the run folder still exists) to the `landed` event on
      refs/balanced/jobs/<id>, less the check's seconds from the landing note; median and max;
  (b) idle CPU: `git balanced engine` in the background with nothing to do, utime+stime from
      /proc/<pid>/stat over S seconds (20) after it settled; CPU seconds per minute and percent;
  (c) wall time: `git balanced plan FILE --start` then `git balanced engine --until-idle` (with
      `--one-process`, the one command `plan FILE --start --until-idle` instead), against the
      same N commands by hand, one after another, in a twin repository: for each a worktree and
      branch, run the command, commit, `git merge --no-ff` into main, run the check (plain git and sh).
      git balanced's time is its commands' own, launch to exit, as you wait for them: not bench/counted.py's
      own start, nor the cleanup of the last workers the engine leaves to a process of its own when it
      exits (by hand removes each worktree in its loop; the cleanup's CPU is in (f)). Both are printed.

  (d) with `--history JOBS`: the same plan in a repository that already holds JOBS landed jobs
      (bench/history.py writes them), against a fresh one: the CPU per piece of `plan --start` and
      `engine --until-idle` and of the processes they waited for (git, the check), from getrusage.

Each of R rounds (3) runs every case once, in new repositories; the figures are the rounds' medians, and
each goal ends in one PASS or MISS line, with the load average: (c) by hand / git balanced >= 1.0 on trivial
pieces (1.5 is the aim), >= 1.5 from 200 pieces on, >= 3.5 with `--sleep`; (d) at most 1.2 times the fresh
CPU per piece; (e) the engine's fixed cost, storing the plan + its start (launch to the first `placed` event)
+ its last pass (the last `landed` event to its exit: the engine's own, not the end of the cleanup it hands to a
process of its own, whose CPU (f) counts), under 0.5 s, each part timed from when bench/counted.py launched the
command (its own Python start is the bench's, not the engine's); (f) its CPU per piece, every process
counted (bench/counted.py: the workers its runners let go of too), at most that of doing it by hand.
Both ways must end on the same tree of main. `--sleep S` makes each piece sleep first, to stand for work
that takes time (the trivial pieces measure the engine's own overhead). `--profile` runs the plan once
more with the engine under cProfile (every thread, by its CPU time: bench/profiled/sitecustomize.py) and
prints where its CPU goes; with `--history`, in a fresh lead and in one with history, and then the functions
whose own CPU a piece grew most with the history.
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import resource
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing

from bench.sandbox import private_env  # noqa: E402
from git_balanced import proc  # noqa: E402

CHECK = "python3 -m unittest discover -q -s tests"
TEST = '''\
import pathlib
import unittest


class Pieces(unittest.TestCase):
    def test_each_piece_names_itself(self):
        for path in pathlib.Path("pieces").glob("p*.txt"):
            self.assertEqual(path.read_text().strip(), "piece " + path.stem[1:])
'''
ME = [sys.executable, "-m", "git_balanced.front"]  # as the console script starts it (front.py)
CLK_TCK = os.sysconf("SC_CLK_TCK")
HISTORY = Path(__file__).resolve().parent / "history.py"
COUNTED = Path(__file__).resolve().parent / "counted.py"
PROFILED = Path(__file__).resolve().parent / "profiled"  # its sitecustomize.py profiles the engine (--profile)
GOAL_RATIO, AIM_RATIO, GOAL_SLEEP_RATIO, GOAL_HISTORY = 1.0, 1.5, 3.5, 1.2
GOAL_FIXED = 0.5  # seconds: storing the plan, the engine's start to its first placed piece, its last pass
MANY, GOAL_MANY = 200, 1.5  # at this many pieces and more, by hand / git balanced at least this


def compiled(env: dict[str, str]) -> dict[str, str]:
    """Byte-compile the package (once: later calls find it compiled), and `env` without PYTHONDONTWRITEBYTECODE,
    so each command reads the .pyc files rather than compiling every module it imports again."""
    import compileall

    compileall.compile_dir(str(Path(__file__).resolve().parent.parent / "git_balanced"), quiet=1)
    return {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}


def command_of(i: int, pause: float = 0.0) -> str:
    """Piece i's shell command: one file of its own, so no two pieces touch the same path."""
    write = f"echo 'piece {i:02d}' > pieces/p{i:02d}.txt"
    return f"sleep {pause:g} && {write}" if pause else write


class Box:
    """A private HOME, XDG folders and git identity; `git` and `git balanced` run inside them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.env = compiled(private_env(root))  # the package byte-compiled, as `pip install .` leaves it
        self.ended = 0.0  # when the last command run through `counted` itself ended
        self.began = 0.0  # and when `counted` launched it

    def git(self, cwd: Path, *args: str, input: str | None = None) -> str:
        res = proc.run(["git", *args], cwd=cwd, env=self.env, input=input)
        if res.code != 0:
            sys.exit(f"git {' '.join(args)} failed in {cwd}: {res.err.strip() or res.out.strip()}")
        return res.out.strip()

    def balanced(self, cwd: Path, *args: str) -> proc.Result:
        res = proc.run([*ME, *args], cwd=cwd, env=self.env)
        if res.code != 0:
            sys.exit(f"git balanced {' '.join(args)} failed (exit {res.code}) in {cwd}:\n{res.out}{res.err}")
        return res

    def counted(self, cwd: Path, argv: list[str]) -> float:
        """Run `argv` (bench/counted.py), failing on a non-zero exit; the CPU seconds of every process it started,
        the workers its runners let go of included. When the command itself ended is kept in `self.ended`, when
        counted.py launched it (after its own start) in `self.began`."""
        out = self.root / "counted.cpu"
        res = proc.run([sys.executable, str(COUNTED), str(out), "--", *argv], cwd=cwd, env=self.env)
        if res.code != 0:
            sys.exit(f"{' '.join(argv[2:])} failed (exit {res.code}) in {cwd}:\n{res.out}{res.err}")
        cpu, ended, began = out.read_text().split()
        self.ended, self.began = float(ended), float(began)
        return float(cpu)


def build(box: Box, where: Path) -> Path:
    """A lead on main: the check and the shell agent committed and allowed, a test, an empty pieces/."""
    box.git(box.root, "init", "-q", "-b", "main", str(where))
    (where / ".magnum").mkdir()
    (where / ".magnum" / "settings.toml").write_text(
        f'[worktree]\ncheck = "{CHECK}"\n\n[balanced]\nagent = "shell"\n')
    (where / "tests").mkdir()
    (where / "tests" / "test_pieces.py").write_text(TEST)
    (where / "pieces").mkdir()
    (where / "pieces" / ".keep").write_text("")
    box.git(where, "add", "-A")
    box.git(where, "commit", "-q", "-m", "A repository for the engine benchmark")
    box.balanced(where, "allow", "--yes")
    return where


def plan_text(n: int, pause: float) -> str:
    lines = ["task: Trivial shell pieces for the engine benchmark", "pieces:"]
    for i in range(1, n + 1):
        lines += [f"  - id: p{i:02d}", f"    task: Write pieces/p{i:02d}.txt.", "    agent: shell",
                  f"    run: {json.dumps(command_of(i, pause))}"]
    return "\n".join(lines) + "\n"


class Ends:
    """Reads each runner's result.json while its run folder exists (landing removes it): job -> `ended`."""

    def __init__(self, runs: Path) -> None:
        self.runs = runs
        self.ended: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> Ends:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._stop.wait(0.02):
            try:
                folders = list(os.scandir(self.runs))
            except FileNotFoundError:
                continue
            for d in folders:
                if d.name in self.ended:
                    continue
                try:
                    result = json.loads((Path(d.path) / "result.json").read_text())
                except (FileNotFoundError, NotADirectoryError, ValueError):
                    continue  # written by rename: absent until whole
                if result.get("ended"):
                    self.ended[d.name] = float(result["ended"])


def job_events(box: Box, repo: Path) -> dict[str, list[dict]]:
    """Every job's events (event.json of each commit on refs/balanced/jobs/<id>), oldest first."""
    names = box.git(repo, "for-each-ref", "--format=%(refname)", "refs/balanced/jobs/").split()
    shas: list[tuple[str, str]] = []
    for ref in names:
        for sha in reversed(box.git(repo, "rev-list", ref).split()):
            shas.append((ref.rsplit("/", 1)[1], sha))
    raw = box.git(repo, "cat-file", "--batch", input="".join(f"{sha}:event.json\n" for _, sha in shas))
    out: dict[str, list[dict]] = {job: [] for job, _ in shas}
    pos, lines = 0, raw.encode()
    for job, _ in shas:
        header_end = lines.index(b"\n", pos)
        size = int(lines[pos:header_end].split()[2])
        out[job].append(json.loads(lines[header_end + 1:header_end + 1 + size]))
        pos = header_end + 1 + size + 1
    return out


def note_of(box: Box, repo: Path, commit: str, job: str) -> dict:
    """The landing note on `commit` that names `job`."""
    for line in box.git(repo, "notes", "--ref=balanced", "show", commit).splitlines():
        data = json.loads(line)
        if data.get("job") == job:
            return data
    sys.exit(f"the landing note on {commit} names no job {job}")


def run_engine(box: Box, repo: Path, n: int, pause: float, profile: Path | None = None, one: bool = False) -> dict:
    """`plan --start`, then `engine --until-idle` (`one`: `plan --start --until-idle`, one process), timed; the
    per-job latencies from the refs and notes."""
    (box.root / "plan.yaml").write_text(plan_text(n, pause))
    old = set(box.git(repo, "for-each-ref", "--format=%(refname:lstrip=3)", "refs/balanced/jobs/").split())
    plan = ["plan", str(box.root / "plan.yaml"), "--start"]
    with Ends(box.home / ".balanced" / "runs") as ends:
        t0 = time.perf_counter()
        launched = time.time()
        cpu = 0.0 if one else box.counted(repo, [*ME, *plan])
        t1 = time.perf_counter()
        stored = 0.0 if one else box.ended - box.began  # (e): the command's own time, not counted.py's start
        if not one:
            launched = time.time()
        engine = [*plan, "--until-idle"] if one else ["engine", "--until-idle"]
        ran = 0.0
        if profile is None:
            cpu += box.counted(repo, [*ME, *engine])
            ran = box.ended - box.began
        else:  # every thread of the engine, by CPU time (bench/profiled/sitecustomize.py)
            folder = profile.with_suffix(".d")
            folder.mkdir(exist_ok=True)
            env = {**box.env, "BENCH_PROFILE": str(folder),
                   "PYTHONPATH": os.pathsep.join(filter(None, [str(PROFILED), box.env.get("PYTHONPATH", "")]))}
            res = proc.run([*ME, *engine], cwd=repo, env=env)
            if res.code != 0:
                sys.exit(f"the profiled engine failed:\n{res.err}")
            parts = sorted(str(p) for p in folder.glob("*.prof"))
            if not parts:
                sys.exit(f"the profiled engine wrote no profile in {folder}")
            pstats.Stats(*parts).dump_stats(str(profile))
        t2 = time.perf_counter()
        exited = time.time()
        if profile is None:  # (e): when the engine itself exited, not what it left running (its last cleanup),
            exited, launched = box.ended, box.began  # and when it was launched, after counted.py's own start
    first_placed = last_landed = None
    rows = []
    for job, events in job_events(box, repo).items():
        if job in old:
            continue
        by = {e["event"]: e for e in events}
        first_placed = min(first_placed or by["placed"]["time"], by["placed"]["time"])
        if "landed" not in by:
            sys.exit(f"job {job} did not land: {[e['event'] for e in events]}")
        if job not in ends.ended:
            sys.exit(f"job {job}'s result.json was never seen while its run folder existed")
        landed = by["landed"]
        last_landed = max(last_landed or landed["time"], landed["time"])
        note = note_of(box, repo, landed["data"]["landed"], job)
        check, end = float(note["seconds"]), ends.ended[job]
        rows.append({"job": job, "piece": by["placed"]["data"]["piece"], "check": check,
                     "seen": by["finished"]["time"] - end, "checked_tree": note.get("checked_tree", note["tree"]),
                     "to_landing": landed["time"] - end - check})
    if len(rows) != n:
        sys.exit(f"{len(rows)} jobs for {n} pieces")
    assert first_placed is not None and last_landed is not None
    # (c): the commands' own wall time, launch to exit, as you wait for them; `waited` adds counted.py's own
    # starts and its wait for what they left running (the cleanup of the last workers: its CPU is in (f)).
    wall = stored + ran if profile is None else t2 - t0
    return {"plan": t1 - t0, "stored": stored, "engine": t2 - t1, "wall": wall, "waited": t2 - t0, "rows": rows,
            "cpu": cpu, "one": one,
            "start": first_placed - launched, "last": exited - last_landed,
            "checks": len({r["checked_tree"] for r in rows}),
            "tree": box.git(repo, "rev-parse", "main^{tree}")}


def by_hand(box: Box, repo: Path, n: int, pause: float) -> dict:
    """The same commands one after another with plain git and sh: worktree, run, commit, merge, check."""
    c0 = children_cpu()
    t0 = time.perf_counter()
    for i in range(1, n + 1):
        branch, wt = f"hand/p{i:02d}", box.root / f"hand-wt-{i:02d}"
        box.git(repo, "worktree", "add", "-q", "-b", branch, str(wt), "main")
        if proc.shell(command_of(i, pause), cwd=wt, env=box.env).code != 0:
            sys.exit(f"piece {i}'s command failed by hand")
        box.git(wt, "add", "-A")
        box.git(wt, "commit", "-q", "-m", f"p{i:02d}: by hand")
        box.git(repo, "merge", "--no-ff", "-q", "-m", f"Land {branch}", branch)
        if proc.shell(CHECK, cwd=repo, env=box.env).code != 0:
            sys.exit(f"the check failed by hand after {branch}")
        box.git(repo, "worktree", "remove", str(wt))
    return {"wall": time.perf_counter() - t0, "cpu": children_cpu() - c0,
            "tree": box.git(repo, "rev-parse", "main^{tree}")}


def children_cpu() -> float:
    """User and system CPU seconds of the child processes waited for so far (and theirs)."""
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def with_history(box: Box, repo: Path, jobs: int) -> Path:
    """The lead repository with `jobs` landed jobs of history written into it."""
    res = proc.run([sys.executable, str(HISTORY), str(repo), str(jobs)], cwd=repo, env=box.env)
    if res.code != 0:
        sys.exit(f"writing {jobs} jobs of history failed:\n{res.out}{res.err}")
    return repo


def cpu_of(pid: int) -> tuple[float, float]:
    """(utime+stime, cutime+cstime) of a process in seconds, from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    # After the name: field 3 is fields[0], so utime (14) .. cstime (17) are fields[11:15].
    ut, st, cut, cst = (int(x) for x in fields[11:15])
    return (ut + st) / CLK_TCK, (cut + cst) / CLK_TCK


def idle_cpu(box: Box, repo: Path, seconds: float) -> dict:
    """The engine in the background with nothing to do: its CPU over `seconds` once it has settled."""
    import subprocess

    log = open(box.root / "idle-engine.log", "wb")  # noqa: SIM115 - closed below, after the engine ends
    engine = subprocess.Popen([*ME, "engine"], cwd=repo, env=box.env, stdin=subprocess.DEVNULL, stdout=log,
                              stderr=subprocess.STDOUT)
    try:
        pid_file = repo / ".git" / "balanced" / "engine.pid"
        deadline = time.monotonic() + 20
        while not pid_file.exists():
            if engine.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"the idle engine did not start: see {box.root / 'idle-engine.log'}")
            time.sleep(0.05)
        time.sleep(3.0)  # past its start and its first pass: what is left is what idling costs
        start_cpu, start_kids = cpu_of(engine.pid)
        t0 = time.monotonic()
        time.sleep(seconds)
        end_cpu, end_kids = cpu_of(engine.pid)
        elapsed = time.monotonic() - t0
    finally:
        stopped = proc.run([*ME, "engine", "--stop"], cwd=repo, env=box.env)
        try:
            engine.wait(15)
        except subprocess.TimeoutExpired:
            engine.kill()
            engine.wait()
        log.close()
    if stopped.code != 0:
        sys.exit(f"git balanced engine --stop failed: {stopped.err}")
    used = end_cpu - start_cpu
    return {"seconds": elapsed, "cpu": used, "children": end_kids - start_kids,
            "per_minute": used / elapsed * 60, "percent": used / elapsed * 100, "startup": start_cpu}


def show_profile(path: Path, top: int) -> None:
    print(f"\nWhere the engine's CPU goes, every thread (cProfile by thread CPU time), top {top} by cumulative "
          f"and by own time:")
    stats = pstats.Stats(str(path), stream=sys.stdout)
    stats.strip_dirs().sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)


def show_growth(fresh: Path, old: Path, n: int, top: int) -> None:
    """The functions whose CPU grew most with the history (the same plan profiled in a fresh lead and in one with
    history): own time and cumulative time a piece, fresh and with history."""
    a, b = (pstats.Stats(str(p)).stats for p in (fresh, old))  # type: ignore[attr-defined]
    zero = (0, 0, 0.0, 0.0, {})
    rows = sorted(set(a) | set(b), key=lambda k: -(b.get(k, zero)[2] - a.get(k, zero)[2]))[:top]
    print(f"\nWhat grew with the history, by own CPU time (ms a piece: own fresh, own with history, cumulative "
          f"fresh, cumulative with history; calls a piece with history); all: "
          f"{sum(v[2] for v in a.values()) / n * 1000:.0f} and {sum(v[2] for v in b.values()) / n * 1000:.0f} ms")
    for k in rows:
        fa, fb = a.get(k, zero), b.get(k, zero)
        where = f"{Path(k[0]).name}:{k[1]}({k[2]})"
        print(f"  {fa[2] / n * 1000:7.2f} {fb[2] / n * 1000:7.2f}   {fa[3] / n * 1000:7.1f} {fb[3] / n * 1000:7.1f}"
              f"   {fb[1] / n:7.1f}  {where[:70]}")


def main(argv: list[str] | None = None) -> int:
    """Run the measures round after round, print the tables and one PASS or MISS line per goal."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pieces", type=int, default=20, help="pieces in the plan (default 20)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds, each in new repositories (default 3)")
    ap.add_argument("--history", type=int, default=0, metavar="JOBS",
                    help="also run the plan in a repository holding JOBS landed jobs (default: not)")
    ap.add_argument("--idle-seconds", type=float, default=20.0,
                    help="how long to sample the idle engine, in the first round (0: not at all)")
    ap.add_argument("--sleep", type=float, default=0.0,
                    help="seconds each piece sleeps before writing its file, to stand for real work (0)")
    ap.add_argument("--one-process", action="store_true",
                    help="run the plan with `plan FILE --start --until-idle`, one process, not two")
    ap.add_argument("--profile", action="store_true", help="run once more with the engine under cProfile")
    ap.add_argument("--keep", action="store_true", help="keep the repositories and print where they are")
    args = ap.parse_args(argv)
    n = args.pieces
    tmp = Path(tempfile.mkdtemp(prefix="balanced-bench-engine-"))
    try:
        what = f"{n} shell pieces" + (f" that sleep {args.sleep:g}s" if args.sleep else "")
        print(f"git balanced engine benchmark: {what}, check `{CHECK}`, {args.rounds} round(s)"
              + (f", and in a repository with {args.history} jobs of history" if args.history else ""))
        print(f"python {sys.version.split()[0]}, {proc.run(['git', '--version']).out.strip()}, "
              f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}, in {tmp}", flush=True)
        rounds: list[dict] = []
        idle: dict | None = None
        template = None
        if args.history:  # written once, copied for each round
            template = Box(tmp / "history-template")
            with_history(template, build(template, template.root / "lead"), args.history)
        for r in range(1, args.rounds + 1):
            one = round_of(tmp / f"round{r}", n, args.sleep, template, args.one_process)
            if idle is None and args.idle_seconds > 0:
                box = Box(tmp / f"round{r}" / "engine")
                idle = idle_cpu(box, box.root / "lead", args.idle_seconds)
            rounds.append(one)
            hist = f", with history {one['history']['cpu'] / n * 1000:.0f} ms" if "history" in one else ""
            print(f"  round {r}: engine {one['engine']['wall']:.2f}s, by hand {one['hand']['wall']:.2f}s, "
                  f"ratio {one['hand']['wall'] / one['engine']['wall']:.2f}x; CPU per piece "
                  f"{one['engine']['cpu'] / n * 1000:.0f} ms (by hand {one['hand']['cpu'] / n * 1000:.0f} ms)"
                  f"{hist}; load {os.getloadavg()[0]:.2f}", flush=True)
            if not args.keep:
                shutil.rmtree(tmp / f"round{r}", ignore_errors=True)
        report(rounds[len(rounds) // 2] if len(rounds) % 2 else rounds[0], idle, n)
        ok = verdicts(rounds, n, args.sleep)
        if args.profile:
            leads = [("fresh", 0), ("history", args.history)] if args.history else [("engine", 0)]
            profiles = {}
            for name, jobs in leads:  # with history: a fresh lead too, to see what grew
                pbox = Box(tmp / f"profile-{name}")
                profiles[name] = tmp / f"{name}.prof"
                repo = build(pbox, pbox.root / "lead")
                run_engine(pbox, with_history(pbox, repo, jobs) if jobs else repo, n, args.sleep,
                           profile=profiles[name], one=args.one_process)
            show_profile(profiles[leads[-1][0]], 30)
            if args.history:
                show_growth(profiles["fresh"], profiles["history"], n, 25)
        return 0 if ok else 1
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def round_of(where: Path, n: int, pause: float, history: Box | None, one: bool = False) -> dict:
    """One round: the engine in a fresh repository, the same by hand, and in a copy of `history` when given."""
    box = Box(where / "engine")
    eng = run_engine(box, build(box, box.root / "lead"), n, pause, one=one)
    hand_box = Box(where / "hand")
    hand = by_hand(hand_box, build(hand_box, hand_box.root / "lead"), n, pause)
    assert eng["tree"] == hand["tree"], "the engine and the hand ended main on different trees"
    out = {"engine": eng, "hand": hand}
    if history is not None:
        shutil.copytree(history.root, where / "history", symlinks=True)
        hbox = Box(where / "history")
        hbox.balanced(hbox.root / "lead", "allow", "--yes")  # approvals name the repository's folder
        out["history"] = run_engine(hbox, hbox.root / "lead", n, pause, one=one)
        assert out["history"]["tree"] == eng["tree"], "with history, main ended on another tree"
    return out


def verdicts(rounds: list[dict], n: int, pause: float) -> bool:
    """The medians of the rounds against the goals: one PASS or MISS line each; True when all passed."""
    med = statistics.median
    load = f"load {os.getloadavg()[0]:.2f}"
    ratio = med(r["hand"]["wall"] / r["engine"]["wall"] for r in rounds)
    goal = GOAL_SLEEP_RATIO if pause else GOAL_MANY if n >= MANY else GOAL_RATIO
    lines = [(ratio >= goal, f"(c) by hand / git balanced, {n} pieces{' that sleep' if pause else ''}: "
                             f"{ratio:.2f}x, median of {len(rounds)} (goal >= {goal:g}x"
                             + ("" if pause or n >= MANY else
                                f", aim {AIM_RATIO:g}x: {'' if ratio >= AIM_RATIO else 'not '}reached")
                             + f"); {load}")]
    fixed = med(r["engine"]["stored"] + r["engine"]["start"] + r["engine"]["last"] for r in rounds)
    parts = ", ".join(f"{what} {med(r['engine'][key] for r in rounds):.2f} s" for what, key in (
        ("storing the plan", "stored"), ("start to first placed", "start"), ("last landing to exit", "last")))
    lines.append((fixed < GOAL_FIXED, f"(e) the engine's fixed cost: {fixed:.2f} s ({parts}), median of "
                                      f"{len(rounds)} (goal < {GOAL_FIXED:g} s); {load}"))
    mine, hand = med(r["engine"]["cpu"] for r in rounds) / n, med(r["hand"]["cpu"] for r in rounds) / n
    lines.append((mine <= hand, f"(f) CPU per piece, every process counted: {mine * 1000:.0f} ms, by hand "
                                f"{hand * 1000:.0f} ms, medians of {len(rounds)} (goal: at most by hand's); {load}"))
    if all("history" in r for r in rounds):
        fresh = med(r["engine"]["cpu"] for r in rounds) / n
        old = med(r["history"]["cpu"] for r in rounds) / n
        lines.append((old <= GOAL_HISTORY * fresh,
                      f"(d) CPU per piece with history / fresh: {old * 1000:.0f} ms / {fresh * 1000:.0f} ms = "
                      f"{old / fresh:.2f}x, medians of {len(rounds)} (goal <= {GOAL_HISTORY:g}x)"))
    print()
    for ok, words in lines:
        print(f"{'PASS' if ok else 'MISS'}  {words}")
    return all(ok for ok, _ in lines)


def report(one: dict, idle: dict | None, n: int) -> None:
    """The median round's table (the first when the rounds are even)."""
    eng, hand = one["engine"], one["hand"]
    rows = eng["rows"]
    lat = [r["to_landing"] for r in rows]
    seen = [r["seen"] for r in rows]
    check = [r["check"] for r in rows]
    print()
    print(f"{'measure':<44} {'median':>8} {'max':>8}")
    print(f"{'(a) finish to landing, less the check':<44} {statistics.median(lat):>7.2f}s {max(lat):>7.2f}s")
    print(f"{'    of which finish to `finished` event':<44} {statistics.median(seen):>7.2f}s "
          f"{max(seen):>7.2f}s")
    print(f"{'    the check (subtracted)':<44} {statistics.median(check):>7.2f}s {max(check):>7.2f}s")
    print()
    if idle is not None:
        both = idle["cpu"] + idle["children"]
        print(f"(b) idle engine over {idle['seconds']:.1f}s: {idle['cpu']:.2f} CPU s "
          f"({idle['per_minute']:.3f} CPU s per minute, {idle['percent']:.2f}%); with the git it ran, "
              f"{both:.2f} CPU s ({both / idle['seconds'] * 60:.3f} per minute, "
              f"{both / idle['seconds'] * 100:.2f}%); its start took {idle['startup']:.2f} CPU s")
        print()
    print(f"{'(c) wall time, ' + str(n) + ' pieces':<44} {'seconds':>8}")
    if eng["one"]:
        print(f"{'    git balanced plan --start --until-idle':<44} {eng['engine']:>7.2f}s")
    else:
        print(f"{'    git balanced plan --start':<44} {eng['plan']:>7.2f}s")
        print(f"{'    git balanced engine --until-idle':<44} {eng['engine']:>7.2f}s")
    print(f"{'      of which its start to the first placed':<44} {eng['start']:>7.2f}s")
    print(f"{'      and its last landing to its exit':<44} {eng['last']:>7.2f}s")
    print(f"{'    the two together, launch to exit':<44} {eng['wall']:>7.2f}s")
    print(f"{'      (as the bench waited: its own starts, then':<44}")
    print(f"{'      the cleanup they left running)':<44} {eng['waited']:>7.2f}s")
    print(f"{'    by hand, one after another':<44} {hand['wall']:>7.2f}s")
    print(f"{'    ratio, by hand / git balanced':<44} {hand['wall'] / eng['wall']:>7.2f}x")
    print(f"{'    CPU of plan and engine, per piece':<44} {eng['cpu'] / n * 1000:>6.0f}ms")
    print(f"{'      (every process: workers let go counted)':<44}")
    print(f"{'    CPU by hand, per piece':<44} {hand['cpu'] / n * 1000:>6.0f}ms")
    if "history" in one:
        old = one["history"]
        print(f"{'(d) with history: the two together':<44} {old['wall']:>7.2f}s")
        print(f"{'    CPU of plan and engine, per piece':<44} {old['cpu'] / n * 1000:>6.0f}ms")
    print(f"\n(the engine's landings were checked on {eng['checks']} trees for {n} pieces; both ways ended "
          f"on tree {eng['tree'][:12]})")



if __name__ == "__main__":
    sys.exit(main())
