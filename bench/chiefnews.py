"""What the running chief's news loop costs while nothing happens: N registered projects on this machine, idle,
each with a question passed to the person and a review under Now, and a chief whose inbox has had news.

    python bench/chiefnews.py [--projects 10]

A minute of the driver's loop (chief/session.py `drive`) is 12 looks over the projects (one every 5 s) and 60
looks at the chief's inbox (one a second). The naive way, as the loop was before: each look started
`git balanced chief held --json` in every project, and each second read the chief's whole inbox (`passon.news`).
Now: each look compares each project's stamp and reads nothing that did not move (chief/news.py `Watch.look`),
and the inbox is read only when its tip moved (`passon.moved`). Both run in this process without sleeping,
counting every process started (subprocess.Popen's) and the CPU of this process and its children; the naive
looks are run for a few looks and scaled to the minute. The load average is printed beside them.

Goals: an idle chief with N idle projects starts no process per look (0 a minute), and its loop's CPU a
minute is at most 2% of the naive loop's.

A project on a machine is not measured here: it costs one call there per `news.WAIT` seconds while idle (the
naive loop made 12 a minute), and tests/chief/test_news_remote.py checks that its news comes at once.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run from a checkout without installing
sys.path.insert(0, str(HERE))

from sandbox import private_env  # noqa: E402

LOOKS, INBOX_LOOKS = 12, 60  # a minute of the driver: a look every 5 s, the inbox every second
NAIVE_LOOKS = 1  # the naive looks run, scaled to LOOKS
CPU_GOAL = 0.02


class Counted:
    """The processes started and the CPU seconds (this process and its children) of what runs inside it."""

    def __init__(self) -> None:
        self.started = 0
        self.cpu = 0.0

    def run(self, work: Callable[[], Any]) -> None:
        real = subprocess.Popen._execute_child  # type: ignore[attr-defined]

        def counted(popen: Any, *args: Any) -> Any:
            self.started += 1
            return real(popen, *args)

        before = _cpu()
        subprocess.Popen._execute_child = counted  # type: ignore[attr-defined]
        try:
            work()
        finally:
            subprocess.Popen._execute_child = real  # type: ignore[attr-defined]
        self.cpu += _cpu() - before


def _cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def build(root: Path, count: int) -> list[Path]:
    """`count` registered repositories, each with a question passed to the person and a review under Now."""
    from git_balanced import jobs as J
    from git_balanced.channel import inbox, now, questions
    from git_balanced.chief import home
    from git_balanced.chief.projects import add_project
    from git_balanced.lead import open_lead

    made = []
    for i in range(count):
        repo = root / f"project-{i:02d}"
        repo.mkdir(parents=True)
        (repo / "README.md").write_text(f"project {i}\n")
        for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "init"]):
            subprocess.run(["git", *args], cwd=repo, check=True)
        lead = open_lead(str(repo))
        jid = J.place(lead.repo, {"plan": "p1", "piece": "api", "task": "t", "lead": "main", "machine": "local",
                                  "agent": "shell", "attempt": 1})
        questions.pass_on(lead.repo, questions.ask(lead.repo, jid, "npm test", kind="command"), "passed on")
        now.put(lead.repo, f"The work of project {i}", ships=None, check=None)
        add_project(str(repo))
        made.append(repo)
    inbox.post(home.repo(), "chief", "shop: an earlier question", kind="question")  # the chief has had news
    return made


def naive(count: Counted, pass_after: float) -> None:
    """The loop as it was: `chief held --json` started in every project each look; the inbox read each second."""
    from git_balanced.chief import passon, there
    from git_balanced.chief.projects import list_projects

    def look() -> None:
        for p in list_projects():
            there.data(p, ["chief", "held", "--json", "--pass-after", repr(pass_after)])

    for _ in range(NAIVE_LOOKS):
        count.run(look)
    count.started, count.cpu = count.started * LOOKS // NAIVE_LOOKS, count.cpu * LOOKS / NAIVE_LOOKS
    count.run(lambda: [passon.news() for _ in range(INBOX_LOOKS)])


def ours(count: Counted, pass_after: float) -> None:
    """The loop now: `Watch.look` each look, the inbox's tip each second (read only when it moved)."""
    from git_balanced.chief import news, passon, session

    watch = news.Watch(pass_after)
    session._look(watch)  # the first look reads every project, as the driver's first does
    passon.news()
    time.sleep(1.1)  # what the first look wrote settles (tochief.SETTLE), as it has a few seconds into a run
    session._look(watch)
    tip = passon.moved(None)[1]

    def minute() -> None:
        nonlocal tip
        for _ in range(LOOKS):
            session._look(watch)
        for _ in range(INBOX_LOOKS):
            moved, tip = passon.moved(tip, watch.home)
            if moved:
                passon.news()

    count.run(minute)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--projects", type=int, default=10)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="balanced-bench-chiefnews-") as tmp:
        os.environ.update(private_env(Path(tmp)))
        os.environ["PYTHONPATH"] = str(HERE.parent)
        build(Path(tmp) / "src", args.projects)
        print(f"chief's news loop: {args.projects} idle projects on this machine, a minute of looks, load "
              f"{os.getloadavg()[0]:.2f}")
        old, new = Counted(), Counted()
        naive(old, 600.0)
        ours(new, 600.0)
        print(f"  naive (held started in each project)  {old.started:5d} processes a minute  {old.cpu:7.2f} s CPU"
              f"   ({NAIVE_LOOKS} look{'s' if NAIVE_LOOKS != 1 else ''} run, scaled to {LOOKS})")
        print(f"  now (stamps, read what moved)         {new.started:5d} processes a minute  {new.cpu:7.3f} s CPU"
              f"   ({new.cpu / old.cpu:.4f}x)")
        print(f"  load average after: {os.getloadavg()[0]:.2f}")
    ok_none, ok_cpu = new.started == 0, new.cpu / old.cpu <= CPU_GOAL
    print(f"{'PASS' if ok_none else 'MISS'}  an idle chief with {args.projects} idle projects starts no process per "
          f"look: {new.started} a minute (naive: {old.started})")
    print(f"{'PASS' if ok_cpu else 'MISS'}  its news loop's CPU a minute against the naive loop's: "
          f"{new.cpu / old.cpu:.4f}x, goal <= {CPU_GOAL}x")
    return 0 if ok_none and ok_cpu else 1


if __name__ == "__main__":
    raise SystemExit(main())
