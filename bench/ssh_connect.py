"""Short commands over SSH: through the shared ControlMaster against a fresh ssh per command.

Starts its own sshd on 127.0.0.1 (tests/support/sshd.py; as root it creates a throwaway user), runs N
`true` commands each way through git_balanced.machines.reach.transport.Transport, and prints the medians and
their ratio. With --rtt MS, ssh reaches sshd through bench/relay.py, which adds MS milliseconds of round
trip. Run from the repository root:  .venv/bin/python bench/ssh_connect.py [-n 50] [--rtt MS]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.relay import route  # noqa: E402
from git_balanced.machines.reach.transport import Transport  # noqa: E402
from tests.support.sshd import sshd_machines  # noqa: E402


def timings(t: Transport, n: int) -> list[float]:
    """Seconds for each of n `true` commands (after one warm-up that opens the master, if any)."""
    assert t.run(["true"]).ok
    out = []
    for _ in range(n):
        start = time.perf_counter()
        res = t.run(["true"])
        out.append(time.perf_counter() - start)
        assert res.ok, res.err
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=50, help="commands each way (default 50)")
    parser.add_argument("--rtt", type=float, default=None, metavar="MS",
                        help="reach sshd through bench/relay.py with this round-trip time (default: directly)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-ssh-") as tmp:
        # A private HOME and config, so the benchmark neither reads nor writes the user's own SSH setup.
        os.environ["HOME"] = str(Path(tmp) / "home")
        os.environ["GIT_BALANCED_SSH_CONFIG"] = str(Path(tmp) / "home" / ".ssh" / "config")
        with sshd_machines(Path(tmp), ["bench"]) as machines:
            if args.rtt is not None:
                route(str(machines.config), args.rtt)
            shared = Transport("bench")
            try:
                through_master = timings(shared, args.n)
            finally:
                shared.close()
            fresh = timings(Transport("bench", multiplex=False), args.n)
            connections = machines[0].accepted()
    m_master, m_fresh = statistics.median(through_master), statistics.median(fresh)
    link = "directly" if args.rtt is None else f"through the relay at {args.rtt:g} ms round trip"
    print(f"ssh_connect: {args.n} x `true` on a loopback sshd, {link}")
    p90_master = _p90(through_master)
    print(f"  through the ControlMaster  median {m_master * 1000:7.1f} ms   p90 {p90_master:7.1f} ms")
    print(f"  fresh ssh per command      median {m_fresh * 1000:7.1f} ms   p90 {_p90(fresh):7.1f} ms")
    print(f"  ratio (fresh / master)     {m_fresh / m_master:.1f}x")
    if args.rtt:
        print(f"  in round trips             {m_master * 1000 / args.rtt:.1f} through the master, "
              f"{m_fresh * 1000 / args.rtt:.1f} fresh (CPU included)")
    print(f"  SSH connections sshd accepted: {connections} (1 for the master + {args.n + 1} fresh)")
    return 0


def _p90(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=10)[-1] * 1000


if __name__ == "__main__":
    sys.exit(main())
