"""`git balanced hook pre-push`, started light: what git_hooks.pre_push decides, read with os and one
`git cat-file --batch` (git/catfile.py) rather than the settings' model, dulwich and the door.

It reads what it needs in rounds of that one process: the committed settings at HEAD and each pushed lead
branch's tip (its tree), then the check notes on those trees (refs/notes/balanced-checks) and, for a tip without
one, the landing notes on it (refs/notes/balanced), each found in the notes tree as state/notes.py finds it. The
check command is the committed settings', checked once by their model (settings.py) and kept by the settings
file's blob id in `.git/balanced/cache/settings/pre-push.json` (settings_kept.py: beside the checked settings the
engine keeps, under the same fingerprint of the models), so a push after the first reads no model.

Where every pushed lead branch's tip passed, or none is pushed, or there is no check, it says nothing and lets
the push go. Anything else (a tip that did not pass, settings that are not yet or not rightly read, a detached or
odd HEAD, a worker's copy, a note it cannot read as the door reads it) goes to git_hooks.pre_push, which says
what is wrong in its own words: this only ever answers where the door would let the push go.
"""

from __future__ import annotations

import os

from git_balanced import settings_kept
from git_balanced.git import catfile, peek
from git_balanced.git.discover import found_paths
from git_balanced.shipped import lightjson

TYPE_CHECKING = False  # typing is not imported for this: a push would pay for it
if TYPE_CHECKING:
    from typing import Any

SETTINGS_PATH = ".magnum/settings.toml"  # settings.py's
ZERO = "0" * 40  # git/refs.py's: a ref being deleted
WORKER_PREFIX = "refs/heads/balanced/"  # git_hooks.WORKER_PREFIX, under refs/heads/
CHECKS, LANDINGS = "refs/notes/balanced-checks", "refs/notes/balanced"  # state/notes.py's
MODE_TREE = 0o040000
CHECKED_FILE = "pre-push.json"  # in settings_kept.folder
CHECKED_KEPT = 16  # settings blobs remembered
MOST_TIPS = 256  # lead tips read here at most: Batch.read writes all its names before it reads, so pipes bound it
_HEX = frozenset("0123456789abcdef")


def pushed(stdin: str | None) -> list[tuple[str, str]] | None:
    """(remote ref, local sha) of each ref pushed, as git_hooks._pushed reads them (git's stdin, or pre-commit's
    PRE_COMMIT_* variables); None where it must ask git (pre-commit named a branch, not a commit)."""
    local = os.environ.get("PRE_COMMIT_LOCAL_BRANCH")
    if local:
        sha = os.environ.get("PRE_COMMIT_TO_REF")
        if not sha:
            return None
        return [(os.environ.get("PRE_COMMIT_REMOTE_BRANCH") or local, sha)]
    out = []
    for line in (stdin or "").splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[1] != ZERO:
            out.append((parts[2], parts[1]))
    return out


def _lead_tips(refs: list[tuple[str, str]]) -> list[str] | None:
    """The pushed tips of lead branches (git_hooks._lead_branch); None where one is not a full object id."""
    tips = [sha for ref, sha in refs if ref.startswith("refs/heads/") and not ref.startswith(WORKER_PREFIX)]
    return tips if all(len(t) in (40, 64) and set(t) <= _HEX for t in tips) else None


def _checked(state_dir: str) -> dict[str, Any]:
    try:
        with open(f"{settings_kept.folder(state_dir)}/{CHECKED_FILE}", encoding="utf-8") as fh:
            kept = lightjson.loads(fh.read())
    except (OSError, ValueError):
        return {}
    return kept if isinstance(kept, dict) and kept.get("stamp") == settings_kept.fingerprint() else {}


def check_of(state_dir: str, blob: str, text: str) -> tuple[str, str] | None | bool:
    """(check command, its hash) as the committed settings `text` (blob `blob`) name them, None for no check;
    False where the settings' model refuses them (the door says why). Checked by the model once per blob."""
    kept = _checked(state_dir)
    known = (kept.get("blobs") or {}).get(blob)
    if isinstance(known, dict):  # kept as {"check": None} (no check) or a command and its hash; else read again
        check, digest = known.get("check"), known.get("hash")
        if isinstance(check, str) and isinstance(digest, str):
            return check, digest
        if check is None and "check" in known:
            return None
    from git_balanced.errors import BalancedError
    from git_balanced.landing.checks import command_hash
    from git_balanced.settings import load_settings_text

    try:
        settings = load_settings_text(text, f"{SETTINGS_PATH} at HEAD")
    except BalancedError:
        return False
    check = settings.worktree.check
    found = (check, command_hash(check)) if check else None
    _keep(state_dir, kept, blob, found)
    return found


def _keep(state_dir: str, kept: dict[str, Any], blob: str, found: tuple[str, str] | None) -> None:
    """Remember what the settings of `blob` name (the newest CHECKED_KEPT blobs); a write that fails is let go."""
    import json

    from git_balanced.files import write_atomic

    blobs = {b: v for b, v in (kept.get("blobs") or {}).items() if b != blob}
    blobs[blob] = {"check": found[0], "hash": found[1]} if found else {"check": None}
    blobs = dict(list(blobs.items())[-CHECKED_KEPT:])
    try:
        os.makedirs(settings_kept.folder(state_dir), exist_ok=True)
        write_atomic(f"{settings_kept.folder(state_dir)}/{CHECKED_FILE}",
                     json.dumps({"stamp": settings_kept.fingerprint(), "blobs": blobs}) + "\n")
    except OSError:
        pass


def _note(batch: catfile.Batch, notes_ref: str, obj: str) -> list[dict[str, Any]]:
    """The note on `obj` in `notes_ref` as JSON records, found as state/notes.py's _find finds it (any fan-out)
    and read as read_json reads it."""
    (head,) = batch.read([notes_ref])
    if head is None:
        return []
    tree_id = catfile.commit_tree(head[2]) if head[1] == "commit" else None
    if tree_id is None:
        raise catfile.Unread(f"{notes_ref} is not a commit")
    rest = obj
    while True:
        (tree,) = batch.read([tree_id])
        if tree is None or tree[1] != "tree":
            raise catfile.Unread(f"{notes_ref}: {tree_id} is not a tree")
        entries = catfile.tree_entries(tree[2], len(tree_id) // 2)
        if rest in entries:
            (blob,) = batch.read([entries[rest][1]])
            if blob is None:
                raise catfile.Unread(f"{notes_ref}: the note on {obj} is missing")
            return _records(blob[2])
        mode, sub = entries.get(rest[:2], (0, ""))
        if mode != MODE_TREE or len(rest) <= 2:
            return []
        tree_id, rest = sub, rest[2:]


def _records(raw: bytes) -> list[dict[str, Any]]:
    """files.json_objects of state/notes.py's lines_of: the JSON objects among the note's lines."""
    lines = "\n".join(x for x in raw.decode("utf-8", "replace").splitlines() if x.strip())
    found = []
    for line in lines.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = lightjson.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            found.append(obj)
    return found


def passed(batch: catfile.Batch, tip: str, tree: str, check: str, digest: str) -> bool | None:
    """Whether the tip passed as git_hooks._passed judges it: its tree's newest check record for `check`, else a
    landing note on it; None where that record is not one the door reads as a CheckResult."""
    found = [r for r in _note(batch, CHECKS, tree) if r.get("command_hash") == digest]
    if found:
        r = max(found, key=lambda x: x.get("at", 0))
        try:  # what checks.cached makes of it: a record it cannot read is the door's to raise
            int(r.get("code", 1)), float(r.get("seconds", 0)), float(r.get("at", 0))
        except (TypeError, ValueError):
            return None
        return bool(r.get("result") == "pass")
    return any(n.get("result") == "pass" and n.get("check") == check for n in _note(batch, LANDINGS, tip))


def pre_push(stdin: str | None) -> int | None:
    """0 where git_hooks.pre_push would let the push go without a word; None where it is to decide."""
    refs = pushed(stdin)
    where = os.environ.get("GIT_WORK_TREE") or None
    found = found_paths(os.path.realpath(where or os.getcwd()))
    tips = _lead_tips(refs) if refs is not None else None
    if found is None or tips is None or len(tips) > MOST_TIPS or peek.branch_of(found[1]) is None:
        return None
    try:
        with catfile.Batch(found[0]) as batch:
            return _decided(batch, f"{found[2]}/balanced", found[0], tips)
    except Exception:  # noqa: BLE001 — anything unlooked-for here is the door's to read, and to say
        return None


def _decided(batch: catfile.Batch, state_dir: str, root: str, tips: list[str]) -> int | None:
    """pre_push's answer, read through `batch`."""
    settings, *commits = batch.read([f"HEAD:{SETTINGS_PATH}", *tips])
    if settings is None or settings[1] != "blob":
        # Repo.show_file's None: the settings in the working tree count, which the door reads; none, no check
        return None if os.path.lexists(f"{root}/{SETTINGS_PATH}") else 0
    check = check_of(state_dir, settings[0], settings[2].decode("utf-8", "replace"))
    if check is None:
        return 0
    if not isinstance(check, tuple):
        return None  # the model refuses the settings: the door says why
    for tip, commit in zip(tips, commits, strict=True):
        tree = catfile.commit_tree(commit[2]) if commit is not None and commit[1] == "commit" else None
        if tree is None or not passed(batch, tip, tree, *check):
            return None  # refused, or not read as the door reads it: the door says which, in its own words
    return 0
