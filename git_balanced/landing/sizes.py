"""The size limit: a branch that adds a file larger than `[landing] max_file_mb`, or whose change is larger
than `max_change_mb` in all, is held for you like a branch that changes a protected path (protect.py).

A worker that commits a 50 MB binary would otherwise land it silently, and every clone would carry it for
good. The limits come from the lead's committed settings, as the protected paths do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from git_balanced.git import Repo, TreeChange
from git_balanced.git.loosesize import object_sizes

if TYPE_CHECKING:
    from git_balanced.settings import Settings

MB = 1024 * 1024
SHOWN = 5


@dataclass(frozen=True)
class Limits:
    """The largest file and the largest change (all files added or changed, together) a landing takes."""

    file_mb: float
    change_mb: float

    def over(self, repo: Repo, changes: list[TreeChange]) -> dict[str, str]:
        """The files of a change (its `changes`, as `diff-tree` lists them) that pass a limit, each with the
        words that say so."""
        sizes = written(repo, changes)
        out = {p: f"{size_words(n)}: {n:,} bytes, over `[landing] max_file_mb` = {self.file_mb:g}"
               for p, n in sizes.items() if n > self.file_mb * MB}
        total = sum(sizes.values())
        if total > self.change_mb * MB:
            for p, n in sorted(sizes.items(), key=lambda kv: -kv[1])[:SHOWN]:
                out.setdefault(p, f"{size_words(n)} of a {size_words(total)} change, over `[landing] "
                                  f"max_change_mb` = {self.change_mb:g}")
        return out


def limits(settings: Settings) -> Limits:
    """The limits the lead's settings set."""
    return Limits(settings.landing.max_file_mb, settings.landing.max_change_mb)


def written(repo: Repo, changes: list[TreeChange]) -> dict[str, int]:
    """Each file a change adds or changes (`changes`, as `diff-tree` lists them), with its size in bytes on its
    new side (git's own count, without reading the files)."""
    blobs = {c.path: c.new for c in changes
             if c.status != "D" and c.new_mode != 0o160000}  # a submodule is no blob here
    return dict(zip(blobs, object_sizes(repo, list(blobs.values())), strict=True))


def size_words(n: int) -> str:
    """`12.5 MB`, `800 kB`, `20 B`."""
    return f"{n} B" if n < 1024 else f"{n / 1024:.0f} kB" if n < MB else f"{n / MB:.1f} MB"
