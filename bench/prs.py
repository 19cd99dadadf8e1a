"""Watching pull requests: what one look at N unchanged open pull requests costs, with conditional requests
(ETags, as the engine asks) against asking afresh each time.

    python bench/prs.py [--prs 10] [--runs 15]

A throwaway lead opens N pull requests (one lead's branch each) on the tests' scripted forge (tests/support/
forge.py, on 127.0.0.1: GitHub's REST shapes over a real bare repository). Then it looks at all of them RUNS
times, nothing changing on the forge: once with the ETags kept (the engine's way) and once without. Prints
the answers that would count against GitHub's rate limit (a 304 does not) and the median CPU time of a look
(this process's: the forge's server runs in a thread of it, so its work counts too), and their ratio.
Goals: an unchanged pull request costs no counted request; a conditional look costs no more CPU than a fresh
one (ratio < 1.2).

With `--merged M`, M more pull requests are opened and merged first, and it also prints what the engine's pass
reads of them all (`prs.of_lead(open_only=True)` for each lead, as `watch.engine_tick` does) against reading
every pull request's chain whole (what it did before). Goal: the pass costs no more than reading the open ones'
chains whole (ratio < 1.0 against that), whatever M.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from bench.sandbox import private_env  # noqa: E402
from git_balanced.forge import prs, watch  # noqa: E402
from git_balanced.forge.github import GitHub  # noqa: E402
from git_balanced.lead import Lead, open_lead, settings_at  # noqa: E402
from tests.support import forge as scripted  # noqa: E402


def cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def setup(root: Path, count: int) -> tuple[scripted.Forge, list[Lead]]:
    env = private_env(root)
    os.environ.clear()
    os.environ.update(env)
    repo, bare = root / "repo", root / "remote.git"
    git(root, "init", "-q", "--bare", str(bare))
    git(root, "init", "-q", "-b", "main", str(repo))
    (repo / ".magnum").mkdir()
    (repo / ".magnum/settings.toml").write_text('[pr]\nrepository = "ada/widgets"\nfix = true\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "initial")
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "push", "-q", "origin", "main")
    forge, _ = scripted.start(bare, "ada/widgets")
    os.environ.update(GITHUB_API_URL=forge.url, GH_TOKEN=scripted.TOKEN)
    from git_balanced.commands.prs import ship_pr_command

    leads = []
    for n in range(count):
        git(repo, "switch", "-q", "-c", f"lead-{n}", "main")
        (repo / f"f{n}.txt").write_text(f"{n}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"piece {n}")
        os.chdir(repo)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            ship_pr_command(yes=True, name=None, base="main", draft=False)
        leads.append(open_lead(str(repo)))
    for pr in forge.pulls.values():
        forge.checks(str(pr["head"]["sha"]), scripted.Run("tests", "success"))
    return forge, leads


def one_look(forge: scripted.Forge, leads: list[Lead], conditional: bool) -> tuple[float, int]:
    """CPU seconds of one look at every pull request, and the answers that count (not 304)."""
    mark, began = len(forge.seen), cpu()
    for lead in leads:
        tags = lead.repo.state_dir / "forge-etags.json"
        if not conditional:
            tags.unlink(missing_ok=True)
        client = GitHub(forge.url, "ada/widgets", scripted.TOKEN, tags=tags)
        for p in prs.of_lead(lead, open_only=True):
            watch.look(lead, settings_at(lead.repo, lead.branch), client, p, act=False)
    return cpu() - began, sum(1 for s in forge.seen[mark:] if s.status != 304)


def merge_first(forge: scripted.Forge, leads: list[Lead], merged: int) -> list[Lead]:
    """Merge the first `merged` pull requests on the forge and let a look record it; the leads still open."""
    for n in range(1, merged + 1):
        forge.merge(n)
    for lead in leads[:merged]:
        client = GitHub(forge.url, "ada/widgets", scripted.TOKEN, tags=lead.repo.state_dir / "forge-etags.json")
        for p in prs.of_lead(lead, open_only=True):
            watch.look(lead, settings_at(lead.repo, lead.branch), client, p, act=False)
    return leads[merged:]


def pass_reads(leads: list[Lead]) -> float:
    """CPU seconds of what a pass reads of the pull requests: each lead's open ones."""
    began = cpu()
    for lead in leads:
        prs.of_lead(lead, open_only=True)
    return cpu() - began


def whole_reads(lead: Lead, only_open: bool) -> float:
    """CPU seconds of reading every pull request's chain whole (or the open ones' only)."""
    from git_balanced.state import cache, refs

    began = cpu()
    for name, st in cache.read_all(lead.repo, "prs").items():
        if not only_open or st["state"] == "open":
            refs.events_of(lead.repo, f"refs/balanced/prs/{name}")
    return cpu() - began


def reads(forge: scripted.Forge, leads: list[Lead], merged: int, runs: int) -> bool:
    """Print what a pass reads with `merged` pull requests merged, against whole reads; whether it met its goal."""
    live = merge_first(forge, leads, merged)
    pass_cpu = statistics.median(pass_reads(live) for _ in range(runs))
    every = statistics.median(whole_reads(leads[0], False) for _ in range(runs))
    open_only = statistics.median(whole_reads(leads[0], True) for _ in range(runs))
    ratio = pass_cpu / open_only if open_only else 0.0
    print(f"  a pass's reads, {len(live)} open and {merged} merged: {pass_cpu * 1000:.1f} ms CPU (median); every "
          f"chain read whole {every * 1000:.1f} ms, the open ones' whole {open_only * 1000:.1f} ms")
    verdict = "PASS" if ratio < 1.0 else "MISS"
    print(f"{verdict}  a pass's reads: {ratio:.2f}x reading the open chains whole, goal < 1.0x")
    return ratio < 1.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prs", type=int, default=10)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--merged", type=int, default=0, help="pull requests opened and merged first (default 0)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        forge, all_leads = setup(Path(tmp), args.prs + args.merged)
        leads = merge_first(forge, all_leads, args.merged)
        one_look(forge, leads, True)  # the first look keeps the ETags
        fresh = [one_look(forge, leads, False) for _ in range(args.runs)]
        one_look(forge, leads, True)
        kept = [one_look(forge, leads, True) for _ in range(args.runs)]
        ok_reads = reads(forge, all_leads, args.merged, args.runs) if args.merged else True
    f_cpu, k_cpu = statistics.median(c for c, _ in fresh), statistics.median(c for c, _ in kept)
    f_req, k_req = max(n for _, n in fresh), max(n for _, n in kept)
    print(f"load average {os.getloadavg()[0]:.2f}; {args.prs} open pull requests, {args.runs} looks each way")
    print(f"  fresh requests:       {f_req} counted answers a look, {f_cpu * 1000:.1f} ms CPU (median)")
    print(f"  conditional requests: {k_req} counted answers a look, {k_cpu * 1000:.1f} ms CPU (median)")
    ok_req, ratio = k_req == 0, k_cpu / f_cpu if f_cpu else 1.0
    print(f"{'PASS' if ok_req else 'MISS'}  unchanged pull requests: {k_req} counted answers a look, goal 0")
    print(f"{'PASS' if ratio < 1.2 else 'MISS'}  a conditional look: {ratio:.2f}x the CPU of a fresh one, goal < 1.2x")
    return 0 if ok_req and ratio < 1.2 and ok_reads else 1


if __name__ == "__main__":
    raise SystemExit(main())
