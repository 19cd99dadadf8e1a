"""Files written whole, JSON read back from lines, and locks on files: the one way the package keeps state in
files.

A file is written to a temporary file in its own folder and renamed over the old one, so a reader (another
process, a crash halfway) sees the old file or the new one, never half of one. A lock is a flock on a file that
stays (Flock): the kernel lets go of it when its holder ends, however it ends, so no lock is ever stale. (A
ref's `.lock`, made with O_EXCL the way git makes it, is git's own kind: see git/locks.py.)
"""

from __future__ import annotations

import fcntl
import os
import stat
import time
from pathlib import Path

TYPE_CHECKING = False  # typing is not imported for this: the board reads its files without it
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def write_atomic(path: str | Path, text: str, *, mode: int | None = None) -> None:
    """Replace the file at `path` with `text` at once; `mode` sets its permissions (else the umask's)."""
    write_atomic_bytes(path, text.encode("utf-8"), mode=mode)


def write_atomic_bytes(path: str | Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace the file at `path` with `data` at once (see write_atomic)."""
    path = Path(path)
    # os.urandom as secrets.token_hex reads it, without importing secrets (and hashlib) into every command
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{os.urandom(4).hex()}.tmp")
    try:
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), "wb") as fh:
            fh.write(data)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)  # replaces a link planted at `path`, never writes through it
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


CACHE_LIMIT = 1 << 30  # bytes: a kept cache file larger than this is not one this code wrote


def read_cache(path: str | Path, limit: int = CACHE_LIMIT) -> str | None:
    """The text of the kept file at `path` (a cache's: deleting it is always safe), or None when there is none to
    take: no such file, a link, no regular file (a FIFO would hang the read, a folder fail it), another user's,
    larger than `limit`, or not UTF-8."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_size > limit:
            return None
        with open(fd, "rb", closefd=False) as f:
            data = f.read(limit + 1)
        return data.decode("utf-8") if len(data) <= limit else None
    except (OSError, UnicodeDecodeError):
        return None
    finally:
        os.close(fd)


def write_json(path: str | Path, data: Any, **how: Any) -> None:
    """Replace the file at `path` with `data` as JSON and a newline; `how` are json.dumps's options."""
    write_atomic(path, dumps(data, **how) + "\n")


# JSON read and written as `json` reads and writes it, by json's own C parts, without importing `json` (which
# imports `re`): the board and the inbox read the state's files on every look. shipped/lightjson.py does the same
# for what runs on a bare machine.
class _Decoding:
    """The settings json.loads hands its C scanner: json.JSONDecoder's, with its `parse_float` and
    `parse_constant` (their defaults where None, as JSONDecoder takes them)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_int = int

    def __init__(self, parse_float: Callable[[str], Any] | None = None,
                 parse_constant: Callable[[str], Any] | None = None) -> None:
        self.parse_float = parse_float or float
        self.parse_constant = parse_constant or _CONSTANTS.__getitem__


_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}  # json.decoder's


class _CParts:
    """json's C scanner set up as json.loads sets it up, and its C encoder maker; None where there is no `_json`."""

    __slots__ = ("make_encoder", "make_scanner", "plain", "quote", "scan")

    def __init__(self) -> None:
        self.scan: Any = None
        self.make_scanner: Any = None
        self.make_encoder: Any = None
        self.quote: Any = None
        self.plain: Any = None
        try:
            import _json
        except ImportError:
            return
        decoding: Any = _Decoding()
        self.make_scanner = _json.make_scanner
        self.scan = _json.make_scanner(decoding)
        self.make_encoder, self.quote, self.plain = _json.make_encoder, _json.encode_basestring_ascii, \
            _json.encode_basestring


_C = _CParts()  # made once, as json makes its own at import; read only
_SPACE = " \t\n\r"  # what JSON allows around a value (json.decoder.WHITESPACE)
_MARKED = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")  # byte-order marks: json reads those bytes itself


def loads(text: str | bytes, **how: Any) -> Any:
    """What `json.loads(text, **how)` gives (its error too, raised by json.loads itself), `how` being
    `parse_float` or `parse_constant`: json's C scanner, run as json.loads runs it, on a string or on bytes in
    UTF-8; anything else, or anything it stops short on, is handed to json.loads."""
    if type(text) is bytes and not text.startswith(_MARKED) and 0 not in text[:4]:
        text = text.decode("utf-8", "surrogatepass")  # as json.loads decodes what json.detect_encoding calls utf-8
    scan = _C.scan if not how or _C.scan is None else _C.make_scanner(_Decoding(**how))
    if scan is not None and type(text) is str and not text.startswith("\ufeff"):
        start, end = len(text) - len(text.lstrip(_SPACE)), len(text.rstrip(_SPACE))
        try:
            value, stop = scan(text, start)
        except Exception:  # noqa: BLE001 — json.loads says what is wrong, in its own words
            pass
        else:
            if stop == end:
                return value
    import json

    return json.loads(text, **how)


def _not_serializable(o: Any) -> Any:
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")  # json's own words


def json_encoder(*, ensure_ascii: bool = True, sort_keys: bool = False, default: Callable[[Any], Any] | None = None,
                 separators: tuple[str, str] = (", ", ": "), allow_nan: bool = True) -> Callable[[Any], str]:
    """`json.JSONEncoder(ensure_ascii=..., sort_keys=..., default=..., separators=..., allow_nan=...).encode`:
    json's C encoder, made as json makes it for `json.dumps` without `indent`, without importing json (json's own
    where there is no `_json`)."""
    if _C.make_encoder is None:
        import json

        return json.JSONEncoder(ensure_ascii=ensure_ascii, sort_keys=sort_keys, default=default,
                                separators=separators, allow_nan=allow_nan).encode
    quote, make, fallback = _C.quote if ensure_ascii else _C.plain, _C.make_encoder, default or _not_serializable
    key, item = separators[1], separators[0]

    def encoded(o: Any) -> str:
        if isinstance(o, str):
            return quote(o)  # type: ignore[no-any-return]
        # made for each value, with its own marks of what is being written (a circle), as json.dumps makes it
        return "".join(make({}, fallback, quote, None, key, item, sort_keys, False, allow_nan)(o, 0))

    return encoded


_PLAIN_OPTIONS = frozenset({"ensure_ascii", "sort_keys", "default", "separators", "allow_nan"})


def dumps(data: Any, **how: Any) -> str:
    """`json.dumps(data, **how)`, by json_encoder when `how` has only its options (json.dumps's own otherwise)."""
    if _PLAIN_OPTIONS.issuperset(how):
        separators = how.get("separators")
        return json_encoder(**{**how, "separators": (", ", ": ") if separators is None else separators})(data)
    import json

    return json.dumps(data, **how)


class Flock:
    """An exclusive flock on the file at `path` (made when missing, never removed), for one holder at a time
    among processes and among threads (each Flock has its own descriptor). The kernel lets go of it when the
    process ends, however it ends: a holder that was killed holds nothing.

        with Flock(repo.state_dir / "landing.lock"):   # waits for the holder
            ...
        if not lock.take(wait=False): ...              # or asks once
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def take(self, *, wait: bool = True) -> bool:
        """Take the lock: wait for its holder (`wait`), or return False at once when another holds it."""
        if self._fd is not None:
            return True
        fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return True

    def release(self) -> None:
        """Let go of the lock (nothing when it is not held)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Flock:
        self.take()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def json_objects(text: str) -> list[dict[str, Any]]:
    """The JSON objects of JSON-lines text (a log, a note); other lines (noise, warnings) are passed over."""
    found = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            found.append(obj)
    return found


# What a write that failed for want of room leaves in a git objects folder: git's temporary object files, and
# the `.lock` files dulwich writes an object through (a close that fails leaves it behind).
DEBRIS = ("tmp_obj_*", "*.lock")


def clear_debris(objects: str | Path, since: float, *, settled: float = 0.0) -> list[Path]:
    """Remove the temporary files a failed write left in `objects/??/` since `since` (a time.time()), and
    untouched for `settled` seconds (a write still going on is left to finish); returns them. Older ones are
    left alone: they are no write of ours."""
    removed = []
    now = time.time()
    for pattern in DEBRIS:
        for path in Path(objects).glob(f"??/{pattern}"):
            try:
                mtime = path.lstat().st_mtime
                if mtime >= since - 1 and now - mtime >= settled:  # the file system's clock may round down
                    path.unlink()
                    removed.append(path)
            except FileNotFoundError:  # its writer finished after all
                pass
    return removed


ROOM = 64 << 20  # free bytes under which a disk counts as nearly full


def short_of_room(folder: str | Path) -> bool:
    """Whether the disk holding `folder` is nearly full (less than ROOM free, or few inodes): where a failed
    write is to be looked for."""
    st = os.statvfs(folder)
    return st.f_bavail * st.f_frsize < ROOM or bool(st.f_files and st.f_favail < 1024)
