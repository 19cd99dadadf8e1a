"""`git balanced show JOB` on a job whose plan `gc` archived: where its archive removed its branch, it says so and
gives the command that brings it back, in text and in --json (`branches_removed`); a branch put back is shown
as any other."""

from __future__ import annotations

import json
import time
from pathlib import Path

from git_balanced.git import Repo
from git_balanced.state import archive
from tests.state.test_archive_branches import _land, _plan
from tests.support.builders import git, make_repo
from tests.support.cli import balanced


def test_show_says_how_a_branch_the_archive_removed_comes_back(tmp_path: Path) -> None:
    repo = Repo.discover(make_repo(tmp_path / "lead"))
    near = _land(repo, "balanced/near")
    far = _land(repo, "balanced/far")
    repo.cas_ref("refs/remotes/m1/balanced/far", far, None)  # run on m1: fetched back, and its branch made here
    _, made = _plan(repo, ["balanced/near"])
    _, made_far = _plan(repo, ["balanced/far"], fetched_ref="refs/remotes/m1/balanced/far")
    archive.fold_away(repo, 0, now=time.time() + 1)
    assert repo.read_ref("refs/heads/balanced/near") is None and repo.read_ref("refs/heads/balanced/far") is None

    shown = balanced(repo.root, "show", made["balanced/near"])
    assert shown.code == 0, shown.err
    back = f"git branch balanced/near {near}"
    assert (f"  branch: balanced/near (refs/heads/balanced/near) removed by the archive, merged into the lead at "
            f"{near[:7]} (`{back}` brings it back)") in shown.out.splitlines()
    data = json.loads(balanced(repo.root, "show", made["balanced/near"], "--json").out)
    assert data["branches_removed"] == [{"ref": "refs/heads/balanced/near", "sha": near, "here": False,
                                         "restore": back}]

    far_out = balanced(repo.root, "show", made_far["balanced/far"]).out
    assert f"(`git update-ref refs/remotes/m1/balanced/far {far}` brings it back)" in far_out, far_out
    assert f"  also refs/heads/balanced/far: removed by the archive, merged into the lead at {far[:7]} " \
           f"(`git branch balanced/far {far}` brings it back)" in far_out.splitlines(), far_out

    git(repo.root, *back.split()[1:])  # as show says
    again = balanced(repo.root, "show", made["balanced/near"])
    assert f"  branch: balanced/near (refs/heads/balanced/near) at {near[:7]}, in the lead's branch" \
        in again.out.splitlines() and "brings it back" not in again.out
    assert json.loads(balanced(repo.root, "show", made["balanced/near"], "--json").out)[
        "branches_removed"][0]["here"] is True
