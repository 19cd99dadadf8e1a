"""The engine's landing beside its pass: a pass never waits on a check, and a later pass records the verdicts."""

from __future__ import annotations

from pathlib import Path

from git_balanced import jobs as J
from git_balanced.engine.context import Context
from git_balanced.engine.loop import Engine
from git_balanced.lead import open_lead, settings_at
from tests.support.plans import inbox_text, jobs_of, lead_repo, piece, plan
from tests.support.wait import wait_until


def test_a_pass_goes_on_while_the_landing_checks(tmp_path: Path) -> None:
    gate = tmp_path / "go"
    # The check waits for the test to open the gate (5 s at the most), so a pass that waited on it would hang here.
    check = f'i=0; while [ ! -f {gate} ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; test -f {gate}'
    repo = lead_repo(tmp_path, check=check)
    assert plan(repo, [piece("a", "echo a > src/a.txt")], "--start").code == 0
    eng = Engine(open_lead(str(repo)), land_aside=True)
    wait_until(lambda: (eng.pass_once() or True) and eng.landing is not None, 60, "a landing started beside the pass")
    assert eng.pass_once(), "the finished piece is still live: its landing runs"
    assert eng.landing is not None and not eng.landing.done(), "the pass returned while the check waits"
    [job] = jobs_of(repo, "a")
    ctx = Context(eng.lead, settings_at(eng.repo, "main"))
    assert job["state"] == "finished" and not eng.waits_for_you(ctx, J.all_jobs(eng.repo)[str(job["id"])]), \
        "it waits for its landing, not for you"
    gate.touch()
    # The board says landed as soon as the branch moved (the landing note names the job), which can be before a
    # pass took the landing's verdicts: it is waited for too.
    wait_until(lambda: (eng.pass_once() or True) and eng.landing is None and jobs_of(repo, "a")[0]["state"] == "landed",
               30, "a later pass to record the landing")
    assert eng.landing is None and (repo / "src" / "a.txt").read_text() == "a\n"
    assert "Its check passed, so balanced/a landed in main as" in inbox_text(repo)
    assert not eng.pass_once(), "nothing left to do"
