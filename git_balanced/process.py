"""What this process remembers between calls, held by one object (DESIGN §11): caches, pools of connections,
locks. A module keeps none of it in a global of its own; it asks for its part here, a class of its own made
once per process on first ask. A test drops it all with `forget()`, as a process that ends would.

    reach = process.part(Reach)   # the same Reach for every caller in this process
"""

from __future__ import annotations

from _thread import RLock  # threading's own lock (threading.RLock), without importing threading

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Generic, TypeVar
else:
    from git_balanced.typed import Generic
    from git_balanced.typed import type_var as TypeVar

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")


class Bounded(Generic[K, V]):
    """A cache of the `KEEP` newest values by key, the oldest dropped first: a subclass (made by `part`) sets
    KEEP and what it holds."""

    __slots__ = ("_items",)
    KEEP = 16

    def __init__(self) -> None:
        self._items: dict[K, V] = {}

    def get(self, key: K) -> V | None:
        return self._items.get(key)

    def put(self, key: K, value: V) -> None:
        if key not in self._items and len(self._items) >= self.KEEP:
            del self._items[next(iter(self._items))]  # the oldest
        self._items[key] = value

    def made(self, key: K, make: Callable[[], V]) -> V:
        """The value kept for `key`, else `make()`'s, kept (a None made is kept too)."""
        if key not in self._items:
            self.put(key, make())
        return self._items[key]


class Process:
    """The parts of one process, each made on first ask from its class (which takes no arguments), and the
    closers that `forget()` calls before dropping them (a pool closes its connections)."""

    __slots__ = ("_lock", "_parts")

    def __init__(self) -> None:
        self._lock = RLock()
        self._parts: dict[type, object] = {}

    def part(self, kind: type[T]) -> T:
        found = self._parts.get(kind)
        if found is None:
            with self._lock:
                found = self._parts.get(kind)
                if found is None:
                    found = self._parts[kind] = kind()
        return found  # type: ignore[return-value]

    def has(self, kind: type) -> bool:
        return kind in self._parts

    def forget(self) -> None:
        with self._lock:
            parts, self._parts = self._parts, {}
        for found in parts.values():
            close: Callable[[], object] | None = getattr(found, "close", None)
            if close is not None:
                close()


_THIS = Process()  # the one module-level holder of mutable state (tests/test_process_state.py)


def part(kind: type[T]) -> T:
    """This process's one `kind`, made on first ask."""
    return _THIS.part(kind)


def has(kind: type) -> bool:
    """Whether this process has made its `kind` yet (a caller that only clears need not make one)."""
    return _THIS.has(kind)


def forget() -> None:
    """Drop every part, closing those that close, as a process that ends would (tests; after a fork)."""
    _THIS.forget()
