"""A table of plan files no one should write (docs/safety/inputs.md): each is refused by `git balanced plan`
with exit 1 and one message naming the file and the line or key, never a traceback (exit 3), never a hang,
and never stored."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.builders import git, make_repo
from tests.support.cli import balanced

ONE = "pieces:\n  - id: a\n    task: Do a.\n"
DEEP = 2000


def piece(extra: str, task: str = "Do a.") -> str:
    """A plan of one piece `a` with `extra` (YAML lines, unindented) added to the piece."""
    return "task: t\npieces:\n  - id: a\n    task: " + task + "\n" + "".join(f"    {line}\n" for line in
                                                                      extra.splitlines())


def lines(n: int, item: str) -> str:
    return "".join(f"  - {item}\n" for _ in range(n))


# (case id, the file's text (str) or bytes, what the message must say besides the file's name)
CASES: list[tuple[str, str | bytes, str]] = [
    ("flow-lists-deep", "task: " + "[" * DEEP + "]" * DEEP + "\n" + ONE, ":1: task[0]"),
    ("flow-maps-deep", "task: " + "{a: " * DEEP + "1" + "}" * DEEP + "\n" + ONE, "nested more than 20"),
    ("block-maps-deep", "task:\n" + "".join("  " * i + "a:\n" for i in range(1, 600)), "nested more than 20"),
    ("block-lists-deep", "task: t\npieces:\n" + "  " + "- " * 1500 + "x\n", ":3: pieces"),
    ("after-deep", piece("after: " + "[" * DEEP + "]" * DEEP), ":5: pieces[0].after"),
    ("paths-deep", piece("paths:\n" + "".join("  " * i + "-\n" for i in range(1, 400))), "nested more than 20"),
    ("task-nul", 'task: "a\\0b"\n' + ONE, ":1: task: "),
    ("task-lone-surrogate", 'task: "\\ud800"\n' + ONE, "lone surrogate"),
    ("task-low-surrogate", 'task: "x\\udfff y"\n' + ONE, "lone surrogate (\\udfff)"),
    ("model-escape", piece('model: "\\e[31mred"'),
     "pieces[0].model: \"\\x1b[31mred\": it holds a control character (\\x1b)"),
    ("piece-task-nul", piece("", task='"Do\\0 it"'), ":4: pieces[0].task"),
    ("machine-bell", piece('machine: "ring \\a"'), "pieces[0].machine: \"ring \\x07\": it holds a control character"),
    ("task-too-long", "task: " + "t" * 40_000 + "\n" + ONE, "the plan, `task`: it has 40,000 characters"),
    ("piece-task-too-long", piece("", task="w" * 33_000), "piece a, `task`: it has 33,000 characters"),
    ("run-nul", piece('agent: shell\nrun: "make\\0 all"'), "pieces[0].run"),
    ("run-too-long", piece("agent: shell\nrun: " + "echo " * 14_000), "`run`: it has 69,999 bytes, more than 65,536"),
    ("model-tab", piece('model: "a\\tb"'), "`model`: it holds a control character (\\x09)"),
    ("model-too-long", piece("model: " + "m" * 300), "`model`: it has 300 characters, more than 200"),
    ("machine-too-long", piece("machine: " + "m" * 300), "`machine`: it has 300 characters"),
    ("machine-nul", piece('machine: "box\\0"'), "pieces[0].machine"),
    ("id-too-long", "task: t\npieces:\n  - id: " + "i" * 5000 + "\n    task: x\n", "… (5,000 characters)\" is not a "
     "piece id: it has 5000 characters, more than 48"),
    ("id-surrogate", 'task: t\npieces:\n  - id: "a\\ud83d"\n    task: x\n', "pieces[0].id"),
    ("after-surrogate", piece('after: ["\\udc00"]'), "pieces[0].after[0]"),
    ("glob-too-long", piece("paths: [" + "p" * 2000 + "]"), "`paths`: \""),
    ("glob-nul", piece('paths: ["src/\\0"]'), "pieces[0].paths[0]"),
    ("glob-newline", piece('paths: ["src/\\n**"]'), "`paths`: \"src/\\x0a**\""),
    ("too-many-globs", piece("paths:\n" + lines(1001, "src/x")), "it lists 1,001 globs, more than 1,000"),
    ("too-many-pieces", "task: t\npieces:\n" + "".join(f"  - {{id: p{i}, task: t}}\n" for i in range(501)),
     "it lists 501 pieces, more than 500"),
    ("budget-1e308", "task: t\nbudget: 1e308\n" + ONE, ":2: the plan, `budget`: is 1e+308"),
    ("budget-20-digits", "task: t\nbudget: 99999999999999999999\n" + ONE, "from 0 to 100,000"),
    ("budget-5000-digits", "task: t\nbudget: " + "9" * 5000 + "\n" + ONE, "a number of 5,000 characters"),
    ("budget-over", "task: t\nbudget: 100000.01\n" + ONE, ":2: the plan, `budget`"),
    ("budget-nan", "task: t\nbudget: .nan\n" + ONE, "is nan (a number), but it must be a number of US dollars "
     "from 0 to 100,000"),
    ("size-inf", piece("size: 1e309"), "`size`: is inf (a number), but it must be a number from 0.01 to 1,000"),
    ("size-tiny", piece("size: 0.001"), "`size`: is 0.001"),
    ("size-huge", piece("size: 1001"), "from 0.01 to 1,000"),
    ("size-200-digits", piece("size: 1" + "0" * 150), "a number of 151 characters"),
    ("task-5000-digits", "task: " + "1" * 5000 + "\n" + ONE, ":1: task: a number of 5,000 characters"),
    ("key-nul", 'task: t\n"ta\\0sk": x\n' + ONE, ":2: the plan: a key"),
    ("key-too-long", "task: t\n" + "k" * 1020 + ": x\n" + ONE, f"unknown key `{'k' * 40}… (1,020 characters)`"),
    ("glob-surrogate", piece('paths: ["src/\\ud800/**"]'), "pieces[0].paths[0]"),
    ("not-utf8", b"task: caf\xe9\n" + ONE.encode(), ":1: not UTF-8 text (byte 9)"),
    ("too-large", "task: t\n" + "# " + "x" * (1024 * 1024) + "\n" + ONE, "larger than 1,048,576 bytes"),
]


@pytest.fixture
def lead(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "lead", {".magnum/settings.toml": '[balanced]\nagent = "shell"\n'})


def refused(lead: Path, *args: str, input: str | None = None) -> str:
    """The message of `git balanced plan ARGS`, which must refuse with exit 1 and store nothing."""
    ran = balanced(lead, "plan", *args, input=input)
    assert ran.code == 1, (ran.code, ran.err[-2000:])
    assert ran.err.startswith("error: ") and "Traceback" not in ran.err, ran.err[-2000:]
    assert git(lead, "for-each-ref", "refs/balanced/plans") == "", "nothing is stored"
    return ran.err


@pytest.mark.parametrize(("text", "said"), [pytest.param(t, s, id=i) for i, t, s in CASES])
def test_a_bad_plan_file_is_refused_naming_the_file_and_the_place(lead: Path, text: str | bytes,
                                                                     said: str) -> None:
    path = lead.parent / "plan.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    err = refused(lead, str(path))
    assert str(path) in err, f"the message names the file: {err[:500]}"
    assert said in err, f"{said!r} not in {err[:1000]!r}"
    assert len(err) < 4000, "a long value is cut, not echoed whole"


@pytest.mark.parametrize(("make", "said"), [
    (lambda d: d, "is a folder, not a regular file"),
    (lambda d: Path("/dev/zero"), "/dev/zero is a device, not a regular file"),
    (lambda d: (os.mkfifo(d / "fifo"), d / "fifo")[1], "is a pipe (FIFO), not a regular file"),
    (lambda d: d / ("n" * 300), "is too long: a path has at most 4,096 bytes and each name in it at most 255"),
    (lambda d: Path(str(d) + "/a" * 3000), "is too long"),
    (lambda d: Path(str(d) + "/pl\0an.yaml"), "holds a NUL character"),
], ids=["folder", "dev-zero", "fifo", "long-name", "long-path", "nul-in-path"])
def test_a_plan_path_that_is_no_file_is_refused_without_reading_it(lead: Path, tmp_path: Path, make: object,
                                                                     said: str) -> None:
    err = refused(lead, str(make(tmp_path)))  # type: ignore[operator]
    assert said in err, err


def test_stdin_is_read_no_further_than_the_cap(lead: Path) -> None:
    err = refused(lead, "-", input="task: t\n" + "#" * (3 * 1024 * 1024) + "\n" + ONE)
    assert "<stdin>: the plan file is larger than 1,048,576 bytes" in err


def test_a_plan_at_every_bound_is_taken(lead: Path) -> None:
    text = ("task: " + "t" * 32_768 + "\nbudget: 100000\npieces:\n"
            + "".join(f"  - {{id: p{i}, task: t, size: 0.01}}\n" for i in range(498))
            + '  - id: last\n    size: 1000\n    task: "tab\\tand\\nlines"\n    model: ' + "m" * 200
            + "\n    paths:\n" + f"      - src/{'g' * 996}\n" + f"      - src/{'g' * 400}\n" * 999
            + '  - id: sh\n    agent: shell\n    after: [p0]\n    task: >-\n      folded\n      lines\n'
            + "    run: \"printf '\\e[1m'; " + "x" * 60_000 + '"\n')
    path = lead.parent / "plan.yaml"
    path.write_text(text)
    ran = balanced(lead, "plan", str(path), "--json")
    assert ran.code == 0, ran.err[-2000:]
