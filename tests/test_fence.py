"""The fence (fence.py): a folder read-only for one command and what it starts, where the machine allows it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from git_balanced import fence, process


def namespaces_allowed() -> bool:
    """Whether this machine lets this user make a user and mount namespace at all (asked of unshare itself)."""
    if not shutil.which("unshare"):
        return False
    cp = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "true"], capture_output=True)
    return cp.returncode == 0


def test_where_namespaces_are_allowed_the_fence_is_there_and_holds(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GIT_BALANCED_NO_FENCE", raising=False)
    if not namespaces_allowed():
        pytest.skip("this machine allows no user namespaces: the lead's repository cannot be fenced here")
    assert fence.available(), "unshare works here, so the fence must"
    lead = tmp_path / "lead"
    lead.mkdir()
    (lead / "f").write_text("the lead's\n")
    script = f'echo theirs > {lead}/f; echo "wrote=$?"; umount {lead} 2>/dev/null; echo "umount=$?"; id -u'
    argv = fence.prefix_for([lead], ["sh", "-c", script])
    assert argv is not None
    cp = subprocess.run(argv, capture_output=True, text=True)
    assert cp.returncode == 0, cp.stderr
    wrote, umount, uid = cp.stdout.split()
    assert wrote != "wrote=0" and "Read-only file system" in cp.stderr, cp
    assert umount != "umount=0", "the command cannot unmount what holds it"
    assert int(uid) == os.getuid(), "it runs as the caller, not as root of its namespace"
    assert (lead / "f").read_text() == "the lead's\n"
    assert fence.prefix_for([lead], ["true"], writable=[lead / "sub"]) is None, "a folder it must write is not fenced"
    monkeypatch.setenv("GIT_BALANCED_NO_FENCE", "1")
    assert not fence.available() and fence.prefix_for([lead], ["true"]) is None


def test_the_probe_holds_whatever_is_mounted_under_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tmpfs mounted under $TMPDIR once made the probe fail (a plain bind of a folder with a mount under it is
    refused in a user namespace), and the fence turned itself off without a word."""
    monkeypatch.delenv("GIT_BALANCED_NO_FENCE", raising=False)
    if not namespaces_allowed():
        pytest.skip("this machine allows no user namespaces")
    if os.getuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    tmp = tmp_path / "tmp"
    (tmp / "mounted").mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "none", str(tmp / "mounted")], check=True)
    try:
        monkeypatch.setenv("TMPDIR", str(tmp))
        process.forget()  # the probe runs again
        assert fence.why_unavailable() is None and fence.available()
        # A folder with a mount under it can itself be fenced: its own files are read-only.
        (tmp / "f").write_text("mine\n")
        argv = fence.prefix_for([tmp], ["sh", "-c", f"echo theirs > {tmp}/f"])
        assert argv is not None
        cp = subprocess.run(argv, capture_output=True, text=True)
        assert cp.returncode != 0 and "Read-only file system" in cp.stderr, cp
        assert (tmp / "f").read_text() == "mine\n"
    finally:
        subprocess.run(["umount", str(tmp / "mounted")], check=True)
        process.forget()  # the probe runs again


def test_when_there_is_no_fence_it_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_BALANCED_NO_FENCE", "1")
    assert fence.why_unavailable() == "GIT_BALANCED_NO_FENCE is set, which turns the fence off"
    monkeypatch.delenv("GIT_BALANCED_NO_FENCE")
    with monkeypatch.context() as m:
        m.setenv("PATH", str(tmp_path))  # a machine without util-linux's unshare and mount
        process.forget()  # the probe runs again
        try:
            assert fence.why_unavailable() == "unshare and mount are not on PATH (util-linux has them)"
            assert not fence.available()
        finally:
            process.forget()  # the probe runs again
    if namespaces_allowed():
        assert fence.why_unavailable() is None
