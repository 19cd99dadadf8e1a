"""What one Now over every project costs: `git balanced now --all --json` over N projects on this machine, each
with questions passed to the person, a review and a note under it, against the naive way (one
`git balanced board --json` process per project); and, in this process, the one Now's reading against the
projects' own boards read one after the other (`collect_shown`), to show what naming rows and their notes add.

    python bench/allnow.py [--projects 20] [--rounds 5]

In a throwaway folder (a private HOME) it makes the projects (`jobs.place`, `questions.ask`, `pass_on`,
`now.put`, `nownotes.add`) and registers them (`add_project`). Wall-clock medians of R rounds for the
processes, CPU-time medians for the in-process reads (each round with the process's memory forgotten, as a
fresh command starts); the load average is printed beside them.

Goals: one `now --all` process takes at most 40% of the naive loop's time; the one Now's reading adds at most
25% to the projects' boards read one after the other.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run from a checkout without installing
sys.path.insert(0, str(HERE))

from sandbox import private_env  # noqa: E402

PROCESS_GOAL = 0.40
READ_GOAL = 1.25
BALANCED = [sys.executable, "-c", "import sys; from git_balanced.front import main; sys.exit(main())"]


def build(root: Path, count: int) -> list[Path]:
    """`count` repositories, each with three questions passed to the person and a review with a note under it,
    registered as the chief's projects."""
    from git_balanced import jobs as J
    from git_balanced.channel import now, nownotes, questions
    from git_balanced.chief.projects import add_project
    from git_balanced.lead import open_lead

    made = []
    for i in range(count):
        repo = root / f"project-{i:02d}"
        repo.mkdir(parents=True)
        (repo / "README.md").write_text(f"project {i}\n")
        for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "init"]):
            subprocess.run(["git", *args], cwd=repo, check=True)
        lead = open_lead(str(repo))
        for piece in ("api", "ui", "docs"):
            jid = J.place(lead.repo, {"plan": "p1", "piece": piece, "task": "t", "lead": "main", "machine": "local",
                                      "agent": "shell", "attempt": 1})
            questions.pass_on(lead.repo, questions.ask(lead.repo, jid, f"npm test in {piece}", kind="command"),
                              "passed on by the lead")
        row = now.put(lead.repo, f"The work of project {i}", ships=None, check=None)
        nownotes.add(lead.repo, row["id"], "ship this one first")
        add_project(str(repo))
        made.append(repo)
    return made


def wall(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run([*BALANCED, *argv], cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def processes(projects: list[Path], rounds: int) -> tuple[float, float]:
    """Median seconds of one `now --all --json`, and of a `board --json` in each project, rounds in turn."""
    one, naive = [], []
    wall(["now", "--all", "--json"], projects[0].parent)  # the state caches on disk made once, before any round
    for _ in range(rounds):
        one.append(wall(["now", "--all", "--json"], projects[0].parent))
        naive.append(sum(wall(["board", "--json"], p) for p in projects))
    return statistics.median(one), statistics.median(naive)


def reads(projects: list[Path], rounds: int) -> tuple[float, float]:
    """Median CPU ms of `allnow.read_all()` and of each project's `collect_shown` one after the other."""
    from git_balanced import process
    from git_balanced.chief import allnow
    from git_balanced.engine.shown import collect_shown
    from git_balanced.lead import open_lead

    allnow.read_all()  # the state caches on disk made once, before any round is timed
    ours, boards = [], []
    for _ in range(rounds):
        process.forget()
        start = time.process_time()
        read = allnow.read_all()
        ours.append(time.process_time() - start)
        assert sum(len(r.now) for r in read) == 4 * len(projects), "every project's rows are read"
        process.forget()
        start = time.process_time()
        for p in projects:
            collect_shown(open_lead(str(p)))
        boards.append(time.process_time() - start)
    return statistics.median(ours) * 1000, statistics.median(boards) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--projects", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="balanced-bench-allnow-") as tmp:
        os.environ.update(private_env(Path(tmp)))
        os.environ["PYTHONPATH"] = str(HERE.parent)
        projects = build(Path(tmp) / "src", args.projects)
        print(f"one Now benchmark: {args.projects} projects of 4 rows each, medians of {args.rounds} rounds, load "
              f"{os.getloadavg()[0]:.2f}")
        one, naive = processes(projects, args.rounds)
        print(f"  now --all --json, one process      {one:6.2f} s")
        print(f"  board --json in each project        {naive:6.2f} s   ({one / naive:.2f}x)")
        ours, boards = reads(projects, args.rounds)
        print(f"  in process: allnow.read_all        {ours:6.0f} ms CPU")
        print(f"  in process: each project's board   {boards:6.0f} ms CPU   ({ours / boards:.2f}x)")
        print(f"  load average after: {os.getloadavg()[0]:.2f}")
    ok_one, ok_read = one / naive <= PROCESS_GOAL, ours / boards <= READ_GOAL
    print(f"{'PASS' if ok_one else 'MISS'}  one now --all against a board per project: {one / naive:.2f}x, "
          f"goal <= {PROCESS_GOAL}x")
    print(f"{'PASS' if ok_read else 'MISS'}  the one Now's reading against the boards': {ours / boards:.2f}x, "
          f"goal <= {READ_GOAL}x")
    return 0 if ok_one and ok_read else 1


if __name__ == "__main__":
    raise SystemExit(main())
