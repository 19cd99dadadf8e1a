from __future__ import annotations

import subprocess
from datetime import UTC, datetime

import pytest
from pydantic import BaseModel, ValidationError

from git_balanced.errors import BalancedError
from git_balanced.models import BranchName, JobId, MachineName, PieceId, shown
from git_balanced.state.events import new_id


def refused(kind: type, value: object) -> BalancedError:
    with pytest.raises(BalancedError) as info:
        kind.of(value)
    return info.value


@pytest.mark.parametrize("good", ["a", "orders-api", "x1", "a--b", "9", "a" * 48])
def test_piece_id_good(good: str) -> None:
    pid = PieceId.of(good)
    assert pid == good and isinstance(pid, PieceId) and isinstance(pid, str)


@pytest.mark.parametrize(("bad", "rule"), [
    ("", "it is empty"),
    ("a" * 49, "it has 49 characters, more than 48"),
    ("-a", "must not start or end with -"),
    ("a-", "must not start or end with -"),
    ("Orders", 'not "O"'),
    ("a b", 'not " "'),
    ("a..b", 'not "."'),
    ("x.lock", 'not "."'),
    ("@", 'not "@"'),
    ("a/b", 'not "/"'),
    ("a\x01b", 'not "\\x01"'),
    ("-oProxyCommand", 'not "C", "P"'),
])
def test_piece_id_bad(bad: str, rule: str) -> None:
    err = refused(PieceId, bad)
    assert err.message.startswith(f"{shown(bad)} is not a piece id: "), err.message
    assert rule in err.message
    assert "a-z, 0-9 and -" in (err.hint or "")


def test_piece_id_hint_offers_the_nearest_good_id() -> None:
    assert refused(PieceId, "Orders API").hint.startswith('use "orders-api"')
    assert refused(PieceId, "---").hint.startswith("use a piece id:"), "nothing good to offer"


def test_of_refuses_what_is_not_text_and_keeps_its_own_type() -> None:
    err = refused(PieceId, 12)
    assert err.message.startswith("12 is not a piece id: it must be text")
    pid = PieceId.of("abc")
    assert PieceId.of(pid) is pid, "an already checked value passes through"


@pytest.mark.parametrize("good", ["local", "build-box", "gpu1.lan", "my_host", "Box-2", "10.0.0.7"])
def test_machine_name_good(good: str) -> None:
    assert MachineName.of(good) == good


@pytest.mark.parametrize(("bad", "rule"), [
    ("", "it is empty"),
    ("-oProxyCommand", "it must not start with -"),
    ("-oProxyCommand=touch /tmp/x", "it must not start with -"),
    ("a b", 'not " "'),
    ("a\tb", 'not "\\x09"'),
    ("a\nb", 'not "\\x0a"'),
    ("box\x7f", 'not "\\x7f"'),
    ("user@host", 'not "@"'),
    ("a/b", 'not "/"'),
    ("host;rm", 'not ";"'),
    ("bøx", 'not "ø"'),
    ("..", "it must not be only dots"),
    ("h" * 254, "more than 253"),
])
def test_machine_name_bad(bad: str, rule: str) -> None:
    err = refused(MachineName, bad)
    assert err.message.startswith(f"{shown(bad)} is not a machine name: "), err.message
    assert rule in err.message
    assert "not starting with '-'" in (err.hint or "")


GOOD_BRANCHES = ["main", "balanced/orders-api", "a@b", "@a", "a/@", "a.b", "é", "a/-b", "FETCH_HEAD",
                 "x/y/z", "refs/heads/x"]
BAD_BRANCHES = [
    ("", "it is empty"),
    ("-oProxyCommand", "must not start with -"),
    ("-", "must not start with -"),
    ("HEAD", "HEAD is not a branch name"),
    ("@", "@ alone means HEAD"),
    ("a b", 'must not contain " "'),
    ("a..b", "must not contain '..'"),
    ("x.lock", "its part \"x.lock\" must not end with '.lock'"),
    ("a.lock/b", "its part \"a.lock\" must not end with '.lock'"),
    ("a/.lock", "its part \".lock\" must not start with '.'"),
    (".a", "its part \".a\" must not start with '.'"),
    ("a/.b", "its part \".b\" must not start with '.'"),
    ("a@{b", "must not contain '@{'"),
    ("@{-1}", "must not contain '@{'"),
    ("a//b", "must not contain '//'"),
    ("/a", "must not start or end with /"),
    ("a/", "must not start or end with /"),
    ("a.", "must not end with '.'"),
    ("a~1", 'must not contain "~"'),
    ("a^", 'must not contain "^"'),
    ("a:b", 'must not contain ":"'),
    ("a?", 'must not contain "?"'),
    ("a*", 'must not contain "*"'),
    ("a[", 'must not contain "["'),
    ("a\\b", 'must not contain "\\"'),
    ("a\x01b", 'must not contain "\\x01"'),
    ("a\x7fb", 'must not contain "\\x7f"'),
]


@pytest.mark.parametrize("good", GOOD_BRANCHES)
def test_branch_name_good(good: str) -> None:
    assert BranchName.of(good) == good


@pytest.mark.parametrize(("bad", "rule"), BAD_BRANCHES)
def test_branch_name_bad(bad: str, rule: str) -> None:
    err = refused(BranchName, bad)
    assert err.message.startswith(f"{shown(bad)} is not a branch name: "), err.message
    assert rule in err.message


def test_branch_rules_agree_with_git(tmp_path) -> None:
    """Every form above gets the same verdict from `git check-ref-format --branch`, except `@`: git takes
    it as a branch but it reads as HEAD in every revision, so it is refused here on purpose."""
    disagree = []
    for name in GOOD_BRANCHES + [bad for bad, _ in BAD_BRANCHES if bad not in ("", "@")]:
        cp = subprocess.run(["git", "check-ref-format", "--branch", name], cwd=tmp_path, capture_output=True)
        ours = True
        try:
            BranchName.of(name)
        except BalancedError:
            ours = False
        if ours != (cp.returncode == 0):
            disagree.append(name)
    assert disagree == [], "BranchName and git disagree"


def test_job_id_accepts_what_new_id_makes() -> None:
    made = new_id()
    jid = JobId.of(made)
    assert jid == made and isinstance(jid, JobId)
    assert abs((jid.created() - datetime.now(tz=UTC)).total_seconds()) < 60, "the head is the creation time"


def test_job_id_reads_either_case_and_keeps_lower_case() -> None:
    assert JobId.of("01HZZZZZZZABCDE".replace("Z", "Y")) == "01hyyyyyyyabcde"


@pytest.mark.parametrize(("bad", "rule"), [
    ("", "it has 0 characters, not 15"),
    ("0123456789abcd", "it has 14 characters, not 15"),
    ("0123456789abcdef", "it has 16 characters, not 15"),
    ("0123456789abcdi", 'not "i"'),
    ("0123456789abcdu", 'not "u"'),
    ("0123456789abc-e", 'not "-"'),
    ("0123456789abc\x00e", 'not "\\x00"'),
])
def test_job_id_bad(bad: str, rule: str) -> None:
    err = refused(JobId, bad)
    assert err.message.startswith(f"{shown(bad)} is not a job id: "), err.message
    assert rule in err.message


class _Holder(BaseModel):
    piece: PieceId
    machine: MachineName | None = None


def test_types_work_as_pydantic_fields() -> None:
    held = _Holder(piece="orders-api", machine="build-box")
    assert type(held.piece) is PieceId and type(held.machine) is MachineName
    assert held.model_dump() == {"piece": "orders-api", "machine": "build-box"}
    with pytest.raises(ValidationError) as info:
        _Holder(piece="ok", machine="-oProxyCommand")
    assert '"-oProxyCommand" is not a machine name: it must not start with -' in str(info.value)


def test_shown_escapes_what_a_terminal_or_utf8_cannot_take_and_cuts_long_values() -> None:
    from git_balanced.models import shown

    assert shown("a\x00\x1b\ud800b") == '"a\\x00\\x1b\\ud800b"'
    assert shown("x" * 500) == '"' + "x" * 200 + '… (500 characters)"'
    shown("\udcff").encode("utf-8")  # always writable


@pytest.mark.parametrize(("value", "kw", "said"), [
    ("a\0b", {}, "it holds a NUL character (\\x00)"),
    ("a\ud800", {}, "it holds a lone surrogate (\\ud800), which is not a character"),
    ("a\x1bb", {}, "it holds a control character (\\x1b)"),
    ("a\nb", {"lines": False}, "it holds a control character (\\x0a); it is one line"),
    ("é" * 40, {"most": 50, "unit": "bytes"}, "it has 80 bytes, more than 50"),
    ("x" * 11, {"most": 10}, "it has 11 characters, more than 10"),
    ("sh -c '\x1b\x7f'\n", {"controls": True}, None),
    ("\0", {"controls": True}, "it holds a NUL character (\\x00)"),
    ("tab\tand\nlines\r\n", {}, None),
    ("🚀 ok", {}, None),
])
def test_text_problem_names_what_is_wrong(value: str, kw: dict[str, object], said: str | None) -> None:
    from git_balanced.models import text_problem

    got = text_problem(value, **kw)  # type: ignore[arg-type]
    assert got == said if said is None else (got or "").startswith(said), got


def test_toml_nesting_counts_brackets_outside_strings_and_comments() -> None:
    from git_balanced.models import nested_deeper, toml_nesting

    many = "[" * 25
    text = f'a = "{many}"\n# {many}\nb = \'{many}\'\nc = """\n{many}\n"""\n[[t]]\n[u]\nd = [[1], [2]]\n'
    assert toml_nesting(text) is None
    assert toml_nesting("\n\nx = " + "[" * 21 + "]" * 21) == 3
    assert toml_nesting("x = " + "{a = " * 21 + "1" + "}" * 21) == 1
    assert nested_deeper({"a": {"b": [1, {"c": 2}]}}) is None
    deep: dict[str, object] = {}
    inner = deep
    for _ in range(25):
        inner["k"] = {}
        inner = inner["k"]  # type: ignore[assignment]
    assert nested_deeper(deep) == ".".join(["k"] * 21)
