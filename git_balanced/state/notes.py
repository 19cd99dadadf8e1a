"""Notes as JSON lines, merged `cat_sort_uniq`, written with compare-and-swap.

The notes tree is fanned out one level (`ab/cdef…`), which git reads like any other layout.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from git_balanced.files import json_objects
from git_balanced.git import Repo

LANDINGS = "refs/notes/balanced"
CHECKS = "refs/notes/balanced-checks"
MODE_FILE = 0o100644
MODE_TREE = 0o040000


def _subtree(repo: Repo, tree_id: bytes | None) -> Any:
    from dulwich.objects import Tree

    return repo.store[tree_id] if tree_id else Tree()


def _find(repo: Repo, root: Any, obj: str) -> tuple[str, bytes] | None:
    """Where a note for `obj` lives in a notes tree of any fan-out: (path, blob id)."""
    store = repo.store
    tree, path, rest = root, "", obj
    while True:
        try:
            mode, sha = tree[rest.encode()]
            return path + rest, sha
        except KeyError:
            pass
        try:
            mode, sha = tree[rest[:2].encode()]
        except KeyError:
            return None
        if mode != MODE_TREE or len(rest) <= 2:
            return None
        tree, path, rest = store[sha], path + rest[:2] + "/", rest[2:]


def lines_of(raw: bytes) -> list[str]:
    return [x for x in raw.decode("utf-8", "replace").splitlines() if x.strip()]


def merge_lines(*groups: list[str]) -> list[str]:
    """cat_sort_uniq: every line of every side, sorted, once."""
    return sorted({x for g in groups for x in g})


def read_lines(repo: Repo, notes_ref: str, obj: str, tip: str | None = None) -> list[str]:
    """The note lines on `obj` (a commit, tree or blob id)."""
    tip = tip or repo.read_ref(notes_ref)
    if not tip:
        return []
    root = repo.store[repo.store[tip.encode()].tree]
    found = _find(repo, root, obj)
    return lines_of(repo.store[found[1]].data) if found else []


def read_json(repo: Repo, notes_ref: str, obj: str) -> list[dict[str, Any]]:
    """The note on `obj` as a list of JSON records (lines that are not JSON are passed over)."""
    return json_objects("\n".join(read_lines(repo, notes_ref, obj)))


class Landing(NamedTuple):
    """A commit of the lead's branch and its landing notes (job, piece, attempt, machine, agent, cost...). A
    NamedTuple: the board reads them, and starts without `dataclasses`."""

    commit: str
    subject: str
    records: list[dict[str, Any]]


def landings(repo: Repo, revs: str, *, oldest_first: bool = False, most: int | None = None) -> list[Landing]:
    """The commits of `revs` (a branch, `A..B`) along first parents that carry landing notes, newest first
    unless `oldest_first`; `most` commits are looked at, at most."""
    if LANDINGS not in repo.list_refs(LANDINGS):  # through git: `git balanced log` need not load dulwich
        return []
    return _landings_in(repo.first_parent_log(revs, _LOGGED, notes="balanced", most=most, oldest_first=oldest_first))


_LOGGED = "%H%x1f%s%x1f%N%x1e"  # each commit: its id, subject and note, ended by \x1e and the newline git adds
_ENDED = "\x1e\n"  # at least once per commit in the output (a note could hold it too, never fewer times)


def _landings_in(out: str) -> list[Landing]:
    """The commits of a `git log` in the format _LOGGED that carry landing notes, in its order."""
    found = []
    for chunk in out.split("\x1e"):
        parts = chunk.strip("\n").split("\x1f")
        records = json_objects(parts[2]) if len(parts) == 3 else []
        if records:
            found.append(Landing(parts[0], parts[1], records))
    return found


def newest_landings(repo: Repo, tip: str, want: int, most: int) -> list[Landing]:
    """The `want` newest commits along first parents from the commit `tip` that carry landing notes, among its
    `most` newest commits: what `landings(repo, tip, most=most)[:want]` gives, read in batches that grow
    fourfold from twice `want`, so that git formats only as many commits as it takes to find them."""
    if repo.read_ref(LANDINGS) is None:  # read in-process: `git balanced log` need not load dulwich
        return []
    found: list[Landing] = []
    seen, batch = 0, 2 * want
    while seen < most and len(found) < want:
        asked = min(batch, most - seen)
        out = repo.first_parent_log(tip, _LOGGED, notes="balanced", most=asked, skip=seen)
        found += _landings_in(out)
        if (out + "\n").count(_ENDED) < asked:  # fewer commits than asked for (git_out takes the last newline)
            break
        seen, batch = seen + asked, batch * 4
    return found[:want]


def _set_note(repo: Repo, root_id: bytes | None, obj: str, lines: list[str]) -> str:
    """A new root tree with the note on `obj` at `ab/cdef…`, any other copy of it removed."""
    from dulwich.objects import Blob

    store = repo.store
    root = _subtree(repo, root_id).copy()
    old = _find(repo, root, obj) if root_id else None
    if old and "/" not in old[0]:
        del root[old[0].encode()]
    elif old and old[0].count("/") > 1:
        # A deeper fan-out written by another tool: leave it and shadow it at our level.
        pass
    blob = Blob.from_string(("\n".join(lines) + "\n").encode())
    store.add_object(blob)
    fan, rest = obj[:2].encode(), obj[2:].encode()
    try:
        mode, sub_id = root[fan]
        sub = store[sub_id].copy() if mode == MODE_TREE else _subtree(repo, None)
    except KeyError:
        sub = _subtree(repo, None)
    sub.add(rest, MODE_FILE, blob.id)
    store.add_object(sub)
    root.add(fan, MODE_TREE, sub.id)
    store.add_object(root)
    return root.id.decode()


def add_line(repo: Repo, notes_ref: str, obj: str, line: str, subject: str = "Notes added by git balanced") -> str:
    """Add one line to the note on `obj` (kept sorted and unique); compare-and-swap with retry."""

    def build(tip: str | None) -> str:
        root_id = repo.store[tip.encode()].tree if tip else None
        current = read_lines(repo, notes_ref, obj, tip) if tip else []
        tree = _set_note(repo, root_id, obj, merge_lines(current, [line]))
        return repo.write_commit(tree, [tip] if tip else [], subject + "\n")

    from git_balanced.state.refs import update_with_retry  # the writers' alone: `log` reads without it

    sha = update_with_retry(repo, notes_ref, build, "balanced: notes")
    assert sha is not None  # build never declines
    return sha


def add_json(repo: Repo, notes_ref: str, obj: str, record: dict[str, Any]) -> str:
    return add_line(repo, notes_ref, obj, json.dumps(record, sort_keys=True, ensure_ascii=False))


def all_notes(repo: Repo, tip: str) -> dict[str, list[str]]:
    """Every note in the notes commit `tip`, by annotated object id."""
    store = repo.store
    out: dict[str, list[str]] = {}

    def walk(tree: Any, prefix: str) -> None:
        for item in tree.items():
            name = item.path.decode()
            if item.mode == MODE_TREE:
                walk(store[item.sha], prefix + name)
            else:
                out[prefix + name] = lines_of(store[item.sha].data)

    walk(store[store[tip.encode()].tree], "")
    return out


def write_notes(repo: Repo, found: dict[str, list[str]]) -> str:
    """A root tree holding exactly the notes of `found` (their lines by annotated object id), fanned out one level
    as `_set_note` writes them; its id."""
    fans: dict[str, list[tuple[str, int, str]]] = {}
    for obj, lines in sorted(found.items()):
        blob = repo.write_blob(("\n".join(lines) + "\n").encode())
        fans.setdefault(obj[:2], []).append((obj[2:], MODE_FILE, blob))
    return repo.write_tree([(fan, MODE_TREE, repo.write_tree(entries)) for fan, entries in sorted(fans.items())])


def keep_only(repo: Repo, notes_ref: str, tip: str, kept: dict[str, list[str]], subject: str) -> bool:
    """Point `notes_ref`, still at `tip`, at one commit of no parent holding only the notes of `kept` (the ref
    removed when there are none): its history goes. For notes no one shares (`sync` carries LANDINGS and CHECKS
    only). False when another writer moved it first."""
    if not kept:
        return repo.cas_ref_delete(notes_ref, tip)
    new = repo.write_commit(write_notes(repo, kept), [], subject + "\n")
    return repo.cas_ref(notes_ref, new, tip, message="balanced: notes kept")


def has_history(repo: Repo, tip: str) -> bool:
    """Whether the notes commit `tip` has a parent."""
    return bool(repo.store[tip.encode()].parents)


def merge_notes_commit(repo: Repo, ours: str, theirs: str, subject: str) -> str:
    """A merge commit of two notes histories whose every note is the cat_sort_uniq of both sides."""
    a, b = all_notes(repo, ours), all_notes(repo, theirs)
    root_id: bytes | None = None
    tree = ""
    for obj in sorted(set(a) | set(b)):
        tree = _set_note(repo, root_id, obj, merge_lines(a.get(obj, []), b.get(obj, [])))
        root_id = tree.encode()
    if not tree:
        tree = repo.write_tree([])
    return repo.write_commit(tree, [ours, theirs], subject + "\n")


def add_json_many(repo: Repo, notes_ref: str, records: dict[str, dict[str, Any]],
                  subject: str = "Notes added by git balanced") -> str | None:
    """Add one JSON record to the note on each object of `records`, all in one notes commit (one ref update);
    None when there is nothing to add."""
    if not records:
        return None
    lines = {obj: json.dumps(record, sort_keys=True, ensure_ascii=False) for obj, record in records.items()}

    def build(tip: str | None) -> str:
        root_id = repo.store[tip.encode()].tree if tip else None
        for obj, line in lines.items():
            current = read_lines(repo, notes_ref, obj, tip) if tip else []
            root_id = _set_note(repo, root_id, obj, merge_lines(current, [line])).encode()
        assert root_id is not None
        return repo.write_commit(root_id.decode(), [tip] if tip else [], subject + "\n")

    from git_balanced.state.refs import update_with_retry

    return update_with_retry(repo, notes_ref, build, "balanced: notes")
