"""What making files costs a run, by command: `perf record -g` of `engine --until-idle` on a plan of trivial pieces
(stored first with `plan FILE --start`, each process counted through bench/counted.py) and of the same pieces by
hand, each in a new lead as bench/engine.py makes it, and for each the share of the CPU samples spent in ext4's
allocation of a new inode (`__ext4_new_inode` and what it calls: on a file system without a journal it steps over
every inode deleted in the last minute or more, reading each one's table block from the cache), beside the CPU
seconds of every process. No goal: it says how much of the engine's CPU per piece (bench/engine.py's (f)) is
files and folders made. With `--count`, no perf: the files and folders the engine's run makes and removes,
every process of it counted (`strace -f`: mkdir, an open with O_CREAT and O_EXCL or O_TRUNC, unlink and rmdir that
succeeded; a file opened to append to, such as a reflog's first line, is not counted as made, nor a write to
/proc), a piece. `--code
PATH` runs the package at PATH (a checkout to compare with). Linux with `perf` (or `strace` for `--count`) only.

    python bench/inodecost.py [--pieces N] [--count] [--code PATH]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import engine as bench  # noqa: E402  (bench/engine.py: its sandbox, lead, plan and the hand's way)

ALLOC = "__ext4_new_inode"
HAND = """
import sys
sys.path.insert(0, {bench!r})
from pathlib import Path
import engine as bench
box = bench.Box(Path({root!r}))
bench.by_hand(box, Path({repo!r}), {pieces}, 0.0)
"""


def shares(data: Path) -> tuple[dict[str, float], dict[str, float]]:
    """Each command's share of all samples, and the share of all samples under ALLOC in it (percent)."""
    def report(*args: str) -> str:
        return subprocess.run(["perf", "report", "-i", str(data), "--stdio", "-g", "none", *args],
                              capture_output=True, text=True, check=True).stdout

    total: dict[str, float] = {}
    for line in report("--no-children", "--sort", "comm").splitlines():
        m = re.match(r"\s+([\d.]+)%\s+(\S+)\s*$", line)
        if m:
            total[m[2]] = float(m[1])
    alloc: dict[str, float] = {}
    for line in report("--children", "--sort", "comm,sym").splitlines():
        m = re.match(r"\s+([\d.]+)%\s+[\d.]+%\s+(\S+)\s+\[k\] (\S+)\s*$", line)
        if m and m[3] == ALLOC:
            alloc[m[2]] = float(m[1])
    return total, alloc


def recorded(data: Path, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
    res = subprocess.run(["perf", "record", "-q", "-g", "-F", "1999", "-o", str(data), "--", *argv], cwd=cwd,
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if res.returncode != 0:
        sys.exit(f"perf record of {argv[:4]} failed:\n{res.stderr[-2000:]}")


MADE = re.compile(r'^\d+ +(?:mkdir(?:at)?\(|openat\((?!AT_FDCWD, "/proc/).*O_CREAT.*(?:O_EXCL|O_TRUNC))')
REMOVED = re.compile(r"^\d+ +(?:unlink(?:at)?|rmdir)\(")


def counted_files(trace: Path, argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, int]:
    """The files and folders the run of `argv` made and removed, every process of it counted (strace -f)."""
    res = subprocess.run(["strace", "-f", "-qq", "-o", str(trace), "--status=successful",
                          "-e", "trace=openat,mkdir,mkdirat,unlink,unlinkat,rmdir", "--", *argv],
                         cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if res.returncode != 0:
        sys.exit(f"strace of {argv[:4]} failed:\n{res.stderr[-2000:]}")
    lines = trace.read_text(errors="replace").splitlines()
    return sum(1 for line in lines if MADE.match(line)), sum(1 for line in lines if REMOVED.match(line))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pieces", type=int, default=20, help="pieces in the plan (default 20)")
    ap.add_argument("--count", action="store_true", help="count the files made and removed (strace), no perf")
    ap.add_argument("--code", type=Path, help="a checkout of the package to run instead of this one")
    args = ap.parse_args(argv)
    if not shutil.which("strace" if args.count else "perf"):
        sys.exit(f"{'strace' if args.count else 'perf'} is not installed here")
    if args.code:
        os.environ["PYTHONPATH"] = str(args.code.resolve())
    root = Path(tempfile.mkdtemp(prefix="balanced-bench-inodes-"))
    try:
        box = bench.Box(root)
        out = root / "counted.cpu"
        lead = bench.build(box, root / "lead")
        (root / "plan.yaml").write_text(bench.plan_text(args.pieces, 0.0))
        if box.balanced(lead, "plan", str(root / "plan.yaml"), "--start").code != 0:
            sys.exit("plan --start failed")
        if args.count:
            made, removed = counted_files(root / "trace", [sys.executable, str(bench.COUNTED), str(out), "--",
                                                           *bench.ME, "engine", "--until-idle"], lead, box.env)
            print(f"engine --until-idle, {args.pieces} trivial pieces: {made / args.pieces:.1f} files and folders "
                  f"made a piece, {removed / args.pieces:.1f} removed (every process; {made} and {removed} in all)")
            return 0
        recorded(root / "engine.data", [sys.executable, str(bench.COUNTED), str(out), "--", *bench.ME, "engine",
                                        "--until-idle"], lead, box.env)
        engine_cpu = float(out.read_text().split()[0])
        twin = bench.build(box, root / "twin")
        script = HAND.format(bench=str(Path(__file__).resolve().parent), root=str(root), repo=str(twin),
                             pieces=args.pieces)
        recorded(root / "hand.data", [sys.executable, str(bench.COUNTED), str(out), "--", sys.executable, "-c",
                                      script], twin, box.env)
        hand_cpu = float(out.read_text().split()[0])
        print(f"making new inodes, {args.pieces} trivial pieces; load {os.getloadavg()[0]:.2f}")
        for name, data, cpu in (("engine --until-idle", root / "engine.data", engine_cpu),
                                ("by hand", root / "hand.data", hand_cpu)):
            total, alloc = shares(data)
            spent = sum(alloc.values())
            print(f"  {name}: {cpu / args.pieces * 1000:.0f} ms of CPU a piece, {spent:.1f} % of it (of the samples) "
                  f"in {ALLOC}, about {cpu * spent / 100 / args.pieces * 1000:.0f} ms a piece")
            for comm, share in sorted(total.items(), key=lambda kv: -kv[1])[:5]:
                print(f"    {comm:<10} {share:5.1f} % of the samples, {alloc.get(comm, 0.0):5.1f} % in {ALLOC}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
