"""What the door for untrusted folders costs a git command (git_balanced/untrusted.py): `git status` in a worker
copy under `~/.balanced/`, run plain and through the door (`git.run_git`), in turn, N times each; medians of the
clock and their ratio. On a copy whose config names no driver the door reads that config in-process and adds
only arguments; on one that names a driver it lists the config with one more git process first.

    .venv/bin/python bench/door.py [--rounds N]

Goal: through the door, a command in a plain copy costs less than 1.3x the plain command.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

GOAL = 1.3


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=41)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ.update(HOME=home, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="A", GIT_AUTHOR_EMAIL="a@b",
                          GIT_COMMITTER_NAME="A", GIT_COMMITTER_EMAIL="a@b")
        from git_balanced import untrusted
        from git_balanced.git import run_git

        copies = {}
        for name in ("plain", "driver"):
            copy = Path(home) / ".balanced" / "copies" / name
            copy.mkdir(parents=True)
            subprocess.run(["git", "init", "-q", str(copy)], check=True)
            for i in range(50):
                (copy / f"f{i}.txt").write_text(f"{i}\n")
            subprocess.run(["git", "add", "-A"], cwd=copy, check=True)
            subprocess.run(["git", "commit", "-qm", "files"], cwd=copy, check=True)
            copies[name] = copy
        subprocess.run(["git", "config", "filter.lfs.clean", "cat"], cwd=copies["driver"], check=True)
        assert untrusted.folder_of_ours(str(copies["plain"]))
        env = dict(os.environ)
        runs: dict[str, Callable[[], object]] = {
            "plain git": lambda: subprocess.run(["git", "status", "--porcelain"], cwd=copies["plain"], env=env,
                                                capture_output=True, check=True),
            "door, plain copy": lambda: run_git(["status", "--porcelain"], cwd=copies["plain"]),
            "door, copy with a driver": lambda: run_git(["status", "--porcelain"], cwd=copies["driver"]),
        }
        times: dict[str, list[float]] = {k: [] for k in runs}
        for _ in range(args.rounds):  # in turn, so a busy moment falls on all of them
            for name, fn in runs.items():
                times[name].append(timed(fn))
    med = {k: statistics.median(v) for k, v in times.items()}
    floor = med["plain git"]
    for name, m in med.items():
        print(f"git status, {name:<26} median {m * 1000:5.1f} ms over {args.rounds} runs ({m / floor:.2f}x)")
    ratio = med["door, plain copy"] / floor
    print(f"{'PASS' if ratio < GOAL else 'MISS'} the door on a plain copy: {ratio:.2f}x a plain git command "
          f"(goal under {GOAL}x)")
    print(f"load {os.getloadavg()[0]:.2f}")
    return 0 if ratio < GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
