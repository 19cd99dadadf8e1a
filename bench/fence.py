"""What the fence costs a command: `sh -c true` started plain, and started with a folder read-only (fence.py), each
N times in turn; medians of the clock and the ratio. A check or a worker's runner is started once per run, so this
is what each check and each local runner session pays.

    .venv/bin/python bench/fence.py [--rounds N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from git_balanced import fence  # noqa: E402


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True)
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=41)
    args = ap.parse_args()
    if not fence.available():
        print("the fence is not available on this machine (no unshare, or namespaces not allowed)")
        return 1
    with tempfile.TemporaryDirectory() as lead:
        plain = ["sh", "-c", "true"]
        fenced = fence.prefix_for([Path(lead)], plain)
        assert fenced is not None
        times: dict[str, list[float]] = {"plain": [], "fenced": []}
        for _ in range(args.rounds):  # in turn, so a busy moment falls on both
            times["plain"].append(timed(plain))
            times["fenced"].append(timed(fenced))
    p, f = statistics.median(times["plain"]), statistics.median(times["fenced"])
    print(f"sh -c true, plain:  median {p * 1000:.1f} ms over {args.rounds} runs")
    print(f"sh -c true, fenced: median {f * 1000:.1f} ms over {args.rounds} runs")
    print(f"the fence adds {(f - p) * 1000:.1f} ms a command ({f / p:.1f}x of a bare start)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
