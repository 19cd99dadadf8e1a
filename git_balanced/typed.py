"""What `typing` gives the package's classes at run time, made without importing `typing` (the board and the inbox
start without it): a `NamedTuple` base class and a `Generic`. Each module imports them so:

    TYPE_CHECKING = False
    if TYPE_CHECKING:
        from typing import NamedTuple
    else:
        from git_balanced.typed import NamedTuple

so the checker reads typing's own, and a run makes the same classes from `collections.namedtuple`.
"""

from __future__ import annotations

from collections import namedtuple

_OWN = frozenset({"__module__", "__qualname__", "__annotations__", "__dict__", "__weakref__"})


class _Named(type):
    """Makes each subclass of NamedTuple a `collections.namedtuple` of its annotated fields, their class values
    its defaults, with the class's own methods and docstring, as typing.NamedTuple makes it."""

    def __new__(mcs, name: str, bases: tuple[type, ...], ns: dict[str, object]) -> type:
        if not bases:  # NamedTuple itself
            return super().__new__(mcs, name, bases, ns)
        fields = list(ns.get("__annotations__", {}))  # type: ignore[call-overload]
        defaults = [ns[f] for f in fields if f in ns]
        made: type = namedtuple(name, fields, defaults=defaults, module=str(ns["__module__"]))  # type: ignore[misc]
        made.__annotations__ = dict(ns.get("__annotations__", {}))  # type: ignore[call-overload]
        for key, value in ns.items():
            if key not in _OWN and key not in fields:
                setattr(made, key, value)
        made.__qualname__ = str(ns.get("__qualname__", name))
        return made


class NamedTuple(metaclass=_Named):
    """The base of a named tuple written as a class (fields annotated, defaults as their values)."""


class Generic:
    """`Generic[...]` at run time: the class itself; so is a subclass's `[...]` (the parameters are the checker's)."""

    __slots__ = ()

    def __class_getitem__(cls, params: object) -> type:
        return cls


def type_var(name: str, **kw: object) -> object:
    """A stand-in for `TypeVar(name)` at run time: only the checker reads it."""
    return name
