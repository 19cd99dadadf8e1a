"""One bad ref is one bad ref: junk of every kind under refs/balanced/ (an event.json of any shape, size or depth,
objects that are not event commits) is named once, set aside, listed and removed by the doctor, neither merged
nor pushed by sync, while a healthy plan beside it runs and lands."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from git_balanced.git import Repo
from git_balanced.state.events import MAX_DEPTH, MAX_EVENT_BYTES, Malformed, parse_event
from tests.support.builders import git
from tests.support.cli import Ran, balanced
from tests.support.plans import board, engine, inbox_text, lead_repo, piece, plan

GOOD = {"event": "placed", "state": "queued", "lamport": 1, "node": "0a1b2c3d", "time": 1795937940.5}


def _with(**fields: object) -> bytes:
    return json.dumps({**GOOD, **fields}).encode()


def _without(key: str) -> bytes:
    return json.dumps({k: v for k, v in GOOD.items() if k != key}).encode()


def _raw(text: str) -> bytes:
    """GOOD with `text` put in place of `"time": ...`: for what json.dumps would never write."""
    return json.dumps(GOOD).encode().replace(b'"time": 1795937940.5', text.encode())


# Each an event.json a hand, a tool or another clone could leave; every one must make its ref malformed.
SHAPES: dict[str, bytes] = {
    "data-list": _with(data=[1]),
    "data-string": _with(data="x"),
    "data-number": _with(data=5),
    "data-true": _with(data=True),
    "lamport-1e400": _raw('"time": 1.5, "lamport": 1e400'),
    "lamport-negative": _with(lamport=-1),
    "lamport-string": _with(lamport="3"),
    "lamport-float": _with(lamport=1.5),
    "lamport-2^64": _with(lamport=2 ** 64),
    "lamport-bool": _with(lamport=True),
    "lamport-null": _with(lamport=None),
    "lamport-5000-digits": _raw('"time": 1.5, "lamport": ' + "9" * 5000),
    "time-NaN": _raw('"time": NaN'),
    "time-Infinity": _raw('"time": Infinity'),
    "time--Infinity": _raw('"time": -Infinity'),
    "time-string": _with(time="now"),
    "time-1e300": _with(time=1e300),
    "time-negative": _with(time=-5),
    "event-missing": _without("event"),
    "event-number": _with(event=5),
    "event-empty": _with(event=""),
    "event-list": _with(event=["placed"]),
    "state-number": _with(state=5),
    "state-object": _with(state={}),
    "node-number": _with(node=5),
    "node-huge": _with(node="n" * 5000),
    "body-list": b"[1, 2]",
    "body-string": b'"placed"',
    "body-null": b"null",
    "not-json": b"{",
    "empty": b"",
    "trailing-junk": _with() + b" junk",
    "not-utf8": b'{"event": "placed\xff\xfe"}',
    "lone-surrogate": _raw('"time": 1.5, "data": {"text": "\\ud800"}'),
    "lone-surrogate-key": _raw('"time": 1.5, "data": {"\\udfff": 1}'),
    "encoded-surrogate": b'{"event": "placed", "data": {"text": "\xed\xa0\x80"}}',
    "nested-past-the-limit": _with(data={"a": json.loads("[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5))}),
    "nested-100000": _raw('"time": 1.5, "data": {"a": ' + "[" * 100_000 + "]" * 100_000 + "}"),
    "huge": _with(data={"text": "x" * (MAX_EVENT_BYTES + 10)}),
    "job-attempt-string": _with(data={"attempt": "the second"}),
    "job-in_the_way-number": _with(data={"in_the_way": 5}),
    "job-dismissed-string": _with(data={"dismissed": "yes"}),
    "job-cost-string": _with(data={"cost_usd": "free"}),
    "job-claim-node-object": _with(event="claimed", data={"node": {"a": 1}}),
}
ENVELOPES = [name for name in SHAPES if not name.startswith("job-")]  # the rest are well-formed events


def _blob(repo: Path, data: bytes) -> str:
    cp = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, input=data, capture_output=True, check=True)
    return cp.stdout.decode().strip()


def _event_commit(repo: Path, data: bytes, parent: str | None = None) -> str:
    tree = git(repo, "mktree", input=f"100644 blob {_blob(repo, data)}\tevent.json\n")
    return git(repo, "commit-tree", "-m", "junk", *(["-p", parent] if parent else []), tree)


def _tree_commit(repo: Path, lines: str) -> str:
    return git(repo, "commit-tree", "-m", "junk", git(repo, "mktree", input=lines))


def _good_then_bad(repo: Path) -> str:
    return _event_commit(repo, _with(data=[1], lamport=2), _event_commit(repo, _with()))


def _folder(repo: Path) -> str:
    return git(repo, "mktree", input=f"100644 blob {_blob(repo, _with())}\tx\n")


def _tag(repo: Path) -> str:
    target = _event_commit(repo, _with())
    return git(repo, "mktag", input=f"object {target}\ntype commit\ntag junk\ntagger A <a@b> 0 +0000\n\njunk\n")


# Objects that are not event commits at all.
OBJECTS: dict[str, Callable[[Path], str]] = {
    "a-blob": lambda r: _blob(r, b"junk\n"),
    "a-tree": lambda r: git(r, "mktree", input=f"100644 blob {_blob(r, _with())}\tevent.json\n"),
    "a-tag": _tag,
    "no-event-json": lambda r: _tree_commit(r, f"100644 blob {_blob(r, b'x')}\tREADME\n"),
    "empty-tree": lambda r: _tree_commit(r, ""),
    "event-json-and-more": lambda r: _tree_commit(
        r, f"100644 blob {_blob(r, _with())}\tevent.json\n100644 blob {_blob(r, b'x')}\textra\n"),
    "event-json-a-folder": lambda r: _tree_commit(r, f"040000 tree {_folder(r)}\tevent.json\n"),
    "event-json-a-symlink": lambda r: _tree_commit(r, f"120000 blob {_blob(r, b'elsewhere')}\tevent.json\n"),
    "good-event-then-bad": _good_then_bad,
}

CASES = [(name, lambda r, raw=raw: _event_commit(r, raw)) for name, raw in SHAPES.items()] + list(OBJECTS.items())


@pytest.mark.parametrize("name", ENVELOPES)
def test_the_one_reader_of_event_json_refuses_each_shape_with_why(name: str) -> None:
    with pytest.raises(Malformed) as why:
        parse_event(SHAPES[name])
    assert str(why.value).strip(), "it says why"


def test_the_one_reader_takes_what_git_balanced_writes() -> None:
    ev = parse_event(_with(data={"text": "ünïcödé ✓ \U0001f600", "nested": [[{"a": 1}]]}), sha="abc")
    assert (ev.event, ev.state, ev.lamport, ev.node, ev.sha) == ("placed", "queued", 1, "0a1b2c3d", "abc")
    assert ev.data["text"] == "ünïcödé ✓ \U0001f600"
    assert parse_event(_raw('"time": 1.5, "data": {"t": "\\ud83d\\ude00"}')).data == {"t": "\U0001f600"}, \
        "a surrogate pair is a character"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A lead with a one-piece plan started and a remote to sync with: copied for each case."""
    tmp = tmp_path_factory.mktemp("template")
    repo = lead_repo(tmp)
    assert plan(repo, [piece("alpha", "echo a > src/alpha.txt")], "--start").code == 0
    git(tmp, "init", "-q", "--bare", "origin.git")
    git(repo, "remote", "add", "origin", str(tmp / "origin.git"))
    return tmp


def _copy(template: Path, tmp_path: Path) -> Path:
    """The template's lead, approved again: approvals live in this test's own XDG folders."""
    shutil.copytree(template, tmp_path / "t", symlinks=True)
    repo = tmp_path / "t" / "lead"
    git(repo, "remote", "set-url", "origin", str(tmp_path / "t" / "origin.git"))
    assert balanced(repo, "allow", "--yes").code == 0
    return repo


def _ok(r: Ran, what: str) -> None:
    assert r.code in (0, 1), f"{what} exits 0 or 1, not {r.code}:\n{r.out}\n{r.err}"
    assert "Traceback" not in r.err + r.out, f"{what}: no traceback\n{r.err}"


def _refs(repo: Path, prefix: str) -> list[str]:
    return git(repo, "for-each-ref", "--format=%(refname)", prefix).split()


def test_bad_refs_of_every_shape_are_each_named_once_set_aside_and_the_plan_lands(template: Path,
                                                                                   tmp_path: Path) -> None:
    """Every case at once, each under refs of its own: each is named once by the reader that meets it, set aside,
    listed and removed by the doctor, neither pushed nor merged by sync, and the healthy plan beside them lands.
    (The one reader of event.json refuses each shape on its own, above; one bad ref never hides another here.)"""
    repo = _copy(template, tmp_path)
    junk = {name: make(repo) for name, make in CASES}
    number = {name: f"{i:05d}" for i, name in enumerate(junk)}
    bad = {name: f"refs/balanced/jobs/1m8k3wc5ta{number[name]}" for name in junk}
    for name, tip in junk.items():
        git(repo, "update-ref", bad[name], tip)

    shown = balanced(repo, "board")
    _ok(shown, "board")
    for name, ref in bad.items():
        assert shown.err.count(f"{ref} is malformed (") == 1, (name, shown.err)
    assert _refs(repo, "refs/balanced/jobs/1m8k3wc5ta") == [], "each set aside by the reader that met it"
    assert _refs(repo, "refs/balanced/broken/") == sorted(r.replace("/balanced/", "/balanced/broken/")
                                                          for r in bad.values())

    second = {name: f"refs/balanced/{'jobs' if name.startswith('job-') else 'plans'}/1m8k3wc5tb{number[name]}"
              for name in junk}  # and one the engine meets, of each
    for name, tip in junk.items():
        git(repo, "update-ref", second[name], tip)
    ran = engine(repo, "--until-idle")
    _ok(ran, "engine")
    for name, ref in second.items():
        assert ran.err.count(f"{ref} is malformed (") == 1, (name, ran.err)
    assert {j["piece"]: j["state"] for j in board(repo)["jobs"]} == {"alpha": "landed"}, "the plan lands"  # type: ignore[index]
    assert (repo / "src" / "alpha.txt").read_text() == "a\n"
    heard = inbox_text(repo)
    assert all(heard.count(f"{ref} is malformed") == 1 for ref in bad.values()), "the lead hears of each once"
    assert engine(repo, "--once").code == 0
    assert inbox_text(repo) == heard, "and not again"

    listed = balanced(repo, "doctor", "--json")
    _ok(listed, "doctor")
    rows = {r["ref"]: r for r in json.loads(listed.out)["malformed_refs"]}
    aside = {ref.replace("/balanced/", "/balanced/broken/"): junk[name]
             for refs_ in (bad, second) for name, ref in refs_.items()}
    assert set(rows) == set(aside)
    assert all(r["tip"] == aside[ref] and r["why"].startswith("set aside from") for ref, r in rows.items()), rows
    fixed = balanced(repo, "doctor", "--fix", "--yes")
    _ok(fixed, "doctor --fix")
    assert fixed.code == 0
    for ref, tip in aside.items():
        assert f"git update-ref {ref} {tip}" in fixed.out, (ref, fixed.out)
    assert _refs(repo, "refs/balanced/broken/") == []

    # Sync: junk here is not pushed, and junk the remote holds is not merged; the rest goes both ways.
    theirs = {name: f"refs/balanced/jobs/1m8k3wc5tc{number[name]}" for name in junk}
    for name, tip in junk.items():
        git(repo, "update-ref", bad[name], tip)
    git(repo, "push", "-q", "origin", *(f"{junk[name]}:{theirs[name]}" for name in junk))
    synced = balanced(repo, "sync")
    _ok(synced, "sync")
    remote = tmp_path / "t" / "origin.git"
    pushed = _refs(remote, "refs/balanced/")
    for name in junk:
        assert f"{bad[name]} is malformed" in synced.err and f"{theirs[name]} is malformed" in synced.err, name
        assert bad[name] not in pushed, f"{name}: not pushed"
        assert _refs(repo, theirs[name]) == [], f"{name}: not merged"
    assert _refs(remote, "refs/balanced/jobs/") and _refs(remote, "refs/balanced/plans/"), "the rest is"
    assert _refs(remote, "refs/balanced/broken/") == [], "what is set aside stays here"
    _ok(balanced(repo, "board"), "board after sync")


def test_a_missing_object_and_unknown_kinds_are_listed_and_a_worker_lands(template: Path, tmp_path: Path) -> None:
    repo = _copy(template, tmp_path)
    missing = "refs/balanced/jobs/1m8k3wc5tbfgone"
    (repo / ".git" / missing).parent.mkdir(parents=True, exist_ok=True)
    (repo / ".git" / missing).write_text("1" * 40 + "\n")  # what a half-copied repository can leave
    git(repo, "update-ref", "refs/balanced/things/x", _blob(repo, b"junk"))
    git(repo, "update-ref", "refs/balanced/loose", _event_commit(repo, _with()))
    git(repo, "update-ref", "refs/balanced/jobs/1m8k3wc5tbfjunk", _event_commit(repo, _with(data=[1])))
    said = ""
    for args in (["worker", "w1", "--run", "echo w > src/w.txt"], ["plans"], ["log"], ["inbox"]):
        r = balanced(repo, *args)
        _ok(r, " ".join(args))
        said += r.err
    ran = engine(repo, "--until-idle")
    _ok(ran, "engine")
    said += ran.err
    assert said.count("refs/balanced/jobs/1m8k3wc5tbfjunk is malformed") == 1, said
    assert f"{missing} is malformed (it points at 111111111111, which is not in the repository); it is removed, " \
        "as there is nothing to keep" in said, said
    landed = {j["piece"]: j["state"] for j in board(repo)["jobs"]}  # type: ignore[index]
    assert landed["alpha"] == "landed" and list(landed.values()).count("landed") == 2, landed
    assert (repo / "src" / "w.txt").read_text() == "w\n", "the worker's piece landed too"
    listed = balanced(repo, "doctor")
    assert listed.code == 1 and "refs/balanced/things/x: it points at a blob, not a commit" in listed.out, listed
    assert "refs/balanced/loose: it names no kind of state" in listed.out
    fixed = balanced(repo, "doctor", "--fix", "--yes")
    _ok(fixed, "doctor --fix")
    assert _refs(repo, "refs/balanced/things/") == _refs(repo, "refs/balanced/broken/") == []
    assert _refs(repo, "refs/balanced/loose") == []


def test_a_wrong_field_the_board_never_shows_is_set_aside_by_the_engine(template: Path, tmp_path: Path) -> None:
    repo = _copy(template, tmp_path)
    r = Repo.discover(repo)
    jid = next(iter(r.list_refs("refs/balanced/plans/"))).rsplit("/", 1)[1]
    git(repo, "update-ref", "refs/balanced/jobs/1m8k3wc5tbfokay",
        _event_commit(repo, _with(data={"plan": jid, "piece": "alpha", "tokens": "many"})))
    ran = engine(repo, "--until-idle")
    _ok(ran, "engine")
    assert "refs/balanced/jobs/1m8k3wc5tbfokay is malformed (its field 'tokens' is str 'many'" in ran.err
    assert {j["piece"]: j["state"] for j in board(repo)["jobs"]} == {"alpha": "landed"}  # type: ignore[index]


OTHER_KINDS = {
    "schedule-when-number": ("refs/balanced/schedules/s1", _with(event="added", state="active",
                                                                 data={"when": 5, "text": "hi", "lead": "main"})),
    "schedule-data-list": ("refs/balanced/schedules/s2", _with(data=[1])),
    "question-text-object": ("refs/balanced/questions/1m8k3wc5tbfq01", _with(event="asked", data={"text": {}})),
    "inbox-text-list": ("refs/balanced/inbox/main", _with(event="info", data={"text": ["x"]})),
    "inbox-lamport-1e400": ("refs/balanced/inbox/main", _raw('"time": 1.5, "lamport": 1e400')),
    "now-data-number": ("refs/balanced/now/1m8k3wc5tbfn01", _with(data=7)),
    "now-attachments-number": ("refs/balanced/now/1m8k3wc5tbfn02", _with(event="put", state="waiting", data={
        "kind": "review", "lead": "main", "summary": "done", "attachments": 5})),
    "corrections-nested": ("refs/balanced/corrections/main", _raw('"time": 1.5, "data": ' + "[" * 5000 + "]" * 5000)),
}


# Two leads' worth: the two junk inboxes cannot both be refs/balanced/inbox/main in one.
KIND_GROUPS = [[name for name in OTHER_KINDS if name != "inbox-lamport-1e400"], ["inbox-lamport-1e400"]]


@pytest.mark.parametrize("names", KIND_GROUPS, ids=["most-kinds", "inbox-lamport-1e400"])
def test_a_bad_ref_of_any_other_kind_is_set_aside_and_the_plan_lands(names: list[str], template: Path,
                                                                     tmp_path: Path) -> None:
    repo = _copy(template, tmp_path)
    for name in names:
        ref, raw = OTHER_KINDS[name]
        git(repo, "update-ref", ref, _event_commit(repo, raw))
    git(repo, "update-ref", "refs/balanced/nodes/0badbeat", _blob(repo, b"not a heartbeat"))
    shown = balanced(repo, "board")
    _ok(shown, "board")
    ran = engine(repo, "--until-idle")
    _ok(ran, "engine")
    said = shown.err + ran.err
    for name in names:
        ref = OTHER_KINDS[name][0]
        assert said.count(f"{ref} is malformed (") + said.count(f"{ref} was malformed (") == 1, (name, said)
        assert _refs(repo, ref) == [] or ref.endswith("inbox/main"), f"{name}: set aside (the inbox starts again)"
        assert _refs(repo, "refs/balanced/broken/" + ref[len("refs/balanced/"):]), name
    assert {j["piece"]: j["state"] for j in board(repo)["jobs"]} == {"alpha": "landed"}  # type: ignore[index]
    _ok(balanced(repo, "schedule", "list"), "schedule list")
    _ok(balanced(repo, "inbox"), "inbox")
    fixed = balanced(repo, "doctor", "--fix", "--yes")
    _ok(fixed, "doctor --fix")
    assert _refs(repo, "refs/balanced/broken/") == []


def test_a_cache_written_before_shapes_were_checked_is_dropped_once(tmp_path: Path) -> None:
    from git_balanced import process
    from git_balanced.state import cache
    from tests.support.builders import make_repo

    path = make_repo(tmp_path / "r")
    tip = _event_commit(path, _with(data={"attempt": "the second"}))
    ref = "refs/balanced/jobs/1m8k3wc5tbfold"
    git(path, "update-ref", ref, tip)
    folder = path / ".git" / "balanced" / "cache"
    folder.mkdir(parents=True)
    # As an older version folded it: no check of the field's type, and no mark of the cache's format.
    (folder / "jobs.json").write_text(json.dumps({ref: [tip, {"state": "queued", "fields": {"attempt": "the second"},
                                                              "created": 1.5, "updated": 1.5, "lamport": 1}]}))
    process.forget()  # as a new process: the cache's folder and files looked at afresh
    assert cache.read_all(Repo.discover(path), "jobs") == {}, "the old fold is not trusted"
    assert git(path, "for-each-ref", "--format=%(refname)", "refs/balanced/jobs/") == "", "the ref is set aside"
    assert (folder / "format").read_text().strip() == cache.FORMAT


def test_junk_where_set_aside_refs_go_is_listed_and_the_rest_is_still_skipped(template: Path, tmp_path: Path) -> None:
    repo = _copy(template, tmp_path)
    git(repo, "update-ref", "refs/balanced/broken", _blob(repo, b"junk"))  # so nothing can be set aside
    bad = "refs/balanced/jobs/1m8k3wc5tbfjunk"
    git(repo, "update-ref", bad, _event_commit(repo, _with(data=[1])))
    ran = engine(repo, "--until-idle")
    _ok(ran, "engine")
    assert f"{bad} is malformed (its event.json's data is list [1], not an object); it is skipped" in ran.err, ran.err
    assert {j["piece"]: j["state"] for j in board(repo)["jobs"]} == {"alpha": "landed"}  # type: ignore[index]
    listed = balanced(repo, "doctor")
    assert "refs/balanced/broken: it names no kind of state" in listed.out and f"{bad}: its event.json" in listed.out
    fixed = balanced(repo, "doctor", "--fix", "--yes")
    _ok(fixed, "doctor --fix")
    assert _refs(repo, "refs/balanced/broken") == _refs(repo, bad) == []


def test_a_reader_of_one_ref_by_name_ends_in_one_message(tmp_path: Path) -> None:
    from tests.support.builders import make_repo

    path = make_repo(tmp_path / "r")
    qid = "1m8k3wc5tbfq01"
    git(path, "update-ref", f"refs/balanced/questions/{qid}", _event_commit(path, _with(data=[1])))
    r = balanced(path, "answer", qid, "yes")
    assert r.code == 1 and "Traceback" not in r.err, r
    assert "malformed" in r.err and "git balanced doctor" in r.err, r.err


def test_an_event_its_readers_would_refuse_is_not_written(tmp_path: Path) -> None:
    from git_balanced.errors import BalancedError
    from git_balanced.state import refs
    from tests.support.builders import make_repo

    repo = Repo.discover(make_repo(tmp_path / "r"))
    for data in ({"cost_usd": float("nan")}, {"text": "x" * (MAX_EVENT_BYTES + 1)}, {"text": "\ud800"}):
        with pytest.raises(BalancedError) as err:
            refs.append(repo, "refs/balanced/jobs/1m8k3wc5tbfj01", "placed", "p", data)
        assert "event was not written" in err.value.message, err.value.message
    assert repo.read_ref("refs/balanced/jobs/1m8k3wc5tbfj01") is None, "no ref moved"
