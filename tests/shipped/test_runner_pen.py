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


def test_a_session_probes_the_pen_once_and_its_runners_are_handed_the_way(
        tmp_path: Path, lead: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A runner session (`serve`) asks for the way to pen its workers once and hands it to each runner it forks,
    which then probe nothing themselves; both workers still run fenced. A runner started alone probes for its own."""
    import json
    import subprocess
    import sys

    from tests.support.runner_calls import RUNNER

    monkeypatch.delenv("GIT_BALANCED_NO_FENCE", raising=False)
    if not pen.available():
        pytest.skip("this machine allows no user namespaces")
    probes, site = tmp_path / "probes", tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(  # every probe of every process started from here leaves a line
        "import os\nfrom git_balanced.shipped import pen\n_probe = pen.probe\n"
        f"def probe():\n    open({str(probes)!r}, 'a').write(str(os.getpid()) + '\\n')\n    return _probe()\n"
        "pen.probe = probe\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    session = subprocess.Popen([sys.executable, RUNNER, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True, env=env)
    assert session.stdin is not None and session.stdout is not None
    assert json.loads(session.stdout.readline())["ready"]
    try:
        for job in ("s1", "s2"):
            req = request(tmp_path, lead, job, f"echo {job} > {job}.txt", branch=f"balanced/{job}",
                          worker={"agent": "shell", "env": [], "fence": True})
            session.stdin.write(json.dumps({"action": "start", "request": req}) + "\n")
            session.stdin.flush()
            assert "error" not in json.loads(session.stdout.readline())
            res = wait_for(job, tmp_path / "runs")["result"]
            assert res["error"] is None and res["fenced"] is True, res
    finally:
        session.stdin.close()
        session.wait(timeout=30)
    assert probes.read_text().split() == [str(session.pid)], "the session probed once; its runners, never"
    monkeypatch.setenv("PYTHONPATH", env["PYTHONPATH"])
    call("start", request(tmp_path, lead, "s3", "echo s3 > s3.txt", branch="balanced/s3",
                          worker={"agent": "shell", "env": [], "fence": True}))
    assert wait_for("s3", tmp_path / "runs")["result"]["fenced"] is True
    assert len(probes.read_text().split()) == 2, "a runner started alone probes for its own worker"
