"""Run every benchmark, one after another, and print every PASS and MISS line each printed, whatever the ones
before it did; then the table of the figures now, which it also writes at the top of docs/performance.md.

    python bench/all.py              # every benchmark (what `make bench` runs)
    python bench/all.py door board   # only these, their rows of the table replaced, the others kept
    python bench/all.py --no-write   # leave docs/performance.md as it is

Exit 0 when every goal passed, 1 when one was missed or a benchmark failed to run (its last lines are shown).
The load average is read before and after each benchmark and printed beside its lines: this machine is shared,
and a ratio taken under load is worth less.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from git_balanced.files import write_atomic  # noqa: E402

DOC = ROOT / "docs" / "performance.md"
START, END = "<!-- figures now: written by `make bench` (bench/all.py) -->", "<!-- end of the figures now -->"

# In the order `make bench` runs them: quick and independent first, the long fault suite last.
BENCHES = ["state", "landing", "engine", "maintenance", "ssh_connect", "dispatch", "board", "startup", "listing",
           "door", "fence", "scale", "faults", "handles", "readonly_checkout", "allnow", "readers", "chiefnews",
           "landing_machines", "prs", "typed_jobs"]
VERDICT = re.compile(r"^\s*(PASS|MISS)\b[\s:]*(.*)$")


@dataclass
class Ran:
    name: str
    code: int
    seconds: float
    load: tuple[float, float]
    lines: list[tuple[str, str]] = field(default_factory=list)  # (PASS or MISS, the words after it)
    tail: list[str] = field(default_factory=list)  # the last lines, shown when it failed to run

    @property
    def failed_to_run(self) -> bool:
        """It exited with an error and printed no verdict: a crash, not a missed goal."""
        return self.code != 0 and not any(v == "MISS" for v, _ in self.lines)


def load() -> float:
    return os.getloadavg()[0]


def run_one(name: str, python: str) -> Ran:
    """Run bench/NAME.py, its output passed through as it comes, and keep its verdict lines."""
    before, started = load(), time.monotonic()
    print(f"\n=== bench/{name}.py (load {before:.2f}) ===", flush=True)
    proc = subprocess.Popen([python, str(ROOT / "bench" / f"{name}.py")], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors="replace")
    ran = Ran(name, 0, 0.0, (before, before))
    assert proc.stdout is not None
    for line in proc.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        ran.tail = (ran.tail + [line.rstrip("\n")])[-15:]
        m = VERDICT.match(line)
        if m:
            ran.lines.append((m.group(1), m.group(2).strip()))
    ran.code = proc.wait()
    ran.seconds = time.monotonic() - started
    ran.load = (before, load())
    return ran


def summary(runs: list[Ran]) -> list[str]:
    """Every verdict line, each with its benchmark and the load beside it, and a line for each that crashed."""
    out = []
    for r in runs:
        where = f"bench/{r.name}.py, load {r.load[0]:.2f} to {r.load[1]:.2f}, {r.seconds:.0f} s"
        for verdict, words in r.lines:
            out.append(f"{verdict}  {words}  ({where})")
        if r.failed_to_run:
            out.append(f"FAIL  bench/{r.name}.py exited {r.code} before it judged its goals ({where}); its last "
                       "lines are above")
        elif not r.lines:
            out.append(f"----  bench/{r.name}.py prints figures, no goals ({where})")
    return out


def table(runs: list[Ran], when: datetime, kept: list[str] | None = None) -> str:
    """The Markdown table at the top of docs/performance.md: one row a goal, with the command to run again and
    when and at which commit it was measured. KEPT: the rows of an earlier table, those of the benchmarks run now
    left out (a partial run replaces only its own benchmarks' rows)."""
    stamp = f"{when:%d %b %H:%M} UTC, {commit()}"
    fresh: dict[str, list[str]] = {}
    for r in runs:
        cmd = f"`python bench/{r.name}.py`"
        load_words = f"{r.load[0]:.2f} to {r.load[1]:.2f}"
        rows = fresh.setdefault(r.name, [])
        for verdict, words in r.lines:
            rows.append(f"| {cmd} | {verdict} | {words.replace('|', '/')} | {load_words} | {stamp} |")
        if r.failed_to_run:
            rows.append(f"| {cmd} | FAIL | exited {r.code} before it judged its goals | {load_words} | {stamp} |")
        elif not r.lines:
            rows.append(f"| {cmd} | (figures only) | see its section below | {load_words} | {stamp} |")
    by_name: dict[str, list[str]] = {}
    for row in kept or []:
        m = re.match(r"\| `python bench/(\w+)\.py` \|", row)
        if m and m.group(1) not in fresh:
            by_name.setdefault(m.group(1), []).append(row)
    by_name.update(fresh)
    order = [n for n in BENCHES if n in by_name] + [n for n in by_name if n not in BENCHES]
    rows = ["| benchmark | result | goal and figure | load (1 min) | measured |", "|---|---|---|---|---|"]
    for name in order:
        rows.extend(by_name[name])
    cores = os.cpu_count()
    head = (f"Written by `make bench` (every benchmark) or `python bench/all.py NAME...` (that benchmark's rows) on "
            f"this machine ({cores} cores, shared), git {git_version()}, Python {sys.version.split()[0]}. Each line "
            "is the benchmark's own PASS or MISS line, with when and at which commit it ran; its section below says "
            "what it measures and how.")
    return "\n".join([START, "", head, "", *rows, "", END])


def kept_rows(doc: Path | None = None) -> list[str]:
    """The rows of the table on the page now (none when it has none)."""
    page = (doc or DOC).read_text(encoding="utf-8")
    if START not in page or END not in page:
        return []
    inside = page.split(START, 1)[1].split(END, 1)[0]
    return [line for line in inside.splitlines() if line.startswith("| `python bench/")]


def commit() -> str:
    res = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no", "--", ".",
                            f":!{DOC.relative_to(ROOT).as_posix()}"],  # the table it writes is not a change measured
                           capture_output=True, text=True)
    word = res.stdout.strip() if res.returncode == 0 else "?"
    return word + ("+" if dirty.returncode == 0 and dirty.stdout.strip() else "")


def git_version() -> str:
    res = subprocess.run(["git", "--version"], capture_output=True, text=True)
    return res.stdout.split()[-1] if res.returncode == 0 else "?"


def write_doc(text: str, doc: Path | None = None) -> None:
    """Put the table between its markers at the top of the page (after the title and first paragraph the
    first time), keeping the rest of the page as it is."""
    doc = doc or DOC
    page = doc.read_text(encoding="utf-8")
    if START in page and END in page:
        before, rest = page.split(START, 1)
        after = rest.split(END, 1)[1]
        page = before + text + after
    else:
        first = page.find("\n## ")
        cut = first + 1 if first >= 0 else len(page)
        page = page[:cut] + "## The figures now\n\n" + text + "\n\n" + page[cut:]
    write_atomic(doc, page)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", metavar="NAME", help=f"benchmarks to run (default all: {' '.join(BENCHES)})")
    ap.add_argument("--no-write", action="store_true", help="do not write the table into docs/performance.md")
    args = ap.parse_args(argv)
    unknown = [n for n in args.names if n not in BENCHES]
    if unknown:
        print(f"bench/all.py: no benchmark named {', '.join(unknown)}; the names are: {' '.join(BENCHES)}",
              file=sys.stderr)
        return 1
    names = args.names or BENCHES
    runs = [run_one(name, sys.executable) for name in names]
    lines = summary(runs)
    print("\n=== every goal ===")
    print("\n".join(lines))
    if not args.no_write:
        write_doc(table(runs, datetime.now(UTC), kept_rows() if args.names else None))
        print(f"\nwrote the table of the figures now into {DOC}" + (" (the rows of these benchmarks)" if args.names
                                                                      else ""))
    bad = sum(1 for line in lines if line.startswith(("MISS", "FAIL")))
    print(f"\n{sum(1 for line in lines if line.startswith('PASS'))} passed, {bad} missed or failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
