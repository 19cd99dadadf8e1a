"""`make bench` (bench/all.py): every benchmark runs whatever the ones before it did, every PASS and MISS line is
printed again at the end with its load, a crash is told apart from a missed goal, and the table of the figures now
replaces itself at the top of docs/performance.md, the rest of the page kept."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ALL = Path(__file__).resolve().parents[1] / "bench" / "all.py"


@pytest.fixture
def bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_all", ALL)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_all", mod)  # its dataclasses look their module up by name
    spec.loader.exec_module(mod)
    (tmp_path / "bench").mkdir()
    (tmp_path / "docs").mkdir()
    scripts = {
        "missing": "print('figures'); print('MISS  a goal: 2.0x, goal < 1.5x'); raise SystemExit(1)",
        "crashing": "print('working'); raise RuntimeError('broken')",
        "passing": "print('PASS  the door: 0.90x, goal < 1.5x')",
        "plain": "print('just figures')",
    }
    for name, body in scripts.items():
        (tmp_path / "bench" / f"{name}.py").write_text(body + "\n", encoding="utf-8")
    (tmp_path / "docs" / "performance.md").write_text("# Performance\n\nWhat it is.\n\n## State\n\nOld figures.\n",
                                                     encoding="utf-8")
    monkeypatch.setattr(mod, "ROOT", tmp_path)
    monkeypatch.setattr(mod, "DOC", tmp_path / "docs" / "performance.md")
    monkeypatch.setattr(mod, "BENCHES", list(scripts))
    return mod


def test_every_benchmark_runs_and_every_verdict_is_printed_again(bench: ModuleType,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main([]) == 1
    out = capsys.readouterr().out
    tail = out.split("=== every goal ===", 1)[1]
    assert "MISS  a goal: 2.0x, goal < 1.5x  (bench/missing.py, load" in tail
    assert "FAIL  bench/crashing.py exited 1 before it judged its goals" in tail
    assert "PASS  the door: 0.90x, goal < 1.5x  (bench/passing.py" in tail, "the one after a miss and a crash ran"
    assert "----  bench/plain.py prints figures, no goals" in tail
    assert "RuntimeError: broken" in out, "a crash's own output is passed through"
    assert "1 passed, 2 missed or failed" in out


def test_only_passes_exit_0(bench: ModuleType) -> None:
    assert bench.main(["passing", "plain"]) == 0


def test_the_table_replaces_itself_and_keeps_the_page(bench: ModuleType) -> None:
    assert bench.main([]) == 1
    page = bench.DOC.read_text(encoding="utf-8")
    assert page.startswith("# Performance\n\nWhat it is.\n\n## The figures now\n\n" + bench.START)
    assert "| `python bench/passing.py` | PASS | the door: 0.90x, goal < 1.5x |" in page
    assert "| `python bench/crashing.py` | FAIL |" in page
    assert page.endswith("## State\n\nOld figures.\n")
    assert bench.main([]) == 1
    again = bench.DOC.read_text(encoding="utf-8")
    assert again.count(bench.START) == 1 and again.count("## The figures now") == 1
    assert again.endswith("## State\n\nOld figures.\n")


def test_a_name_that_is_no_benchmark_is_refused(bench: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["nope"]) == 1
    assert "no benchmark named nope; the names are: missing crashing passing plain" in capsys.readouterr().err


def test_a_partial_run_replaces_only_its_own_rows(bench: ModuleType) -> None:
    assert bench.main([]) == 1
    first = bench.DOC.read_text(encoding="utf-8")
    missing_row = next(line for line in first.splitlines() if line.startswith("| `python bench/missing.py`"))
    (bench.ROOT / "bench" / "passing.py").write_text("print('PASS  the door: 0.80x, goal < 1.5x')\n")
    assert bench.main(["passing"]) == 0
    page = bench.DOC.read_text(encoding="utf-8")
    assert "the door: 0.80x" in page and "the door: 0.90x" not in page
    assert missing_row in page, "the rows of the benchmarks not run are kept as they were"
    rows = [line.split(" | ")[0] for line in page.splitlines() if line.startswith("| `python bench/")]
    assert rows == ["| `python bench/missing.py`", "| `python bench/crashing.py`", "| `python bench/passing.py`",
                    "| `python bench/plain.py`"], "in the order `make bench` runs them"
    assert bench.main(["plain", "--no-write"]) == 0 and bench.DOC.read_text(encoding="utf-8") == page
