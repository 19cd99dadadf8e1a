"""A landing check on a machine leaves no ref behind in its copy: the runner's `landcheck` removes the ref its
commit came under once the check ended, and only while that ref still names the commit. The runner's part run
here, on a real copy (as the lead's push leaves one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_balanced.shipped.landcheck import landcheck
from git_balanced.shipped.runfiles import RequestError
from tests.support.builders import commit, git, make_repo

REF = "refs/balanced/landing-checks/main"


def test_the_ref_goes_after_the_check_and_a_later_push_under_it_stays(tmp_path: Path) -> None:
    copy = make_repo(tmp_path / "copy", {"ok.txt": "fine\n"})
    first = git(copy, "rev-parse", "HEAD")
    git(copy, "update-ref", REF, first)
    ran = landcheck({"copy": str(copy), "commit": first, "command": "test -f ok.txt", "slot": "s1", "ref": REF,
                     "timeout": 60})
    assert ran["passed"] is True and ran["commit"] == first
    assert git(copy, "for-each-ref", "refs/balanced/") == "", "the candidate's ref is gone"
    second = commit(copy, {"two.txt": "2\n"}, "two")
    git(copy, "update-ref", REF, second)  # another landing's candidate, pushed while the first one's check ran
    assert landcheck({"copy": str(copy), "commit": first, "command": "true", "slot": "s2", "ref": REF,
                      "timeout": 60})["passed"]
    assert git(copy, "rev-parse", REF) == second, "a ref that names another commit is left to its own check"
    with pytest.raises(RequestError, match="`ref` must be"):
        landcheck({"copy": str(copy), "commit": first, "command": "true", "ref": "refs/heads/main"})
