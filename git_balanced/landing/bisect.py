"""The landing queue's search: the longest passing prefix of a batch, in as few rounds of checks as it takes.

Prefix 0 is the lead's tip (taken as passing); prefix i is the tip with the first i branches merged. A round
checks up to `slots` prefixes at once; one of them is always the top of what is still unknown, so a batch
with no culprit costs one check.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Search:
    n: int
    passed: dict[int, bool] = field(default_factory=dict)
    rounds: int = 0

    @property
    def lo(self) -> int:
        """The longest prefix known to pass (0 when none above the tip is)."""
        below = [i for i, ok in self.passed.items() if ok and i < self.hi]
        return max(below, default=0)

    @property
    def hi(self) -> int:
        """The shortest prefix known to fail, or n + 1 when none is known to."""
        return min((i for i, ok in self.passed.items() if not ok), default=self.n + 1)

    def done(self) -> bool:
        if self.passed.get(self.n):
            return True
        return self.hi <= self.n and self.hi - self.lo == 1


def spaced(lo: int, hi: int, count: int) -> list[int]:
    """Up to `count` prefixes strictly between lo and hi, evenly spaced, the largest last."""
    if hi - lo <= 1 or count <= 0:
        return []
    span = hi - lo
    picks = {lo + (span * k) // (count + 1) for k in range(1, count + 1)}
    return sorted(p for p in picks if lo < p < hi)


def next_probes(s: Search, slots: int) -> list[int]:
    """The prefixes to check in the next round."""
    if not s.passed:
        # The whole batch first; the other slots split it evenly, so a failure is already narrowed.
        return sorted({s.n, *spaced(0, s.n, slots - 1)})
    lo, hi = s.lo, s.hi
    if hi > s.n:  # nothing failed yet but the top was not checked (cannot happen after the first round)
        return sorted({s.n, *spaced(lo, s.n, slots - 1)})
    return spaced(lo, hi, slots)


def search(n: int, probe: Callable[[list[int]], dict[int, bool]], slots: int = 1,
           known: dict[int, bool] | None = None) -> Search:
    """Run rounds of `probe` until the longest passing prefix and the first culprit are known.

    `probe` checks the given prefixes (at once, when it can) and returns pass/fail for each. `known` holds
    results already decided (from the check notes), which cost no round.
    """
    s = Search(n, dict(known or {}))
    while not s.done():
        todo = [i for i in next_probes(s, max(1, slots)) if i not in s.passed]
        if not todo:
            break
        s.passed.update(probe(todo))
        s.rounds += 1
    return s
