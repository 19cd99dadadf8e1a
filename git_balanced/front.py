"""The front door of `git balanced` (the console script's entry point): the commands run most often, by a hook or
at a glance (`--version`, `board`, `inbox`, `hook NAME ...`, and `mcp`, which an agent starts on each turn), and
the engine's own path (`plan FILE` and `engine` with their flags), start here without click and run only what they
use; any other arguments, or these with an option they do not list here, go to cli.py's click app, which parses
them and says what is wrong with them.

What each prints, and its exit code, is the same either way (tests/test_startup.py runs both and compares).
`board` and `inbox` print their last answer, kept with a stamp of what it was made from, while the stamp holds
(kit/boardsaid.py, with os alone), and otherwise run in full and keep what they print (kit/boardstamp.py;
tests/test_board_said.py).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing itself is not imported for this: it is most of what `--version` would load
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

# The options each fast command takes here (any of them, in any order); anything else goes to click.
BOARD_FLAGS = frozenset({"--json", "--all"})
INBOX_FLAGS = frozenset({"--json"})
MCP_FLAGS = frozenset({"--chief"})  # the server an agent starts on each turn; `--call` and `--help` are click's
# `plan FILE` and `engine`, the engine's own fixed cost: their flags (an option taking a value, as `--budget`, is
# click's). Run as this process's own command line, they end without Python's teardown (exits.leave).
PLAN_FLAGS = frozenset({"--start", "--wait", "--until-idle", "--json"})
ENGINE_FLAGS = frozenset({"--once", "--until-idle", "--detach", "--stop"})
LEAVE_FAST = frozenset({"plan", "engine"})
# They may run the engine, which reads knobs.py's waits later: knobs.READERS among the commands here (a test holds it).
KNOBS_READ = frozenset({"plan", "engine", "mcp"})


def fast(args: list[str]) -> Callable[[], int] | None:
    """What runs `git balanced ARGS` without click, or None when click must read them."""
    if args == ["--version"]:
        return _version
    word, rest = (args[0], args[1:]) if args else ("", [])
    if word == "board" and set(rest) <= BOARD_FLAGS:
        return lambda: _board(as_json="--json" in rest, show_all="--all" in rest)
    if word == "inbox" and set(rest) <= INBOX_FLAGS:
        return lambda: _inbox(as_json="--json" in rest)
    if word == "mcp" and set(rest) <= MCP_FLAGS:
        return lambda: _mcp(chief="--chief" in rest)
    if word == "plan":
        files = [a for a in rest if a not in PLAN_FLAGS]
        if len(files) == 1 and (files[0] == "-" or not files[0].startswith("-")):
            return lambda: _plan(files[0], set(rest))
    if word == "engine" and set(rest) <= ENGINE_FLAGS:
        return lambda: _engine(set(rest))
    if word == "hook" and rest and not any(a.startswith("-") for a in rest):  # `-h` and the like are click's
        return lambda: _hook(rest[0], rest[1:])
    logged = _log_args(rest) if word == "log" else None
    if logged is not None:
        return lambda: _log(*logged)
    return None


LOG_LIMIT = 50  # `log`'s `-n` when not given, as cli.py declares it


def _log_args(rest: list[str]) -> tuple[int, bool] | None:
    """`log`'s `-n N` (`-nN`; a whole number from 1, the last one given) and `--json`, or None for anything else
    (click reads it, and says what is wrong)."""
    limit, as_json, i = LOG_LIMIT, False, 0
    while i < len(rest):
        word, value = rest[i], rest[i + 1] if i + 1 < len(rest) else ""
        if word == "--json":
            as_json = True
        elif word == "-n" and value.isascii() and value.isdigit() and int(value) >= 1:
            limit, i = int(value), i + 1
        elif word.startswith("-n") and word[2:].isascii() and word[2:].isdigit() and int(word[2:]) >= 1:
            limit = int(word[2:])
        else:
            return None
        i += 1
    return limit, as_json


def _version() -> int:
    from git_balanced import __version__

    sys.stdout.write(f"git balanced {__version__}\n")  # as click's version option says it
    sys.stdout.flush()
    return 0


def _board(*, as_json: bool, show_all: bool) -> int:
    def full() -> int:
        from git_balanced.commands.board import board_command

        return int(board_command(as_json=as_json, show_all=show_all, watch=False))

    # `--json` prints every job whether or not `--all` is given: one answer for both
    return _kept("board-json" if as_json else "board-all" if show_all else "board", full)


def _inbox(*, as_json: bool) -> int:
    def full() -> int:
        from git_balanced.commands.inbox import inbox_command

        return int(inbox_command(as_json=as_json, follow=False))

    return _kept("inbox-json" if as_json else "inbox", full)


def _kept(kind: str, full: Callable[[], int]) -> int:
    """`full()`'s answer as kept from its last run when nothing it is made from changed since (kit/boardsaid.py);
    else `full()`, run with what it prints kept for the next look (kit/boardstamp.py)."""
    from git_balanced.kit import boardsaid

    said = boardsaid.answer(kind)
    if said is not None:
        sys.stdout.write(said)
        sys.stdout.flush()
        return 0
    from git_balanced.kit import boardstamp

    stamp = boardstamp.before(kind)
    if stamp is None:
        return full()
    out, err = _Copied(sys.stdout), _Copied(sys.stderr)
    sys.stdout, sys.stderr = out, err  # type: ignore[assignment]
    try:
        code = full()
    finally:
        sys.stdout, sys.stderr = out.stream, err.stream
    if code == 0 and not err.parts:  # only a whole answer, with nothing said beside it, is kept
        boardstamp.keep(stamp, "".join(out.parts))
    return code


class _Copied:
    """A stream that keeps a copy of what is written to it."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        written = self.stream.write(text)
        return written if isinstance(written, int) else len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _mcp(*, chief: bool) -> int:
    from git_balanced.commands.mcp import mcp_command

    return int(mcp_command(chief=chief))


def _plan(source: str, flags: set[str]) -> int:
    from git_balanced.commands.plan import plan_command

    return int(plan_command(source, budget=None, start="--start" in flags, as_json="--json" in flags,
                            wait="--wait" in flags, until_idle="--until-idle" in flags))


def _engine(flags: set[str]) -> int:
    from git_balanced.commands.engine import engine_command

    return int(engine_command(once="--once" in flags, until_idle="--until-idle" in flags,
                              detach="--detach" in flags, stop="--stop" in flags))


def _log(limit: int, as_json: bool) -> int:
    from git_balanced.commands.log import log_command

    return int(log_command(limit=limit, as_json=as_json))


def _hook(name: str, args: list[str]) -> int:
    from git_balanced.commands.hook import run_hook

    return int(run_hook(name, args))


def _knobs_checked(run: Callable[[], int]) -> Callable[[], int]:
    """`run`, once the waits set in the environment are checked (knobs.py): a bad one stops it before it starts."""
    def checked() -> int:
        from git_balanced import knobs

        knobs.check()
        return run()

    return checked


def main(argv: list[str] | None = None) -> int:
    """Run `git balanced ARGV` (default: this process's arguments); exit codes as cli.main gives them. `plan`
    and `engine` run as this process's own arguments end the process here (exits.leave)."""
    args = list(sys.argv[1:] if argv is None else argv)
    run = fast(args)
    if run is None:
        from git_balanced.cli import main as click_main

        return click_main(argv)
    from git_balanced import exits

    if args[0] in KNOBS_READ:
        run = _knobs_checked(run)
    if argv is None and args[0] in LEAVE_FAST:
        exits.leave(_run(run, argv))
    return _run(run, argv)


def _run(run: Callable[[], int], argv: list[str] | None) -> int:
    """Run a command of the front door; its exit code, its errors said as cli.main says them."""
    from git_balanced import exits

    sys.unraisablehook = exits.quiet_full_disk
    try:
        try:
            return run()
        except (EOFError, KeyboardInterrupt):
            exits.err()  # the blank line click writes to close the terminal's ^C
            raise
        except OSError as exc:
            import errno

            if exc.errno != errno.EPIPE:
                raise
            _quiet_stdout()  # the reader went away: nothing more to print, and exit 1 as click does
            raise SystemExit(1) from None
    except EOFError:
        exits.err("Aborted.")  # the input ended where a prompt waited for an answer
        return 1
    except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 — said as cli.main says it
        return exits.ended(exc, argv)


def _quiet_stdout() -> None:
    """Send what is still buffered for stdout nowhere: its reader is gone, and Python would complain at exit."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # no file descriptor (a captured stdout): nothing is left to flush there
        pass


if __name__ == "__main__":
    sys.exit(main())
