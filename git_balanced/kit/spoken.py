"""A refusal's words for an agent that has tools: the commands an error names (`git balanced board`, `git balanced
retry JOB`) become the tools that do the same (`board`, `retry {"job": "JOB"}`). A BalancedError is written
once, for the command line; the MCP server says it through `for_tools`, so an agent is sent to the tool it
has rather than to a command it may not be able to run.

A command no tool does (`machines add`, `init`) is left as it is: it is the person's, or the agent's shell's.
So is one with an option only the person takes (`land NAME --yes` approves protected paths)."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from git_balanced.kit.verbs import VERBS, Verb

# `git balanced …` in backticks, or bare up to the end of its clause.
_NAMED = re.compile(r"`git balanced ([^`\n]+)`|\bgit balanced ((?:[^`\n;,()]|\.(?=\S))+?)(?=\.?$|\.?\s*[;,()]|\. )")
_PERSON_ONLY = frozenset({"--yes", "--include-protected"})  # what no tool does: a choice the person makes


def _forms(verb: Verb) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The words of the command that does what the verb does, and the flags that pick it (`answer --allow`)."""
    if verb.cli is not None:
        return verb.cli.words, ()
    if verb.said:
        return tuple(w for w in verb.said if not w.startswith("-")), tuple(w for w in verb.said if w.startswith("-"))
    return None


def _verb_of(tokens: list[str]) -> tuple[Verb, list[str]] | None:
    """The verb the command's words name (the one whose words and flags match most), and what follows."""
    best: tuple[int, Verb, list[str]] | None = None
    for v in VERBS:
        form = _forms(v)
        if form is None:
            continue
        words, marks = form
        if tuple(tokens[:len(words)]) != words or not set(marks) <= set(tokens[len(words):]):
            continue
        score = len(words) + len(marks)
        if best is None or score > best[0]:
            best = (score, v, [t for t in tokens[len(words):] if t not in marks])
    return (best[1], best[2]) if best else None


def _arguments(verb: Verb, rest: list[str]) -> dict[str, Any] | None:
    """The tool's arguments the command's tokens give, or None when one has no place in the tool."""
    shown = {f for o in (verb.cli.options if verb.cli else ()) for f in o.flags} - _PERSON_ONLY
    flagged = {f: a for a in verb.args for f in a.flags}
    positional = [a for a in verb.args if not a.flags]
    given: dict[str, Any] = {}
    tokens = iter(rest)
    for t in tokens:
        if t in shown:
            continue  # it changes how the command prints, and the tool's result holds it all
        if t in flagged:
            a = flagged[t]
            given[a.name] = True if a.kind is bool else next(tokens, a.name.upper())
        elif t.startswith("-") or not positional:
            return None
        elif positional[0].kind == list[str] | None:
            given.setdefault(positional[0].name, []).append(t)
        else:
            given[positional.pop(0).name] = t
    return given


def tool_call(command: str) -> str | None:
    """`git balanced WORDS…` (without `git balanced`) as the tool call that does it, or None."""
    try:
        tokens = shlex.split(command)
    except ValueError:
        return None
    found = _verb_of(tokens)
    if found is None or any(t in _PERSON_ONLY for t in found[1]):
        return None
    verb, rest = found
    given = _arguments(verb, rest)
    if given is None:
        return None
    return f"{verb.name} {json.dumps(given, ensure_ascii=False)}" if given else verb.name


def for_tools(text: str) -> str:
    """`text` with each command a tool does named as that tool call, in backticks."""

    def said(m: re.Match[str]) -> str:
        command = (m.group(1) or m.group(2)).strip()
        call = tool_call(command)
        return m.group(0) if call is None else f"`{call}`"

    return _NAMED.sub(said, text)
