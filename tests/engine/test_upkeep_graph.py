"""The idle engine's packing also writes the commit-graph, so that a `git fetch` into a lead with many refs reads
their commits from it; what an ended `commit-graph write` left is removed."""

from __future__ import annotations

import time
from pathlib import Path

from git_balanced.engine.upkeep import pack_if_loose
from git_balanced.git import Repo, packing
from tests.support.builders import commit, git, make_repo


def test_the_idle_packing_writes_a_commit_graph_git_reads_and_adds_to_it(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    repo = Repo.discover(root)
    head = git(root, "rev-parse", "HEAD")
    git(root, "update-ref", "--stdin", input="".join(f"create refs/heads/balanced/h{k:02d} {head}\n"
                                                     for k in range(20)))
    line = pack_if_loose(repo, refs=10, objects=10**6)
    assert line and line.endswith("; the commit-graph written."), line
    chain = root / ".git" / "objects" / "info" / "commit-graphs" / "commit-graph-chain"
    assert len(chain.read_text().split()) == 1, "one layer, of what the refs reach"
    git(root, "commit-graph", "verify")
    newer = commit(root, {"b.txt": "b\n"}, "second")
    git(root, "update-ref", "--stdin", input="".join(f"create refs/heads/balanced/n{k:02d} {newer}\n"
                                                     for k in range(20)))
    assert pack_if_loose(repo, refs=10, objects=10**6), "more loose refs: packed again, and the graph written"
    git(root, "commit-graph", "verify")
    assert git(root, "rev-list", "--count", "balanced/n00") == "2", "git reads the history through the graph"


def test_what_an_ended_commit_graph_write_left_is_removed(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r")
    repo = Repo.discover(root)
    graphs = root / ".git" / "objects" / "info" / "commit-graphs"
    graphs.mkdir(parents=True)
    start = time.time()
    for name in ("commit-graph-chain.lock", "tmp_graph_x", "graph-kept.graph"):
        (graphs / name).write_text("")
    assert sorted(Path(p).name for p in packing.left_behind(repo, start)) == ["commit-graph-chain.lock", "tmp_graph_x"]
    assert (graphs / "graph-kept.graph").exists(), "a finished layer stays"
