"""The order a landing round's checks start in (landing/starts.py), and a round that ends once the chain's top
passed: the other prefixes are not waited for, and what lands is what the serial queue lands."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from git_balanced.landing.queue import Candidate, Queue
from git_balanced.landing.starts import Starts
from git_balanced.lead import open_lead
from tests.support.builders import git
from tests.support.landing import branches, landed_subjects, project


def test_the_top_checks_out_first_and_the_merging_waits_for_every_checkout() -> None:
    starts, order = Starts(), []
    starts.begin(3)

    def other(k: int) -> None:
        starts.wait(top=False)
        order.append(f"other {k}")
        starts.out(top=False)

    threads = [threading.Thread(target=other, args=(k,)) for k in (1, 2)]
    for t in threads:
        t.start()
    assert not starts.top_out.wait(0.2) and order == [], "the others wait for the top's checkout"
    starts.wait(top=True)  # the top's turn is at once
    order.append("top")
    assert not starts.all_out.is_set()
    starts.out(top=True)
    for t in threads:
        t.join(10)
    assert order[0] == "top" and sorted(order[1:]) == ["other 1", "other 2"]
    assert starts.merged_may_start(None), "every prefix is out: the next chains may merge"
    stop, later = threading.Event(), Starts()
    later.begin(1)
    stop.set()
    assert not later.merged_may_start(stop), "a merge no round needs any more does not start"


def test_a_round_whose_top_passed_ends_without_waiting_for_the_others(tmp_path: Path, sealed: Path) -> None:
    gate = tmp_path / "gate"
    # The top (all four branches) passes at once; a shorter prefix waits for the gate (10 s at the most), which
    # the test opens only once the landing returned: a round that waited for them would return after they did.
    check = (f'if [ -f src/f4.txt ]; then exit 0; fi; i=0; while [ ! -f {gate} ] && [ $i -lt 200 ]; do sleep 0.05; '
             f'i=$((i+1)); done; echo done >> "$HOME/others"')
    repo = project(tmp_path, check, extra="[balanced]\ncheck_slots = 4\ncheck_seats = 4\n")
    names = branches(repo, 4)
    lead = open_lead(str(repo))
    queue = Queue(lead)
    verdicts = queue.run([Candidate(n, git(repo, "rev-parse", n)) for n in names])
    others = sealed / "others"
    assert not others.exists(), "the landing waited for the prefixes below its passing top"
    assert [(v.branch, v.status) for v in verdicts] == [(n, "landed") for n in names]
    assert landed_subjects(repo)[:4] == [f"Land {n}" for n in reversed(names)]
    assert (queue.check_runs, queue.checks_stopped, queue.rounds) == (1, 3, 1), \
        "the top's run is counted; the three stopped ones apart"
    assert not list((sealed / ".balanced" / "worktrees").glob("*/scratch-land-*.busy")), \
        "the other checks were stopped and had ended before the landing returned"
    gate.touch()
    time.sleep(0.5)  # what a check left running would do once the gate opens: write its line
    assert not others.exists(), "a stopped check ran on"
    assert landed_subjects(repo)[:4] == [f"Land {n}" for n in reversed(names)]
    assert "put back" not in git(repo, "reflog", "main")
