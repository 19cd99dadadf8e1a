"""The two ways a worker's pen is made (shipped/pen.py): `enter` through libc in the child that runs the command,
and PEN_SCRIPT's processes; the same folders read-only and writable, and mounts the command cannot undo."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from git_balanced.shipped import pen

TRY = ('echo x > mine.txt; echo "own=$?"; echo x > ../theirs/f; echo "sibling=$?"; echo x >> "$HOME/.bashrc"; '
       'echo "bashrc=$?"; umount "$HOME" 2>/dev/null; echo "umount=$?"; '
       'mount -o remount,bind,rw "$HOME" 2>/dev/null; echo "remount=$?"; id -u')


@pytest.fixture(autouse=True)
def _penned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GIT_BALANCED_NO_FENCE", raising=False)
    if pen.probe() is None:
        pytest.skip("this machine allows no user namespaces: workers run unpenned here")


@pytest.mark.parametrize("way", [pen.LIBC, pen.SHELL])
def test_either_way_the_home_is_read_only_its_own_folder_is_not_and_the_mounts_stay(tmp_path: Path, way: str) -> None:
    home = tmp_path / "home"
    (home / "work" / "mine").mkdir(parents=True)
    (home / "work" / "theirs").mkdir()
    (home / ".bashrc").write_text("# the user's\n")
    readonly, writable = pen.folders({"HOME": str(home), "PATH": "/usr/bin:/bin"}, [str(home / "work" / "mine")])
    argv = ["/bin/sh", "-c", TRY]
    run = dict(cwd=home / "work" / "mine", capture_output=True, text=True, timeout=30,
               env={**os.environ, "HOME": str(home)})
    if way == pen.LIBC:
        cp = subprocess.run(argv, preexec_fn=pen.preexec(readonly, writable), **run)  # type: ignore[call-overload]
    else:
        cp = subprocess.run(pen.wrap(argv, readonly, writable), **run)  # type: ignore[call-overload]
    words = cp.stdout.split()
    assert words[:3] == ["own=0", "sibling=2", "bashrc=2"], cp
    assert words[3] != "umount=0" and words[4] != "remount=0", "the mounts are locked: " + cp.stdout
    assert words[5] == str(os.getuid()), "the command runs with the caller's own id"
    assert (home / ".bashrc").read_text() == "# the user's\n" and not (home / "work" / "theirs" / "f").exists()
    assert (home / "work" / "mine" / "mine.txt").exists()


def test_a_pen_that_cannot_be_made_says_which_folder_and_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    cp = subprocess.run(["/bin/sh", "-c", f"touch {marker}"], capture_output=True, text=True, timeout=30,
                        preexec_fn=pen.preexec([str(tmp_path / "missing")], []))
    assert cp.returncode == 97 and f"cannot make {tmp_path / 'missing'} read-only" in cp.stderr, cp
    assert not marker.exists()


def test_the_probe_prefers_libc_and_says_none_when_the_fence_is_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    assert pen.probe() == pen.LIBC
    monkeypatch.setenv("GIT_BALANCED_NO_FENCE", "1")
    assert pen.probe() is None and not pen.available()
