"""The lead's verbs are declared once (kit/verbs.py): the MCP server's tools and the command line's commands are
both made from the declarations, so they agree, and a new verb is one declaration."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import typing
from typing import Any

import click
import pytest
from click.testing import CliRunner
from mcp import Client

from git_balanced import cli as cli_module
from git_balanced.cli import cli, command_of
from git_balanced.kit import tools, verbs
from git_balanced.kit.results import RESULTS
from git_balanced.kit.server import build
from git_balanced.kit.verbs import VERBS, Arg, Face, Verb

FACED = [v for v in VERBS if v.cli is not None]


def _listed(server_verbs: tuple[Verb, ...] = VERBS) -> dict[str, Any]:
    return {t.name: t for t in asyncio.run(build(server_verbs).list_tools())}


def _command(words: tuple[str, ...], root: click.Group = cli) -> click.Command:
    found: click.Command = root
    for word in words:
        assert isinstance(found, click.Group), f"{words}: {found.name} is not a group"
        found = found.commands[word]
    return found


def test_every_verb_is_a_tool_and_each_verb_with_a_face_a_command_with_the_same_arguments() -> None:
    listed = _listed()
    assert list(listed) == [v.name for v in VERBS], "a tool for every verb, in the declared order"
    for v in VERBS:
        schema = listed[v.name].input_schema
        assert list(schema["properties"]) == [a.name for a in v.args], v.name
        assert set(schema.get("required", [])) == {a.name for a in v.args if a.required}, v.name
        assert listed[v.name].title == v.title and listed[v.name].description == v.doc, v.name
        assert v.title[0].isupper() and v.title.endswith("."), f"{v.name}'s title is a sentence a client shows"
    for v in FACED:
        assert v.cli is not None
        cmd = _command(v.cli.words)
        taken = [p.name for p in cmd.params if p.name not in {o.keyword for o in v.cli.options}]
        assert taken == [a.keyword for a in v.args], f"`{' '.join(v.cli.words)}` takes what the {v.name} tool takes"
        assert cmd.short_help == v.title, v.name


def test_what_each_verb_names_exists_and_takes_its_arguments() -> None:
    for v in VERBS:
        does = getattr(tools, v.does) if isinstance(v.does, str) else v.does
        accepted = inspect.signature(does).parameters
        assert all(a.keyword in accepted for a in v.args), f"kit/tools.py's {v.does} takes the {v.name} arguments"
        if v.cli is not None and isinstance(v.cli.runs, str):
            module, name = v.cli.runs.split(":")
            runs = getattr(importlib.import_module(f"git_balanced.commands.{module}"), name)
            given = (*v.args, *v.cli.options)
            try:  # as cli.py calls it: positional arguments by position, options by keyword
                inspect.signature(runs).bind(*[a.name for a in given if not a.flags],
                                             **{a.keyword: a.name for a in given if a.flags})
            except TypeError as exc:
                raise AssertionError(f"{v.cli.runs} cannot take the {v.name} arguments: {exc}") from None


def test_the_hints_say_what_a_call_risks() -> None:
    listed = _listed()
    assert listed["board"].annotations.read_only_hint is True
    assert listed["stop"].annotations.destructive_hint is True
    assert listed["plan"].annotations.read_only_hint is False
    assert {n for n, t in listed.items() if t.annotations.read_only_hint} == \
        {"board", "show", "inbox", "machines", "schedule_list", "logs"}
    assert {n for n, t in listed.items() if t.annotations.destructive_hint} == {"stop", "schedule_rm"}
    assert {n for n, t in listed.items() if t.annotations.open_world_hint} == \
        {"plan", "start", "worker", "stop", "retry", "logs", "tell"}, \
        "what reaches machines and agents past this repository"
    for name, t in listed.items():  # none left to a client's default, which assumes the worst
        assert None not in (t.annotations.read_only_hint, t.annotations.destructive_hint,
                            t.annotations.idempotent_hint, t.annotations.open_world_hint), name


def test_each_verb_returns_its_declared_type_and_the_tool_says_so() -> None:
    listed = _listed()
    for v in VERBS:
        does = getattr(tools, v.does) if isinstance(v.does, str) else v.does
        assert typing.get_type_hints(does)["return"] is RESULTS[v.returns], f"{v.does} returns {v.returns}"
        assert listed[v.name].output_schema["title"] == v.returns, v.name
        assert listed[v.name].output_schema["properties"], v.name


def test_a_result_not_of_its_type_is_refused_not_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tools, "schedule_list", lambda: {"schedules": [], "stray": 1})
    monkeypatch.setattr(tools, "machines", lambda: {"machines": "local"})

    async def calls() -> list[Any]:
        async with Client(build()) as client:
            return [await client.call_tool(n, {}) for n in ("schedule_list", "machines")]

    for result in asyncio.run(calls()):
        assert result.is_error, result.structured_content
    said = "".join(c.text for r in asyncio.run(calls()) for c in r.content)
    assert "stray" in said and "machines" in said, said


def test_a_verb_with_no_face_has_no_command() -> None:
    v = verbs.verb("put_to_you")
    with pytest.raises(ValueError, match="no command line face"):
        command_of(v)
    with pytest.raises(KeyError, match="no verb 'ship'"):
        verbs.verb("ship")


def test_a_new_verb_is_one_declaration(monkeypatch: pytest.MonkeyPatch) -> None:
    said: list[tuple[str, int, bool]] = []

    def does(words: str, times: int = 1) -> dict[str, Any]:
        return {"echo": " ".join([words] * times)}

    def runs(words: str, *, times: int, loud: bool) -> int:
        said.append((words, times, loud))
        return 0

    echo = Verb("echo", "Say words back.", "Say the words back, as many times as asked.", does=does,
                args=(Arg("words", str, "What to say."),
                      Arg("times", int, "How many times.", default=1, flags=("--times",), above=0)),
                cli=Face(("echo",), runs, options=(Arg("loud", bool, "Shout.", default=False, flags=("--loud",)),)),
                read_only=True)
    grown = (*VERBS, echo)
    monkeypatch.setattr(verbs, "VERBS", grown)
    monkeypatch.setattr(cli_module, "VERBS", grown)
    monkeypatch.setattr(cli, "commands", dict(cli.commands))
    cli_module._place_the_rest()

    ran = CliRunner().invoke(cli, ["echo", "hello", "--times", "2", "--loud"], standalone_mode=False)
    assert ran.exit_code == 0 and ran.return_value == 0, ran.output
    assert said == [("hello", 2, True)], "the command ran the face's function with the declared arguments"

    listed = _listed(grown)
    assert listed["echo"].input_schema["properties"]["times"]["exclusiveMinimum"] == 0
    assert listed["echo"].annotations.read_only_hint is True

    async def one() -> Any:
        async with Client(build(grown)) as client:
            return await client.call_tool("echo", {"words": "hi", "times": 3})

    result = asyncio.run(one())
    assert not result.is_error and result.structured_content == {"echo": "hi hi hi"}
