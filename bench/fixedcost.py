"""The engine's fixed cost, part by part, in CPU seconds as well as wall time (what a loaded machine stretches
far less): storing the plan (`plan FILE --start`, its rusage), the engine's start (launch to its first `placed`
event) and its last pass (the last `landed` event to its exit), each from the engine's CPU read from
/proc/PID/stat every 5 ms (its threads, and the processes it waited for). With `--before PATH` (a checkout of
the package to compare with, such as a worktree of main), rounds alternate the two codes, in the same minutes.

    python bench/fixedcost.py --pieces 20 --rounds 6 --before ../main
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import engine as bench  # noqa: E402  (bench/engine.py: its sandbox, lead and plan)

TICKS = os.sysconf("SC_CLK_TCK")
PARTS = ("plan", "start", "last")


def cpu_of(pid: int) -> float:
    """The CPU seconds of process `pid` (every thread) and of the children it waited for."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / TICKS  # utime stime cutime cstime


def one_run(root: Path, code: Path, pieces: int) -> dict[str, float]:
    """Store and run a plan of `pieces` trivial pieces in a new lead with the package at `code`: each part's wall
    and CPU seconds."""
    os.environ["PYTHONPATH"] = str(code)
    box = bench.Box(root)
    repo = bench.build(box, root / "lead")
    (root / "plan.yaml").write_text(bench.plan_text(pieces, 0.0))
    t0 = time.time()
    p = subprocess.Popen([*bench.ME, "plan", str(root / "plan.yaml"), "--start"], cwd=repo, env=box.env,
                         stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    if status:
        sys.exit(f"plan --start failed with {code}")
    row = {"plan": time.time() - t0, "plan_cpu": usage.ru_utime + usage.ru_stime}
    launched = time.time()
    p = subprocess.Popen([*bench.ME, "engine", "--until-idle"], cwd=repo, env=box.env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    samples: list[tuple[float, float]] = []
    while p.poll() is None:
        try:
            samples.append((time.time(), cpu_of(p.pid)))
        except (OSError, IndexError, ValueError):  # ended meanwhile
            pass
        time.sleep(0.005)
    exited = time.time()
    if p.returncode != 0 or not samples:
        sys.exit(f"engine --until-idle failed (exit {p.returncode}) with {code}")
    events = [e for evs in bench.job_events(box, repo).values() for e in evs]
    placed = min(e["time"] for e in events if e["event"] == "placed")
    landed = max(e["time"] for e in events if e["event"] == "landed")

    def at(t: float) -> float:
        return max((c for s, c in samples if s <= t), default=0.0)

    row.update(start=placed - launched, start_cpu=at(placed), last=exited - landed,
               last_cpu=samples[-1][1] - at(landed))
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pieces", type=int, default=20, help="pieces in the plan (default 20)")
    ap.add_argument("--rounds", type=int, default=6, help="rounds (default 6)")
    ap.add_argument("--before", type=Path, help="a checkout of the package to compare with, alternating")
    args = ap.parse_args(argv)
    codes = {"this": Path(__file__).resolve().parent.parent}
    if args.before:
        codes = {"before": args.before.resolve(), "after": codes["this"]}
    tmp = Path(tempfile.mkdtemp(prefix="balanced-bench-fixedcost-"))
    print(f"the engine's fixed cost by part: {args.pieces} pieces, {args.rounds} rounds, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.2f}", flush=True)
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in codes}
    try:
        for r in range(args.rounds):
            order = list(codes.items()) if r % 2 == 0 else list(reversed(codes.items()))
            for name, code in order:
                row = one_run(tmp / f"{name}{r}", code, args.pieces)
                rows[name].append(row)
                shutil.rmtree(tmp / f"{name}{r}", ignore_errors=True)
                print(f"  round {r + 1} {name}: " + ", ".join(
                    f"{part} {row[part]:.2f} s ({row[part + '_cpu']:.2f} CPU s)" for part in PARTS)
                    + f"; load {os.getloadavg()[0]:.2f}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for name, got in rows.items():
        med = {k: statistics.median(r[k] for r in got) for k in got[0]}
        wall = statistics.median(sum(r[p] for p in PARTS) for r in got)
        cpu = statistics.median(sum(r[p + "_cpu"] for p in PARTS) for r in got)
        print(f"{name}, medians: " + ", ".join(f"{p} {med[p]:.2f} s ({med[p + '_cpu']:.2f} CPU s)" for p in PARTS)
              + f"; fixed cost {wall:.2f} s ({cpu:.2f} CPU s); load {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
