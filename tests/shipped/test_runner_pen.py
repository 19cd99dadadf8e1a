"""The runner's worker in its pen: the request's `worker` asks for the fence and names the environment it
passes; the result says whether the worker ran fenced. Real repositories, real detached runners."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from git_balanced.shipped import pen
from tests.shipped.test_runner import lead, request, wait_for  # noqa: F401  (lead is a fixture)
from tests.support.builders import git
from tests.support.runner_calls import call


@pytest.mark.parametrize("fenced", [True, False])
def test_a_worker_in_its_pen_writes_its_own_things_and_sees_no_secret(
        tmp_path: Path, lead: tuple[Path, str], monkeypatch: pytest.MonkeyPatch, fenced: bool) -> None:  # noqa: F811
    monkeypatch.delenv("GIT_BALANCED_NO_FENCE", raising=False)
    if fenced and not pen.available():
        pytest.skip("this machine allows no user namespaces")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_lead")
    monkeypatch.setenv("NPM_TOKEN", "npm_lead")
    home = Path(os.environ["HOME"])
    (home / ".bashrc").write_text("# yours\n")
    run = ('{ echo x >> ~/.bashrc; } 2>/dev/null && echo wrote-bashrc > out.txt; echo "${GITHUB_TOKEN:-none} '
           '${NPM_TOKEN:-none}" >> out.txt; echo t > "$TMPDIR/t" && echo tmp >> out.txt')
    req = request(tmp_path, lead, "p1", run, worker={"agent": "shell", "env": ["NPM_TOKEN"], "fence": fenced})
    call("start", req)
    res = wait_for("p1", tmp_path / "runs")["result"]
    assert res["error"] is None and res["fenced"] is fenced, res
    out = git(lead[0], "show", "balanced/piece:out.txt").splitlines()
    assert out == ([] if fenced else ["wrote-bashrc"]) + ["none npm_lead", "tmp"], out
    assert ((home / ".bashrc").read_text() == "# yours\n") is fenced
    assert (tmp_path / "runs" / "p1" / "tmp" / "t").exists(), "its TMPDIR is its run folder's tmp/"
