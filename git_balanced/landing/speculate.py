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
# Told, before each round, the culprits whose next chain this round or the one after may need: it can merge them
# meanwhile, and stop merging the others.
Prepare = Callable[[list[int]], None]
# Given the search so far and the prefixes it would check this round, the ones to check instead (the hints of
# idle machines steer it: machine_checks.py); it must name at least one prefix not known yet.
Guide = Callable[[Search, list[int]], list[int]]


def culprits(s: Search, spare: int) -> list[int]:
    """The possible culprits whose next chain is worth checking now, with `spare` free slots: each branch
    between the longest prefix known to pass and the shortest known to fail (any, when none failed yet),
    earliest first. A culprit with nothing after it has no next chain, and is left out."""
    if spare <= 0:
        return []
    last = min(s.hi, s.n)
    return [c for c in range(s.lo + 1, last + 1) if c < s.n][:spare]


def later(s: Search, todo: list[int], slots: int) -> list[int]:
    """For each way this round can end (each prefix of `todo` the first to fail, or none of them when a longer
    one failed already) that leaves another round to go, the culprit whose next chain that round checks ahead of
    time first. Earliest first; not those this round checks ahead already, nor one with nothing after it. (A way
    that ends the search is left out: the queue's next chain after it needs a round of its own anyway, and
    merging one for every such way costs more than it saves.)"""
    now = set(culprits(s, slots - len(todo)))
    ends = [{**{q: True for q in todo if q < p}, p: False} for p in sorted(todo)]
    if s.hi <= s.n:
        ends.append({q: True for q in todo})
    found: set[int] = set()
    for end in ends:
        after = Search(s.n, {**s.passed, **end})
        if after.done():
            continue
        spare = slots - len([i for i in next_probes(after, slots) if i not in after.passed])
        found.update(c for c in culprits(after, spare)[:1] if c < s.n and c not in now)
    return sorted(found)


def search(n: int, probe: Probe, slots: int = 1, known: dict[int, bool] | None = None,
           prepare: Prepare | None = None, guide: Guide | None = None) -> Search:
    """Rounds of `probe` until the longest passing prefix and the first culprit are known (as bisect.search),
    each round's free slots given to speculative checks of what follows each possible culprit; `prepare` is told
    first what the round after may need merged (`later`), so it is merged while this round's checks run; `guide`,
    when given, chooses each round's prefixes in place of the search's own."""
    s = Search(n, dict(known or {}))
    slots = max(1, slots)
    while not s.done():
        todo = [i for i in next_probes(s, slots) if i not in s.passed]
        if guide is not None:
            todo = [i for i in guide(s, todo) if i not in s.passed] or todo
        if not todo:
            break
        if prepare is not None:  # what this round checks ahead, and what the round after may need
            prepare(culprits(s, slots - len(todo)) + later(s, todo, slots))
        s.passed.update(probe(todo, culprits(s, slots - len(todo))))
        s.rounds += 1
    return s
