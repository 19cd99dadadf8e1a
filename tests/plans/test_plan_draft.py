"""Storing a plan without pydantic (plans/draft.py): what it reads is what planfile.py's models read, field for
field; `plan FILE` and `engine` take the front door (no click) and end without Python's teardown (exits.leave),
saying and landing what click's way does."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import click
import pytest

from git_balanced import cli, front
from git_balanced.errors import SettingsError
from git_balanced.plans.draft import draft_with_shares, read_plan
from git_balanced.plans.planfile import load_plan, with_shares
from tests.support.builders import git
from tests.support.cli import _as_a_process
from tests.support.plans import lead_repo, piece

PLANS = [
    """
    task: Two waves
    pieces:
      - id: api
        task: "  Add the API.  "
      - id: tests
        task: Test it.
        after: api
    """,
    """
    task: Budgeted
    budget: 10
    pieces:
      - {id: a, task: A., size: 2}
      - {id: b, task: B., size: 0.5, machine: local, agent: claude, model: opus, plan_first: true}
      - {id: c, task: C., agent: shell, run: "echo c > c.txt", paths: "src/**", check: "make test"}
      - {id: d, task: D., agent: codex, writes: none, after: [a, b]}
      - {id: 7, task: Seven., paths: [docs/**, README.md]}
    """,
    '{"task": "As JSON", "budget": 0.03, "pieces": [{"id": "x", "task": "X."}, {"id": "y", "task": "Y.", "size": 3}]}',
]
# A plan's id, and its short form in a branch taken already: new ones each time
IDS = re.compile(r"\b(?=[0-9a-z]*[0-9])[0-9a-z]{12,26}\b|(?<=balanced/)[0-9a-z]{6}(?=-one)")
FIELDS = ("id", "task", "size", "after", "machine", "agent", "budget_usd")


def _stored(plan: object) -> dict[str, object]:
    """What `plan FILE` stores of a plan: its task and budget, each piece's fields and options (as JSON types)."""
    pieces = [{**{f: getattr(p, f) for f in FIELDS}, "after": list(p.after), **p.options()}
              for p in plan.pieces]  # type: ignore[attr-defined]
    return json.loads(json.dumps({"task": plan.task, "budget": plan.budget, "pieces": pieces}))  # type: ignore[attr-defined]


@pytest.mark.parametrize("text", PLANS)
def test_the_draft_reads_what_the_models_read(text: str) -> None:
    text = textwrap.dedent(text)
    known = {"local"}
    draft = read_plan(text, "plan.yaml", known_machines=known)
    model = load_plan(text, "plan.yaml", known_machines=known)
    assert _stored(draft) == _stored(model)
    for budget in (None, 1.0):
        assert _stored(draft_with_shares(draft, budget)) == _stored(with_shares(model, budget))
    assert all(type(a) is type(b) for p, q in zip(draft.pieces, model.pieces, strict=True)
               for a, b in ((p.id, q.id), (p.size, q.size), (p.after, q.after), (p.paths, q.paths)))


@pytest.mark.parametrize("text", ["task: t\npieces: []\n", "task: t\npieces:\n  - {id: a, task: A., after: [b]}\n",
                                  "task: t\npieces:\n  - {id: a, task: A., run: make}\n"])
def test_a_bad_plan_is_refused_alike(text: str) -> None:
    with pytest.raises(SettingsError) as draft:
        read_plan(text, "plan.yaml")
    with pytest.raises(SettingsError) as model:
        load_plan(text, "plan.yaml")
    assert (draft.value.message, draft.value.hint) == (model.value.message, model.value.hint)


def test_plan_and_engine_take_the_front_door_with_their_own_flags() -> None:
    assert front.fast(["plan", "p.yaml", "--start", "--json"]) is not None
    assert front.fast(["plan", "-", "--start", "--until-idle"]) is not None
    assert front.fast(["engine", "--until-idle"]) is not None and front.fast(["engine"]) is not None
    for args in (["plan"], ["plan", "a.yaml", "b.yaml"], ["plan", "-h"], ["plan", "p.yaml", "--budget", "3"],
                 ["plan", "--", "p.yaml"], ["engine", "--nope"], ["engine", "-h"]):
        assert front.fast(args) is None, args
    for name, flags in (("plan", front.PLAN_FLAGS), ("engine", front.ENGINE_FLAGS)):
        command = cli.cli.commands[name]
        assert flags <= {f for p in command.params if isinstance(p, click.Option) for f in p.opts}, name


def test_plan_says_through_the_front_door_what_it_says_through_click(tmp_path: Path) -> None:
    repos = {front.main: lead_repo(tmp_path / "front"), cli.main: lead_repo(tmp_path / "click")}  # alike
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"task": "Front", "pieces": [piece("one", "echo 1 > src/one.txt")]}))
    bad = tmp_path / "bad.yaml"
    bad.write_text("task: t\npieces:\n  - {id: a, task: A., after: [b]}\n")
    for args in (["plan", str(good), "--start"], ["plan", str(good), "--json"], ["plan", str(bad)],
                 ["plan", str(good), "--until-idle"]):
        said = []
        for main, repo in repos.items():
            with _as_a_process(repo, None, {}) as (out, err):
                code = main(list(args))
            masked = IDS.sub("ID", out.getvalue())
            said.append((code, masked, err.getvalue()))
        assert said[0] == said[1], args


SCRIPT = """
import json, sys
from git_balanced import front
codes = [front.main(["plan", sys.argv[1], "--start"]), front.main(["engine", "--until-idle"])]
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"click", "pydantic", "pydantic_core"})
print(json.dumps({"codes": codes, "heavy": heavy}), file=sys.stderr)
"""


def test_a_plan_stored_and_run_through_the_front_door_imports_no_click_or_pydantic(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"task": "Light", "pieces": [piece("p1", "echo 1 > src/one.txt")]}))
    cp = subprocess.run([sys.executable, "-c", SCRIPT, str(path)], cwd=repo, capture_output=True, text=True,
                        timeout=120)
    ran = json.loads(cp.stderr.strip().splitlines()[-1])
    assert ran == {"codes": [0, 0], "heavy": []}, cp.stderr
    assert git(repo, "show", "main:src/one.txt").strip() == "1"


def test_as_its_own_process_it_ends_with_its_code_its_output_and_its_atexit(tmp_path: Path) -> None:
    """`python -m git_balanced.front plan - --start --until-idle`: ended by exits.leave, yet what it printed, the
    engine's narration included, is all there, and the plan landed; a failing command keeps its exit code."""
    repo = lead_repo(tmp_path)
    doc = json.dumps({"task": "Own process", "pieces": [piece("p1", "echo 1 > src/one.txt")]})
    cp = subprocess.run([sys.executable, "-m", "git_balanced.front", "plan", "-", "--start", "--until-idle"],
                        cwd=repo, input=doc, capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp
    assert "Started: the engine runs it here" in cp.stdout and "landed in main" in cp.stdout + cp.stderr, cp
    assert git(repo, "show", "main:src/one.txt").strip() == "1"
    cp = subprocess.run([sys.executable, "-m", "git_balanced.front", "plan", "-"], cwd=repo, input="task: [",
                        capture_output=True, text=True, timeout=120)
    assert cp.returncode == 1 and cp.stderr.startswith("error: "), cp


LEAVE = """
import atexit, sys, threading, time
from pathlib import Path
from git_balanced import exits
out = Path(sys.argv[1])
atexit.register(lambda: (out / "atexit").write_text("ran"))
def late():
    time.sleep(0.2)
    (out / "thread").write_text("done")
if sys.argv[2] == "thread":
    threading.Thread(target=late).start()
sys.stdout.write("buffered, no newline")
exits.leave(7)
"""


@pytest.mark.parametrize("case", ["plain", "thread"])
def test_leave_runs_atexit_flushes_and_waits_for_a_thread_not_a_daemon(tmp_path: Path, case: str) -> None:
    cp = subprocess.run([sys.executable, "-c", LEAVE, str(tmp_path), case], capture_output=True, text=True,
                        timeout=60)
    assert (cp.returncode, cp.stdout) == (7, "buffered, no newline"), cp
    assert (tmp_path / "atexit").read_text() == "ran"
    if case == "thread":
        assert (tmp_path / "thread").read_text() == "done", "the ordinary exit waited for the thread"
