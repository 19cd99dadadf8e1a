"""Kept settings readings of a sha256 repository (64 hex digits a blob) are pruned like those of a sha1 one."""

from __future__ import annotations

import os
from pathlib import Path

from git_balanced import settings_kept


def test_readings_named_by_sha256_blobs_are_pruned(tmp_path: Path) -> None:
    state_dir = tmp_path / "balanced"
    where = Path(settings_kept.folder(state_dir))
    where.mkdir(parents=True)
    names = [f"{'a' * 64}-{'0' * 12}.json", f"{'b' * 40}-{'0' * 12}.json", f"{'c' * 64}-{'1' * 12}.json"]
    others = [f"{'d' * 50}-{'0' * 12}.json", "pre-push.json", f"{'g' * 64}-{'0' * 12}.json"]
    for k, name in enumerate(names + others):
        (where / name).write_text("{}\n")
        os.utime(where / name, ns=((k + 1) * 10**9, (k + 1) * 10**9))
    assert settings_kept.prune(state_dir, keep=1) == 2
    assert sorted(p.name for p in where.iterdir()) == sorted([names[-1], *others]), "the newest reading, and the rest"
