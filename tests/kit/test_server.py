"""`git balanced mcp` driven by the mcp SDK's own client over stdio: one server process for the module, a
real lead repository, every tool with its schema, its structured result and its refusals in the CLI's words."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from git_balanced.channel import questions
from git_balanced.git import Repo
from git_balanced.kit.spoken import for_tools
from tests.support.builders import make_repo
from tests.support.cli import Ran, balanced
from tests.support.wait import wait_until

TOOLS = {"plan", "start", "worker", "board", "inbox", "answer", "allow", "deny", "pass", "land", "stop", "retry",
         "show", "gc", "logs", "tell", "machines", "schedule_add", "schedule_list", "schedule_rm", "put_to_you", "idea"}


HINTS = {"read_only_hint", "destructive_hint", "idempotent_hint", "open_world_hint"}


def _descriptions(value: Any) -> Iterator[str]:
    """Every description in a tool's listing: its own, its arguments' and its result's fields'."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "description" and isinstance(v, str):
                yield v
            else:
                yield from _descriptions(v)
    elif isinstance(value, list):
        for v in value:
            yield from _descriptions(v)


@dataclass
class Session:
    """A client session on its own event loop thread, called from the (synchronous) tests."""

    loop: asyncio.AbstractEventLoop
    client: Client
    repo: Path
    env: dict[str, str]

    def run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=120)

    def call(self, name: str, args: dict[str, Any] | None = None) -> Any:
        return self.run(self.client.call_tool(name, args or {}))

    def ok(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        r = self.call(name, args)
        assert not r.is_error, (name, r.content)
        assert isinstance(r.structured_content, dict), "a structured result"
        return r.structured_content

    def refused(self, name: str, args: dict[str, Any] | None = None) -> str:
        r = self.call(name, args)
        assert r.is_error, (name, r.structured_content)
        return "\n".join(c.text for c in r.content)

    def cli(self, *args: str) -> Ran:
        """The same command as `git balanced` runs it (in this process), in the server's environment."""
        return balanced(self.repo, *args, env=self.env)


def _sealed_env(home: Path) -> dict[str, str]:
    """What the autouse seal gives a test, for a server that outlives one test."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "BALANCED_", "XDG_"))}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_STATE_HOME=str(home / ".state"),
               XDG_CACHE_HOME=str(home / ".cache"), XDG_DATA_HOME=str(home / ".share"), GIT_CONFIG_NOSYSTEM="1",
               GIT_AUTHOR_NAME="Ada Lead", GIT_AUTHOR_EMAIL="ada@example.com", GIT_COMMITTER_NAME="Ada Lead",
               GIT_COMMITTER_EMAIL="ada@example.com", GIT_TEMPLATE_DIR="", GIT_EDITOR="false",
               GIT_TERMINAL_PROMPT="0", GIT_BALANCED_SSH_CONFIG=str(home / ".ssh" / "config"),
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n")
    (home / ".ssh").mkdir()
    (home / ".ssh" / "config").write_text("")
    return env


@pytest.fixture(scope="module")
def mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    home = tmp_path_factory.mktemp("mcp-home")
    env = _sealed_env(home)
    settings = '[worktree]\ncheck = "! grep -rq BAD src"\n[balanced]\nagent = "shell"\n'
    old = dict(os.environ)
    os.environ.update(env)
    try:
        repo = make_repo(tmp_path_factory.mktemp("mcp") / "lead", {"src/base.txt": "ok\n",
                                                                  ".magnum/settings.toml": settings})
    finally:
        os.environ.clear()
        os.environ.update(old)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    params = StdioServerParameters(command=sys.executable, args=["-m", "git_balanced.cli", "mcp"], env=env,
                                   cwd=str(repo))
    ready: Future[Client] = Future()
    done = asyncio.Event()

    async def hold() -> None:
        """Enter and leave the session in one task, as the SDK's cancel scopes need."""
        async with Client(params) as client:
            ready.set_result(client)
            await done.wait()

    held = asyncio.run_coroutine_threadsafe(hold(), loop)
    session = Session(loop, ready.result(timeout=60), repo, env)
    assert session.cli("allow", "--yes").code == 0
    try:
        yield session
    finally:
        session.cli("engine", "--stop")
        loop.call_soon_threadsafe(done.set)
        held.result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)


def test_every_tool_is_listed_with_its_schemas_and_none_ships(mcp: Session) -> None:
    listed = {t.name: t for t in mcp.run(mcp.client.list_tools()).tools}
    assert set(listed) == TOOLS, "the lead's tools, and no ship tool: nothing is pushed unless the person says so"
    for name, t in listed.items():
        assert t.input_schema["type"] == "object", name
        assert t.output_schema and t.output_schema["type"] == "object", f"{name} has a structured result"
        assert t.output_schema.get("properties"), f"{name}'s output schema describes its result"
        assert t.description, name
        assert t.title and t.annotations.title == t.title, f"{name} has a title"
        hints = t.annotations.model_dump(exclude={"title"})
        assert set(hints) >= HINTS and all(isinstance(hints[h], bool) for h in HINTS), f"{name} says all four: {hints}"
        described = [d for d in _descriptions(t.model_dump(by_alias=True))]
        assert described and all(d == d.strip() and "\n " not in d for d in described), \
            f"{name}: no docstring indentation in what a client shows"
    piece = listed["plan"].input_schema["$defs"]["Piece"]
    assert {"id", "task", "after", "paths", "machine", "agent", "run", "size"} <= set(piece["properties"])
    assert set(listed["plan"].input_schema["required"]) == {"task", "pieces"}
    assert listed["deny"].input_schema["required"] == ["id", "reason"]


def test_plan_says_where_each_piece_goes_and_start_lands_them(mcp: Session) -> None:
    pieces = [{"id": "one", "task": "Write one.", "agent": "shell", "run": "echo 1 > src/one.txt"},
              {"id": "two", "task": "Write two.", "agent": "shell", "run": "echo 2 > src/two.txt",
               "after": ["one"], "paths": ["src/two.txt"]}]
    got = mcp.ok("plan", {"task": "Two files", "pieces": pieces, "start": False})
    assert got["started"] is False and got["engine"] is None
    by = {p["id"]: p for p in got["pieces"]}
    assert by["one"]["machine"] == "local" and "local" in by["one"]["why"]
    assert by["one"]["branch"] == "balanced/one" and by["two"]["after"] == ["one"]
    assert "one" in by["two"]["waits"], by["two"]
    board = mcp.ok("board")
    assert {n["piece"] for n in board["next"]} == {"one", "two"}, "stored, waiting for a start"
    started = mcp.ok("start", {"plan": got["plan"]})
    assert started["plan"] == got["plan"] and "pid" in started["engine"]

    def landed() -> bool:  # and the plan done, so its last message is in the inbox before it is read
        now = mcp.ok("board")
        return {r["piece"]: r["state"] for r in now["jobs"]} == {"one": "landed", "two": "landed"} and \
            [p["state"] for p in now["plans"]] == ["done"]

    wait_until(landed, 90, "both pieces to land", said=lambda: mcp.ok("board"))
    assert (mcp.repo / "src" / "two.txt").read_text() == "2\n"
    texts: list[str] = []

    def heard_all() -> bool:  # the plan's last word ("… is done") may come a moment after the landing
        heard = mcp.ok("inbox")
        assert heard["count"] == len(heard["messages"])
        texts.extend(m["text"] for m in heard["messages"])
        return any("is done" in t for t in texts)

    wait_until(heard_all, 30, "the plan's end in the inbox", said=lambda: texts)
    assert any("landed in main" in t for t in texts), texts
    assert len(texts) == len(set(texts)), "each message once"
    assert "two started on local; it waited: one landed" in texts, texts
    assert mcp.ok("inbox")["count"] == 0, "only what came since the last call"


def test_questions_are_answered_allowed_denied_and_passed(mcp: Session) -> None:
    repo = Repo.discover(str(mcp.repo))
    # A worker that waits while it is asked: the engine closes the questions of a worker that no longer runs.
    mcp.ok("worker", {"task": "Wait to be asked", "run": "sleep 60"})
    job = wait_until(lambda: next((r["id"] for r in mcp.ok("board")["jobs"] if r["piece"] == "wait-to-be-asked"
                                   and r["state"] == "running"), None), 60, "the worker to run")
    q1 = questions.ask(repo, job, "Which port?", lead_branch="main")
    q2 = questions.ask(repo, job, "rm -rf build", kind="command", tool="Bash", lead_branch="main")
    q3 = questions.ask(repo, job, "curl example.com", kind="command", tool="Bash", lead_branch="main")
    q4 = questions.ask(repo, job, "Which colour?", lead_branch="main")
    assert mcp.ok("answer", {"id": q1, "text": "8080"})["answer"] == "8080"
    assert mcp.ok("allow", {"id": q2})["decision"] == "allow"
    denied = mcp.ok("deny", {"id": q3, "reason": "no network"})
    assert denied["decision"] == "deny" and "no network" in denied["answer"]
    assert mcp.ok("pass", {"id": q4})["state"] == "passed"
    assert any(q4 in json.dumps(r) for r in mcp.ok("board")["now"]), "a passed question waits under Now"
    late = mcp.refused("answer", {"id": q1, "text": "9090"})
    assert "error: Too late" in late and "hint: the first answer counts." in late
    assert "error: Give an answer" in mcp.refused("answer", {"id": q4, "text": "  "})
    mcp.ok("stop", {"job": job})


def test_schedules_machines_stop_retry_and_worker(mcp: Session) -> None:
    added = mcp.ok("schedule_add", {"when": "weekdays 07:00", "text": "Sum up what landed"})
    assert added["name"] == "s1" and added["first"]
    assert [s["name"] for s in mcp.ok("schedule_list")["schedules"]] == ["s1"]
    assert mcp.ok("schedule_rm", {"name": "s1"})["state"] == "removed"
    assert mcp.ok("schedule_list")["schedules"] == []
    assert mcp.ok("machines")["machines"][0]["name"] == "local"
    w = mcp.ok("worker", {"task": "Wait a while", "run": "sleep 60"})
    assert w["machine"] == "local" and w["branch"] == "balanced/wait-a-while"
    job = wait_until(lambda: next((r for r in mcp.ok("board")["jobs"] if r["piece"] == "wait-a-while"
                                   and r["state"] == "running"), None), 60, "the worker to run")
    stopped = mcp.ok("stop", {"job": job["id"]})
    assert stopped["state"] == "stopped" and stopped["piece"] == "wait-a-while"
    again = mcp.ok("retry", {"job": job["id"]})
    assert again["attempt"] == 2 and again["new_job"] != job["id"]
    mcp.ok("stop", {"job": again["new_job"]})


@pytest.mark.parametrize(("tool", "args", "cli"), [
    ("stop", {"job": "nope"}, ["stop", "nope"]),
    ("retry", {"job": "nope"}, ["retry", "nope"]),
    ("answer", {"id": "qnope", "text": "yes"}, ["answer", "qnope", "yes"]),
    ("allow", {"id": "qnope"}, ["answer", "qnope", "--allow"]),
    ("deny", {"id": "qnope", "reason": "no"}, ["answer", "qnope", "--deny", "no"]),
    ("pass", {"id": "qnope"}, ["pass", "qnope"]),
    ("start", {"plan": "zzz"}, ["start", "zzz"]),
    ("worker", {"task": " "}, ["worker", " "]),
    ("worker", {"task": "x", "agent": "claude", "run": "true"}, ["worker", "x", "--agent", "claude", "--run", "true"]),
    ("land", {"names": ["no-such-branch"]}, ["land", "no-such-branch"]),
    ("schedule_add", {"when": "sometimes", "text": "x"}, ["schedule", "add", "sometimes", "x"]),
    ("schedule_rm", {"name": "s9"}, ["schedule", "rm", "s9"]),
    ("gc", {"older_than": -1}, ["gc", "--older-than", "-1"]),
])
def test_a_refusal_is_the_clis_message_and_hint(mcp: Session, tool: str, args: dict[str, Any],
                                                cli: list[str]) -> None:
    said = mcp.refused(tool, args)
    ran = mcp.cli(*cli)
    assert ran.code in (1, 2), ran
    assert ran.err.strip().startswith("error: ")
    assert for_tools(ran.err.strip()) in said, \
        f"the tool says what `git balanced {' '.join(cli)}` says, naming tools:\n{said}\n{ran.err}"
    assert "git balanced board" not in said and "git balanced schedule list" not in said, said


def test_a_plan_file_error_and_bad_arguments_are_refused(mcp: Session) -> None:
    said = mcp.refused("plan", {"task": "t", "pieces": [{"id": "Bad Id", "task": "x"}], "start": False})
    assert "error: " in said and "Bad Id" in said
    assert "pieces" in mcp.refused("plan", {"task": "t"}), "the schema requires pieces"
    assert "Unknown tool" in mcp.refused("ship"), "there is no ship tool"


def test_put_to_you_and_idea_make_rows_under_now(mcp: Session) -> None:
    outside = mcp.repo.parent / "screen.png"
    outside.write_bytes(b"\x89PNG fake")
    said = mcp.refused("put_to_you", {"summary": "x", "attachments": [str(outside)]})
    assert f"error: The attachment {outside} is not in a place attachments come from" in said, said
    shot = mcp.repo / "screen.png"  # from the working tree
    shot.write_bytes(b"\x89PNG fake")
    try:
        row = mcp.ok("put_to_you", {"summary": "alpha and beta landed; both files are there.",
                                    "attachments": [str(shot)]})
    finally:
        shot.unlink()
    assert row["kind"] == "review" and row["state"] == "waiting" and row["id"].startswith("r")
    assert [a["name"] for a in row["attachments"]] == ["screen.png"]
    assert row["check"]["state"], "the check was run again on the branch"
    idea = mcp.ok("idea", {"text": "Add a README section on src/."})
    assert idea["kind"] == "idea" and idea["state"] == "waiting"
    assert "error: Putting work to you needs a summary" in mcp.refused("put_to_you", {"summary": " "})
    missing = mcp.refused("put_to_you", {"summary": "x", "attachments": ["nope.png"]})
    assert "error: The attachment nope.png is not a file here." in missing and "hint: " in missing
