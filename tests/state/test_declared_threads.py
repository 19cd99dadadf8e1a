"""The declared classes are made dataclasses once, however many threads meet a stand-in at the same moment."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A fresh interpreter (this one made them long ago): 8 threads released at once, each building a piece's options
# (a stand-in `__init__`, which makes the dataclasses first), the interpreter switching threads as often as it can.
SCRIPT = """
import dataclasses, sys, threading
from git_balanced.state import declared
kinds = (declared.PieceOptions, declared.Job, declared.StoredPiece, declared.StoredPlan)
assert not any("__dataclass_fields__" in k.__dict__ for k in kinds), "made before the threads"
start = threading.Barrier(8)
made, failed = [], []
def one():
    start.wait()
    try:
        made.append(declared.PieceOptions(agent="codex"))
    except Exception as exc:
        failed.append(repr(exc))
threads = [threading.Thread(target=one) for _ in range(8)]
sys.setswitchinterval(1e-5)
for t in threads: t.start()
for t in threads: t.join()
assert not failed, failed
assert [m.agent for m in made] == ["codex"] * 8
fields = [(k.__name__, n) for k in kinds for n, v in vars(k).items() if isinstance(v, dataclasses.Field)]
assert not fields, f"left as dataclasses.field on the class: {fields}"
assert all("_made_first" not in getattr(k, n).__qualname__ for k in kinds for n in declared.MADE_FIRST)
print("ok")
"""


def test_threads_that_meet_a_stand_in_at_once_make_the_dataclasses_once() -> None:
    for _ in range(3):  # a race: a few tries, each a fresh interpreter
        r = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True,
                           env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
        assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]
