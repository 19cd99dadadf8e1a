"""A fresh container per job: what it costs, against the same pieces on this machine.

Builds a fresh project per round (settings, allow, a machine `box` of IMAGE, tick, ready: none of that is
timed) and runs `engine --until-idle` on N shell pieces, once with `box` the only ticked machine and once with
`local`, timing until all landed. Then times the engine commands a box costs by themselves, each alone:
`run -d` (make and start), `exec -i true` (a round trip into it) and `rm -f` (remove). Prints medians, the
ratio of box to local, and the load average before and after. Run from the repository root, with the
engine's settings in the environment where the host needs them (docs/machines.md):
  CONTAINERS_CONF=... .venv/bin/python bench/boxes.py IMAGE [-r 3] [-n 4]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.sandbox import private_env  # noqa: E402

SETTINGS = '[worktree]\ncheck = "true"\n\n[balanced]\nagent = "shell"\n'


def gb(repo: Path, env: dict[str, str], *args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "git_balanced.cli", *args], cwd=repo, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"git balanced {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")


def one_round(image: str, n: int, where: str) -> float:
    """Seconds from the engine's start until N pieces landed, on `where` (box or local)."""
    with tempfile.TemporaryDirectory(prefix="bench-boxes-") as tmp:
        env = {**private_env(Path(tmp)), "CONTAINERS_CONF": os.environ.get("CONTAINERS_CONF", "")}
        env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
        repo = Path(tmp) / "proj"
        repo.mkdir()
        for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "start"]):
            subprocess.run(["git", *args], cwd=repo, env=env, check=True)
        (repo / ".magnum").mkdir()
        (repo / ".magnum" / "settings.toml").write_text(SETTINGS)
        subprocess.run(["git", "add", "-A"], cwd=repo, env=env, check=True)
        subprocess.run(["git", "commit", "-qm", "settings"], cwd=repo, env=env, check=True)
        gb(repo, env, "allow", "--yes")
        if where == "box":
            gb(repo, env, "machines", "add", "box", "--container", image)
            gb(repo, env, "tick", "box")
            gb(repo, env, "untick", "local")
            gb(repo, env, "ready", "box")
        pieces = [{"id": f"p{i}", "task": "t", "agent": "shell", "run": f"echo {i} > f{i}.txt"} for i in range(n)]
        (Path(tmp) / "plan.json").write_text(json.dumps({"task": "bench", "pieces": pieces}))
        gb(repo, env, "plan", str(Path(tmp) / "plan.json"), "--start")
        started = time.monotonic()
        gb(repo, env, "engine", "--until-idle")
        return time.monotonic() - started


def engine_costs(image: str, rounds: int) -> dict[str, float]:
    """Median seconds of `run -d`, `exec -i true` and `rm -f` of one container."""
    costs: dict[str, list[float]] = {"run -d": [], "exec -i true": [], "rm -f": []}
    for i in range(rounds):
        name = f"balanced-bench-{os.getpid()}-{i}"
        for label, argv in (("run -d", ["run", "-d", "--name", name, "--network", "none", image, "python3", "-c",
                                        "import signal,time;signal.signal(15,lambda *a:exit());time.sleep(600)"]),
                            ("exec -i true", ["exec", "-i", name, "true"]), ("rm -f", ["rm", "-f", name])):
            t = time.monotonic()
            subprocess.run(["podman", *argv], capture_output=True, check=True)
            costs[label].append(time.monotonic() - t)
    return {k: statistics.median(v) for k, v in costs.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("image")
    ap.add_argument("-r", "--rounds", type=int, default=3)
    ap.add_argument("-n", "--pieces", type=int, default=4)
    a = ap.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    box = [one_round(a.image, a.pieces, "box") for _ in range(a.rounds)]
    local = [one_round(a.image, a.pieces, "local") for _ in range(a.rounds)]
    mb, ml = statistics.median(box), statistics.median(local)
    print(f"{a.pieces} shell pieces until all landed, median of {a.rounds}: in boxes {mb:.1f} s, "
          f"here {ml:.1f} s ({mb / ml:.1f}x)")
    for label, s in engine_costs(a.image, a.rounds).items():
        print(f"podman {label}: {s * 1000:.0f} ms")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
