"""The fence (fence.py): a folder read-only for one command and what it starts, where the machine allows it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from git_balanced import fence


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
