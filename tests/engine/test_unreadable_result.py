"""A finished run whose result.json no runner writes (a field of the wrong type): the job fails as crashed, saying
why, and the lead hears it; the engine goes on."""

from __future__ import annotations

import json
import os
from pathlib import Path

from git_balanced import jobs as J
from git_balanced.git import Repo
from tests.support.plans import engine, inbox_text, jobs_of, lead_repo, piece, plan
from tests.support.wait import wait_for_file


def test_a_result_that_does_not_read_fails_its_job_as_crashed(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    assert plan(repo, [piece("odd", "echo odd > src/odd.txt")], "--start").code == 0
    assert engine(repo, "--once").code == 0
    [job] = jobs_of(repo, "odd")
    result = Path(os.environ["HOME"]) / ".balanced" / "runs" / str(job["id"]) / "result.json"
    wait_for_file(result, 30, "its command to end")
    written = json.loads(result.read_text())
    result.write_text(json.dumps({**written, "commits": "many"}))  # a count no runner writes

    ran = engine(repo, "--until-idle")
    assert "Traceback" not in ran.err, ran.err
    failed = J.one(Repo.discover(repo), str(job["id"]))
    assert failed is not None and failed.failure == "crashed", failed
    assert failed.state in ("failed", "retried"), failed.state  # crashed: the engine may try it again
    assert failed.reason.startswith("its runner's result could not be read: "), failed.reason
    assert "commits" in failed.reason, "the reason names the field"
    assert "odd: its worker on local ended with a result that could not be read" in inbox_text(repo)
