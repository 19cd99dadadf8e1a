"""How a command that raised ends: its words on stderr and its exit code, 1 (yours), 3 (ours), 130 (Ctrl-C).

cli.py (after click's own errors) and the front door (front.py, which runs a few commands without click) both
end through `ended`, so a command says the same whichever of the two ran it.
"""

from __future__ import annotations

import errno
import sys

from git_balanced import __version__

TYPE_CHECKING = False  # typing itself is not imported for this: `--version` loads this module
if TYPE_CHECKING:
    from typing import NoReturn


def err(text: str = "") -> None:
    """A line on stderr, written at once (as click.echo writes it)."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def quiet_full_disk(unraisable: sys.UnraisableHookArgs) -> None:
    """A file a library left open when a full disk broke its write is closed when collected, fails to close for
    the same reason, and Python would print that as a traceback: the full disk is said once, as an error. It may
    run while Python shuts down, when nothing can be imported any more: errno is imported with this module."""
    exc = unraisable.exc_value
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return
    sys.__unraisablehook__(unraisable)


def ended(exc: BaseException, argv: list[str] | None) -> int:
    """Say what `exc` means for the person who ran `git balanced ARGV`, and the exit code it ends with."""
    from git_balanced.errors import BalancedError, disk_full
    from git_balanced.ui import plain

    if isinstance(exc, BalancedError):
        exc = disk_full(exc) or exc  # git's own words for a full disk read as ours
        err(f"error: {plain(exc.message)}")  # a message may quote a plan's or a worker's words
        if exc.hint:
            err(f"hint: {plain(exc.hint)}")
        return exc.exit_code
    if isinstance(exc, KeyboardInterrupt):
        err("Interrupted.")
        return 130
    if isinstance(exc, (RecursionError, MemoryError)):
        # An input nested or sized past what the checks at the edge let through: still yours to fix, so
        # exit 1 naming what was given, not a traceback.
        said = "nested too deeply to read" if isinstance(exc, RecursionError) else "too large to hold in memory"
        err(f"error: an input of `git balanced {_given(argv)}` (a file it names or reads, or "
            f".magnum/settings.toml) is {said}.")
        err("hint: make that file smaller and flatter; docs/safety/inputs.md lists the bounds")
        return 1
    full = disk_full(exc)  # a full disk (ENOSPC, EDQUOT) is the machine's state, not a bug: exit 1
    if full is not None:
        err(f"error: {plain(full.message)}\nhint: {plain(full.hint or '')}")
        return 1
    if isinstance(exc, UnicodeEncodeError) and "surrogates not allowed" in str(exc):
        # Bytes of an argument that are not UTF-8 reach Python as lone surrogates, which git cannot store.
        err(f"error: an argument of `git balanced {_given(argv)}` is not UTF-8 text.")
        err("hint: give the text as UTF-8 (see `locale`)")
        return 1
    import traceback  # here, not above: only an internal error needs it

    traceback.print_exception(exc)
    err(f"\ngit balanced {__version__} hit an internal error. This is a bug: please report it with the "
        "traceback above and the command you ran.")
    return 3


def leave(code: int) -> NoReturn:
    """End this process with `code` without Python's teardown of every module and object it loaded (a tenth of
    a second or more for the engine): the atexit functions run first and the standard streams are flushed, as
    they would be. When a thread that is not a daemon still runs, or a stream cannot be flushed, it ends the
    ordinary way (SystemExit), which waits for that thread and says what the stream's failure means; so it does
    on a Python whose atexit has no `_run_exitfuncs` (not a public name: the ordinary exit runs them there)."""
    import atexit
    import os
    import threading

    main = threading.main_thread()
    if any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate()):
        raise SystemExit(code)
    run_exitfuncs = getattr(atexit, "_run_exitfuncs", None)
    if not callable(run_exitfuncs):
        raise SystemExit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # AttributeError: a stream that is None
        raise SystemExit(code) from None
    run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # AttributeError: a stream that is None
        raise SystemExit(code) from None
    os._exit(code)


def _given(argv: list[str] | None) -> str:
    """The arguments as they were given, quoted safely for a message."""
    from git_balanced.models import shown

    return shown(" ".join(argv if argv is not None else sys.argv[1:]))[1:-1]
