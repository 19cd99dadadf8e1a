"""Speculative checks for the landing queue: the slots a round of the search leaves free check, ahead of time,
the trees the next round would check.

The search (bisect.py) narrows down the first failing branch of a chain: prefix `lo` passes, prefix `hi`
fails, and the culprit is one of the branches in between. Whichever it turns out to be, say branch c, the
queue then lands prefix c - 1 and merges the branches after c on it as the next chain; the top of that chain
is the tree it checks next. So while the round checks the prefixes between `lo` and `hi`, each spare slot
checks that next top for one possible culprit, the earliest first (given that a range failed, its first
branch is the likeliest first culprit). The result is recorded by tree like any check (checks.py): when the
guess was right, the next round finds its top checked already and lands it without waiting. When it was
wrong, a check run was spent for nothing, and nothing else changes: which branch lands, which is refused, and
the tree the lead's branch moves to are decided exactly as without speculation, only sooner.
"""

from __future__ import annotations

from collections.abc import Callable

from git_balanced.landing.bisect import Search, next_probes

# Checks the given prefixes and, beside them, the next chain's top for each given culprit; returns the prefixes'
# results (the culprits' are recorded by tree, for the round after).
Probe = Callable[[list[int], list[int]], dict[int, bool]]


def culprits(s: Search, spare: int) -> list[int]:
    """The possible culprits whose next chain is worth checking now, with `spare` free slots: each branch
    between the longest prefix known to pass and the shortest known to fail (any, when none failed yet),
    earliest first. A culprit with nothing after it has no next chain, and is left out."""
    if spare <= 0:
        return []
    last = min(s.hi, s.n)
    return [c for c in range(s.lo + 1, last + 1) if c < s.n][:spare]


def search(n: int, probe: Probe, slots: int = 1, known: dict[int, bool] | None = None) -> Search:
    """Rounds of `probe` until the longest passing prefix and the first culprit are known (as bisect.search),
    each round's free slots given to speculative checks of what follows each possible culprit."""
    s = Search(n, dict(known or {}))
    slots = max(1, slots)
    while not s.done():
        todo = [i for i in next_probes(s, slots) if i not in s.passed]
        if not todo:
            break
        s.passed.update(probe(todo, culprits(s, slots - len(todo))))
        s.rounds += 1
    return s
