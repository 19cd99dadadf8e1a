"""`git balanced log` reads only as far back as the landings it prints (notes.newest_landings), starts through the
front door without click, and says byte for byte what it said when it read `-n` times 20 commits through click:
text and `--json`, with and without `-n`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from git_balanced import cli, front
from git_balanced.git import Repo
from git_balanced.state import notes
from tests.support.builders import git, make_repo
from tests.test_startup import HEAVY, both

CHECK = "make test"


def _note(branch: str, **more: object) -> dict[str, object]:
    return {"branch": branch, "piece": branch, "attempt": 1, "machine": "local", "agent": "shell", "result": "pass",
            "cost_usd": None, "check": CHECK, "seconds": 1.25, **more}


@pytest.fixture(scope="module")
def lead(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A lead whose branch has, oldest first: its first commit, then 14 commits along first parents, every third
    one the person's own (no note); one landing with two records, one with a cost, a control character in a
    subject and a line that is not JSON in its note. Its commits are returned newest first."""
    root = make_repo(tmp_path_factory.mktemp("log") / "lead")
    repo = Repo.discover(root)
    tip = repo.read_ref("refs/heads/main")
    assert tip is not None
    tree, made = repo.tree_of(tip), [tip]
    for n in range(14):
        subject = f"Merge balanced/p{n} (p{n})" if n % 3 else f"The person's own change {n}"
        if n == 4:
            subject = "Merge balanced/p4 \x1b[31mred\x1b[0m (p4)"
        tip = repo.write_commit(tree, [tip], subject + "\n", when=1_800_000_000 + n)
        made.append(tip)
        if n % 3:
            notes.add_json(repo, notes.LANDINGS, tip, _note(f"balanced/p{n}", cost_usd=0.5 if n == 5 else None))
        if n == 7:
            notes.add_json(repo, notes.LANDINGS, tip, _note("balanced/p7", attempt=2, machine="", seconds=None))
        if n == 8:
            notes.add_line(repo, notes.LANDINGS, tip, "not json")
    assert repo.cas_ref("refs/heads/main", tip, made[0])
    return root, made[::-1]


def _said_before(repo: Repo, limit: int) -> str:
    """What `log -n LIMIT` printed when it read the branch's newest `-n` times 20 commits (at least 200) in one
    `git log`, and said each line with a print of its own."""
    found = notes.landings(repo, "main", most=max(limit * 20, 200))[:limit]
    if not found:
        return "Nothing has landed yet.\n"
    out = ""
    for x in found:
        out += f"{x.commit[:7]}  {x.subject}".replace("\x1b", "\\x1b") + "\n"
        for rec in x.records:
            bits = [f"{k}: {rec[k]}" for k in ("branch", "piece", "attempt", "machine", "agent", "result")
                    if rec.get(k) not in (None, "")]
            if rec.get("cost_usd") is not None:
                bits.append(f"cost: ${rec['cost_usd']:.2f}")
            if rec.get("seconds") is not None:
                bits.append(f"check: {rec.get('check', '')} ({rec['seconds']:.1f}s)")
            out += "         " + " · ".join(bits) + "\n"
    return out


def test_the_newest_landings_are_those_the_whole_read_finds(lead: tuple[Path, list[str]]) -> None:
    """Any number asked for among any number of commits looked at: what one read of them all keeps, in order."""
    root, made = lead
    repo = Repo.discover(root)
    for most in (1, 4, 9, 200):
        whole = notes.landings(repo, "main", most=most)
        for want in (1, 2, 3, 7, 50):
            assert notes.newest_landings(repo, made[0], want, most) == whole[:want], (want, most)
    landed = [c for i, c in enumerate(made[:-1]) if (13 - i) % 3]  # made[i] is change 13 - i
    assert [x.commit for x in notes.landings(repo, "main")] == landed


def test_sparse_landings_are_found_past_the_first_batch(tmp_path: Path) -> None:
    """Landings one commit in nine, the newest eight commits the person's own: each count asked for finds what one
    read of them all finds, however many batches that takes (git_out takes the output's last newline: a count of
    the commits read that missed it stopped after the first batch)."""
    root = make_repo(tmp_path / "sparse")
    repo = Repo.discover(root)
    tip = repo.read_ref("refs/heads/main")
    assert tip is not None
    tree, first = repo.tree_of(tip), tip
    for n in range(45):
        tip = repo.write_commit(tree, [tip], f"change {n}\n", when=1_800_000_000 + n)
        if n % 9 == 0 and n < 37:
            notes.add_json(repo, notes.LANDINGS, tip, _note(f"balanced/s{n}"))
    assert repo.cas_ref("refs/heads/main", tip, first)
    whole = notes.landings(repo, "main", most=1000)
    assert len(whole) == 5
    for want in (1, 2, 3, 5, 50):
        assert notes.newest_landings(repo, tip, want, 1000) == whole[:want], want
    fast, slow = both(root, ["log", "-n", "1"], None)
    assert fast == slow and fast.out.startswith(whole[0].commit[:7]), fast


def test_log_says_what_it_said_through_click(lead: tuple[Path, list[str]]) -> None:
    root, made = lead
    repo = Repo.discover(root)
    for args, limit in ((["log"], 50), (["log", "-n", "2"], 2), (["log", "-n1"], 1), (["log", "-n", "3", "-n", "5"], 5),
                        (["log", "--json"], 50), (["log", "--json", "-n", "4"], 4), (["log", "-n", "1", "--json"], 1)):
        assert front.fast(args) is not None, f"`git balanced {' '.join(args)}` should start without click"
        fast, slow = both(root, args, None)
        assert fast == slow and fast.code == 0 and fast.err == "", args
        if "--json" in args:
            found = notes.landings(repo, "main", most=200)[:limit]
            rows = [{"commit": x.commit, "subject": x.subject, "notes": x.records} for x in found]
            assert json.loads(fast.out) == rows, args
        else:
            assert fast.out == _said_before(repo, limit), args
    five = both(root, ["log", "-n", "5"], None)[0].out.splitlines()
    assert five[0] == f"{made[0][:7]}  Merge balanced/p13 (p13)" and len(five) == 11, five
    assert five[-1].endswith("attempt: 2 · agent: shell · result: pass"), "p7's second record, its machine empty"
    every = both(root, ["log"], None)[0].out
    assert "cost: $0.50" in every and "p4 \\x1b[31mred\\x1b[0m (p4)" in every and "not json" not in every, every


@pytest.mark.parametrize("args", [["log", "-n", "0"], ["log", "-n"], ["log", "-n", "x"], ["log", "-n=3"],
                                  ["log", "--nope"], ["log", "-n", "-1"], ["log", "-h"], ["log", "extra"]])
def test_other_log_arguments_go_to_click(args: list[str], tmp_path: Path) -> None:
    assert front.fast(args) is None, args
    fast, slow = both(tmp_path, args, None)
    assert fast == slow and fast.code in (0, 2), fast


def test_nothing_landed_yet(tmp_path: Path) -> None:
    """A branch with no commit yet, and one with commits but no notes, say so either way."""
    unborn = tmp_path / "unborn"
    git(tmp_path, "init", "-q", "-b", "main", str(unborn))
    for root in (unborn, make_repo(tmp_path / "plain")):
        for args in (["log"], ["log", "--json"]):
            fast, slow = both(root, args, None)
            assert fast == slow and fast.code == 0, (root, args, fast)
            assert fast.out == ("[]\n" if "--json" in args else "Nothing has landed yet.\n"), fast


def test_log_is_declared_with_the_count_the_front_door_gives() -> None:
    command = cli.cli.commands["log"]
    limit = next(p for p in command.params if p.name == "limit")
    assert limit.default == front.LOG_LIMIT and limit.opts == ["-n"]


def test_log_imports_no_click_pydantic_mcp_or_dulwich(lead: tuple[Path, list[str]]) -> None:
    """Nor the state's writers: it reads two refs from git's files and runs one `git log`."""
    root, _ = lead
    unused = (*HEAVY, "dulwich", "dataclasses")
    script = ("import io, json, sys\nfrom git_balanced import front\nsys.stdout = io.StringIO()\n"
              "code = front.main(['log', '--json'])\nsys.stdout = sys.__stdout__\n"
              f"print(json.dumps([code, sorted(m for m in sys.modules if m.split('.')[0] in {unused!r}\n"
              "                                 or m == 'git_balanced.state.refs')]))\n")
    cp = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0 and json.loads(cp.stdout) == [0, []], cp.stdout + cp.stderr
