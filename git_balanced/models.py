"""Small `str` types for the names the code passes around, each refusing bad forms at the border, and the
bounds of any text a person writes (docs/safety/inputs.md)."""

from __future__ import annotations

from git_balanced.errors import BalancedError

# typing, datetime and re are not imported to run: a lead's hook on every turn checks text here
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime
    from typing import Any, TypeVar

    from pydantic_core import core_schema

    _T = TypeVar("_T", bound="_Name")

# Crockford base32 as written by state/events.py new_id(): 9 characters of milliseconds, 6 of randomness.
_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


def shown(value: str, most: int = 200) -> str:
    """`value` quoted, with control characters and lone surrogates made visible (a message never carries
    them raw: a terminal would act on one, and UTF-8 cannot write the other), cut after `most` characters."""
    out = []
    for c in value[:most]:
        if ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\x{ord(c):02x}")
        elif 0xD800 <= ord(c) <= 0xDFFF:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    cut = f"… ({len(value):,} characters)" if len(value) > most else ""
    return '"' + "".join(out) + cut + '"'


# Bounds of what a person writes (docs/safety/inputs.md): what no real file comes near, and what keeps the
# tool and the programs it hands text to (git, sh, an agent's argv) working.
TEXT_MOST = 32_768  # characters of a task, an answer, a summary: an agent's prompt, not a book
NAME_MOST = 200  # characters of a model name, a glob, an attachment path
COMMAND_MOST = 65_536  # bytes of a setup, check or run command: Linux refuses one argument of 128 KiB,
# and a command sent over SSH is quoted, which can make it longer still
_LINES = "\t\n\r"  # the control characters a text of several lines may hold


def utf8_arguments(command: str, *words: str) -> None:
    """Refuse command-line words whose bytes were not UTF-8 (Python reads them as lone surrogates, which git
    cannot store), naming the command as it was typed."""
    if any(0xD800 <= ord(c) <= 0xDFFF for w in words for c in w):
        raise BalancedError(f"an argument of `git balanced {shown(' '.join([command, *words]))[1:-1]}` is not "
                            "UTF-8 text.", hint="give the text as UTF-8 (see `locale`)")


def text_problem(value: str, *, most: int = TEXT_MOST, lines: bool = True, unit: str = "characters",
                 controls: bool = False) -> str | None:
    """What makes `value` unfit as text to store, show and hand to a program, in words; None when it is fit.
    A NUL cuts a C string and a commit; other control characters act on a terminal; a lone surrogate is no
    character at all (UTF-8 cannot write it)."""
    size = len(value.encode("utf-8", "surrogatepass")) if unit == "bytes" else len(value)
    if size > most:
        return f"it has {size:,} {unit}, more than {most:,}"
    if "\0" in value:
        return "it holds a NUL character (\\x00), which git, the shell and a program's arguments cannot carry"
    odd = [c for c in value if 0xD800 <= ord(c) <= 0xDFFF]
    if odd:
        return f"it holds a lone surrogate ({shown(odd[0])[1:-1]}), which is not a character"
    # A shell command may mean its control characters (an escape in a printf); no other text does.
    bad = [] if controls else [c for c in value if (ord(c) < 0x20 and not (lines and c in _LINES)) or ord(c) == 0x7F]
    if bad:
        return f"it holds a control character ({shown(bad[0])[1:-1]}){'' if lines else '; it is one line'}"
    return None


def _listed(chars: list[str]) -> str:
    return ", ".join(shown(c) for c in chars)


def fit(most: int, unit: str = "characters", command: bool = False) -> Callable[[str], str]:
    """A pydantic check that text is not blank, at most `most` long and free of what no such text holds (a
    NUL, control characters, lone surrogates; a command may hold any control character but NUL): a command
    that could never run is refused where it is read, not when it is run."""
    def check(value: str) -> str:
        if not value.strip():
            raise ValueError("blank")
        wrong = text_problem(value, most=most, unit=unit, lines=command, controls=command)
        if wrong:
            raise ValueError(wrong)
        return value
    return check


DEPTH_MOST = 20  # levels of nesting in a settings or plan file; real ones have 4
# A TOML file's strings and comments (whose brackets do not nest), its brackets, and its line ends.
_TOML_TOKENS = r'"""(?:\\.|[^\\])*?"""|\'\'\'.*?\'\'\'|"(?:\\.|[^"\\\n])*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{}]|\n'


def toml_nesting(text: str, most: int = DEPTH_MOST) -> int | None:
    """The line where TOML text nests arrays or inline tables deeper than `most`, or None: tomllib recurses
    once per level, so this is asked before it reads the text."""
    import re

    depth, line = 0, 1
    for token in re.finditer(_TOML_TOKENS, text, re.DOTALL):
        t = token.group()
        if t in "[{":
            depth += 1
            if depth > most:
                return line
        elif t in "]}":
            depth = max(depth - 1, 0)
        else:
            line += t.count("\n")
    return None


def nested_deeper(value: Any, most: int = DEPTH_MOST) -> str | None:
    """The dotted key where a parsed table goes deeper than `most` levels (dotted keys nest without
    brackets), or None; walked without recursion."""
    todo: list[tuple[Any, str, int]] = [(value, "", 0)]
    while todo:
        item, where, depth = todo.pop()
        if depth > most:
            return where
        pairs = item.items() if isinstance(item, dict) else enumerate(item) if isinstance(item, list) else ()
        for key, inner in pairs:
            todo.append((inner, f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}".lstrip("."),
                         depth + 1))
    return None


class _Name(str):
    """A validated name: build it with `of`, which refuses bad forms with a BalancedError."""

    kind = "name"
    rule = ""

    @classmethod
    def of(cls: type[_T], value: Any) -> _T:
        """`value` as this type, or a BalancedError naming the value and the rule it breaks."""
        if isinstance(value, cls):
            return value
        if not isinstance(value, str):
            raise BalancedError(f"{value!r} is not a {cls.kind}: it must be text ({cls.rule}).",
                                hint=cls._hint(str(value)))
        broken = cls._broken(value)
        if broken:
            raise BalancedError(f"{shown(value)} is not a {cls.kind}: {broken}.", hint=cls._hint(value))
        return cls(cls._normal(value))

    @classmethod
    def is_one(cls, value: str) -> bool:
        """Whether `value` is of this kind as it is (no message made)."""
        return cls._broken(value) is None

    @classmethod
    def _broken(cls, value: str) -> str | None:
        """Which rule `value` breaks, in words, or None when it is good."""
        raise NotImplementedError

    @classmethod
    def _normal(cls, value: str) -> str:
        return value

    @classmethod
    def _hint(cls, value: str) -> str:
        return f"use a {cls.kind}: {cls.rule}"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> core_schema.CoreSchema:
        # Lets pydantic models declare fields of these types; a bad form becomes a validation error.
        def check(value: str) -> _Name:
            try:
                return cls.of(value)
            except BalancedError as exc:
                raise ValueError(exc.message) from None

        from pydantic_core import core_schema  # here: the board and the hooks use these types without pydantic

        return core_schema.no_info_after_validator_function(
            check, core_schema.str_schema(),
            serialization=core_schema.plain_serializer_function_ser_schema(str))


class PieceId(_Name):
    """A piece's id in a plan: `orders-api`."""

    kind = "piece id"
    rule = "a-z, 0-9 and -, 1 to 48 characters, not starting or ending with -"

    @classmethod
    def _broken(cls, value: str) -> str | None:
        if not value:
            return "it is empty"
        if len(value) > 48:
            return f"it has {len(value)} characters, more than 48"
        bad = sorted({c for c in value if not ("a" <= c <= "z" or "0" <= c <= "9" or c == "-")})
        if bad:
            return "only a-z, 0-9 and - are allowed, not " + _listed(bad)
        if value.startswith("-") or value.endswith("-"):
            return "it must not start or end with -"
        return None

    @classmethod
    def _hint(cls, value: str) -> str:
        import re

        # Offer the nearest good id: `Orders API` becomes `orders-api`.
        slug = re.sub(r"[^a-z0-9]+", "-", value.lower())[:48].strip("-")
        if slug:
            return f"use {shown(slug)} ({cls.rule})"
        return f"use a {cls.kind}: {cls.rule}"


class MachineName(_Name):
    """`local` or an SSH host name or alias: `build-box`, `gpu1.lan`."""

    kind = "machine name"
    rule = "letters, digits, '.', '_' and '-', not starting with '-'"

    @classmethod
    def _broken(cls, value: str) -> str | None:
        if not value:
            return "it is empty"
        if len(value) > 253:
            return f"it has {len(value)} characters, more than 253"
        if value.startswith("-"):
            # ssh would read it as an option (`-oProxyCommand=...`): never let one through.
            return "it must not start with -"
        bad = sorted({c for c in value if not (c.isascii() and (c.isalnum() or c in "._-"))})
        if bad:
            return "only letters, digits, '.', '_' and '-' are allowed, not " + _listed(bad)
        if set(value) == {"."}:
            return "it must not be only dots"
        return None


class BranchName(_Name):
    """A branch's short name (`balanced/orders-api`), by the rules of `git check-ref-format --branch`."""

    kind = "branch name"
    rule = ("no spaces, ~ ^ : ? * [ \\ or control characters, no '..', '@{' or '//', "
            "no part starting with '.' or ending with '.lock'")

    @classmethod
    def _broken(cls, value: str) -> str | None:
        if not value:
            return "it is empty"
        if value.startswith("-"):
            return "it must not start with -"
        if value == "HEAD":
            return "HEAD is not a branch name"
        if value == "@":
            # git forbids a ref named `@` alone: it means HEAD in revision syntax.
            return "@ alone means HEAD"
        bad = sorted({c for c in value if ord(c) < 0x20 or ord(c) == 0x7F or c in " ~^:?*[\\"})
        if bad:
            return "it must not contain " + _listed(bad)
        if ".." in value:
            return "it must not contain '..'"
        if "@{" in value:
            return "it must not contain '@{'"
        if value.startswith("/") or value.endswith("/"):
            return "it must not start or end with /"
        if "//" in value:
            return "it must not contain '//'"
        if value.endswith("."):
            return "it must not end with '.'"
        for part in value.split("/"):
            if part.startswith("."):
                return f"its part {shown(part)} must not start with '.'"
            if part.endswith(".lock"):
                return f"its part {shown(part)} must not end with '.lock'"
        return None


class JobId(_Name):
    """A job's id: 15 characters of Crockford base32 that sort by creation time."""

    kind = "job id"
    rule = "15 characters of 0-9 and a-z without i, l, o and u"

    @classmethod
    def _broken(cls, value: str) -> str | None:
        if len(value) != 15:
            return f"it has {len(value)} characters, not 15"
        bad = sorted({c for c in value.lower() if c not in _CROCKFORD})
        if bad:
            return "only 0-9 and a-z without i, l, o and u are allowed, not " + _listed(bad)
        return None

    @classmethod
    def _normal(cls, value: str) -> str:
        # Crockford base32 reads either case; ids are written and stored in lower case.
        return value.lower()

    @classmethod
    def prefix(cls, text: str) -> str:
        """The start of an id as someone typed it, in the case ids are stored (Crockford base32 reads either);
        text that cannot start an id is given back as it is."""
        low = text.lower()
        return low if len(low) <= 15 and all(c in _CROCKFORD for c in low) else text

    def created(self) -> datetime:
        """When this id was made, from its time-ordered head (UTC)."""
        ms = 0
        for c in self[:9]:
            ms = ms * 32 + _CROCKFORD.index(c)
        from datetime import UTC, datetime

        return datetime.fromtimestamp(ms / 1000, tz=UTC)


__all__ = [
    "COMMAND_MOST", "DEPTH_MOST", "NAME_MOST", "TEXT_MOST", "BranchName", "JobId", "MachineName", "PieceId",
    "fit", "nested_deeper", "shown", "text_problem", "toml_nesting",
]
