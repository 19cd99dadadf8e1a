"""Which repository a machine's copy belongs to (DESIGN §5): a random id made once and kept in the lead's
`.git/balanced/id`, tied to the repository's first commit, never the folder's name alone.

On a machine the copy of repository `app` is `~/app` when that is this repository's or free, else
`~/app-<short id>`. A copy records its owner in its git config (`balanced.repository`) and in a ref,
`refs/balanced/repository`, that points at a blob naming the id: a push that leases that ref (`--atomic
--force-with-lease`) goes into this repository's copy or nowhere, at no extra round trip.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from git_balanced import process
from git_balanced.errors import BalancedError
from git_balanced.files import write_json
from git_balanced.git import Repo

OWNER_REF = "refs/balanced/repository"
ID_FILE = "id"

@dataclass(frozen=True)
class Identity:
    """A repository's id (16 hex digits) and the first commit it was made for."""

    id: str
    root: str

    @property
    def short(self) -> str:
        return self.id[:8]

    @property
    def owner_text(self) -> str:
        """What the blob at OWNER_REF in a copy holds."""
        return f"git balanced copy of repository {self.id}\n"


class Known:
    """The identities this process has read, by repository (`process.part(Known)`): read or made once."""

    def __init__(self) -> None:
        self.ids: dict[str, Identity] = {}


def identity(repo: Repo, rev: str = "HEAD") -> Identity:
    """This repository's identity: read from `.git/balanced/id`, made once (from the roots of `rev`)."""
    here = str(repo.common_dir.resolve())
    known = process.part(Known).ids
    got = known.get(here)
    if got is not None:
        return got
    path = repo.state_dir / ID_FILE
    kept = _read(path)
    if kept is not None and _still_ours(repo, kept, here):
        if kept["path"] != here:  # the repository was moved, not copied: it is the same one
            _write(path, {**kept, "path": here}, replace=True)
        got = Identity(kept["id"], kept["root"])
    else:
        roots = repo.root_commits(rev)
        if not roots:
            raise BalancedError(f"The repository {repo.name} has no commits yet, so it has no identity to key its "
                                "copies on other machines by.", hint="make a first commit.")
        fresh = {"id": secrets.token_hex(8), "root": roots[-1], "path": here}  # the oldest root comes last
        if kept is None and not _write(path, fresh, replace=False):
            return identity(repo, rev)  # another process made it first: that one counts
        if kept is not None:
            _write(path, fresh, replace=True)
        got = Identity(fresh["id"], fresh["root"])
    known[here] = got
    return got


def _still_ours(repo: Repo, kept: dict[str, str], here: str) -> bool:
    """Whether a kept id is this repository's: its first commit is here (the file was not carried into an
    unrelated repository), and it was not copied along with a `.git` whose original still holds the same id."""
    if repo.rev_parse(kept["root"]) != kept["root"]:
        return False
    if kept["path"] == here:
        return True
    original = _read(Path(kept["path"]) / "balanced" / ID_FILE)
    return original is None or original["id"] != kept["id"]


def _read(path: Path) -> dict[str, str] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    ok = isinstance(data, dict) and all(isinstance(data.get(k), str) and data[k] for k in ("id", "root", "path"))
    return data if ok and all(c in "0123456789abcdef" for c in data["id"]) and len(data["id"]) == 16 else None


def _write(path: Path, data: dict[str, str], *, replace: bool) -> bool:
    """Write the id file; without `replace`, only if there is none yet (False when one appeared meanwhile)."""
    if replace:
        write_json(path, data)
        return True
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    tmp.write_text(json.dumps(data) + "\n")
    try:
        os.link(tmp, path)  # fails when the file exists: two processes never make two ids
        return True
    except FileExistsError:
        return False
    finally:
        tmp.unlink(missing_ok=True)


def owner_blob(repo: Repo, ident: Identity) -> str:
    """The id of the blob a copy's OWNER_REF points at, written into this repository (to be pushed)."""
    try:
        return repo.write_blob(ident.owner_text.encode())
    except OSError as exc:
        raise BalancedError(f"Could not write the copy's owner mark in {repo.root}: {exc}",
                            hint="check that the repository's .git folder is writable.") from exc


def owner_lease(repo: Repo, ident: Identity) -> tuple[str, str]:
    """The lease (`REF:ID`, see Repo.push) and refspec that make a push land in this repository's copy or not
    at all."""
    sha = owner_blob(repo, ident)
    return f"{OWNER_REF}:{sha}", f"{sha}:{OWNER_REF}"


def lease_refused(porcelain: str) -> bool:
    """Whether a push's porcelain output says the copy's owner mark was not this repository's."""
    return any(line.startswith("!") and OWNER_REF in line for line in porcelain.splitlines())


def copy_path(home: str, repo_name: str) -> str:
    """`<home>/<repository>`: where the copy of a repository of that name goes on a machine, when free."""
    if not repo_name or "/" in repo_name or repo_name in (".", "..") or repo_name.startswith("-") \
            or any(ord(c) < 32 for c in repo_name):
        raise BalancedError(f"The repository's folder name {repo_name!r} cannot name a folder on another machine.",
                            hint="rename the repository's folder to plain letters, digits, '.', '_' and '-'.")
    return f"{home.rstrip('/')}/{repo_name}"


def worktrees_folder(home: str, copy: str, repo_name: str) -> str:
    """Where the worktrees of the copy `copy` are made on a machine whose home is `home`."""
    short = hashlib.sha256(f"{copy}/.git".encode()).hexdigest()[:8]
    return f"{home.rstrip('/')}/.balanced/worktrees/{repo_name}-{short}"


# Runs on the machine inside ready's LOOK script (its `git`, `req` and `home` in scope): picks the copy of the
# repository `req["id"]`, and says in `elsewhere` why `~/<name>` is not it.
CHOOSE = r'''
def owner(copy):
    """("free" | "ours" | "older" | "other", why) of a folder that may be a copy."""
    if not os.path.lexists(copy):
        return "free", ""
    code, top = git("-C", copy, "rev-parse", "--show-toplevel")
    if code != 0 or os.path.realpath(top) != os.path.realpath(copy):
        return "other", "is not a git repository of its own"
    rid = git("-C", copy, "config", "balanced.repository")[1]
    if rid == req["id"]:
        return "ours", ""
    if rid:
        return "other", "is the copy of another repository (" + rid[:8] + ")"
    if git("-C", copy, "config", "--bool", "balanced.copy")[1] != "true":
        return "other", "is a git repository that git balanced did not make"
    # Made by a ready of before copies were keyed: this repository's project if it holds its first commit.
    if git("-C", copy, "cat-file", "-e", req["root"] + "^{commit}")[0] == 0 or not git("-C", copy, "for-each-ref")[1]:
        return "older", ""
    return "other", "is the copy of an unrelated project"

plain = os.path.join(home, req["name"])
keyed = plain + "-" + req["id"][:8]
kind, why = owner(plain)
copy = plain
if kind != "ours":
    kind2, why2 = owner(keyed)
    if kind2 == "ours" or kind not in ("free", "older"):
        copy, kind = keyed, kind2
        if why:
            ans["elsewhere"] = plain + " " + why
        if kind2 == "other":
            ans["problem"] = keyed + " " + why2 + ", and " + plain + " " + why
'''
