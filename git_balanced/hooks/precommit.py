"""The balanced hooks in `.pre-commit-config.yaml` (edited round-trip, comments kept) and their install."""

from __future__ import annotations

import io
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark, MarkedYAMLError, YAMLError
from ruamel.yaml.tokens import CommentToken

from git_balanced import proc
from git_balanced.errors import BalancedError, GitError, NotARepository, SettingsError
from git_balanced.files import write_atomic
from git_balanced.git import Repo, run_git
from git_balanced.hooks.plain import hooks_dir, is_pre_commit_script

CONFIG = ".pre-commit-config.yaml"
HOOK_TYPES = ("pre-merge-commit", "pre-push")
HOOK_IDS = tuple(f"balanced-{t}" for t in HOOK_TYPES)
_NAMES = {
    "pre-merge-commit": "check a merge into the lead's branch (git balanced)",
    "pre-push": "push only checked commits (git balanced)",
}
# Every stage pre-commit (3.2 and later) knows, in its own order: a hook without `stages:` runs on all of
# them when the file has no `default_stages`.
STAGES = ("commit-msg", "post-checkout", "post-commit", "post-merge", "post-rewrite", "pre-commit",
          "pre-merge-commit", "pre-push", "pre-rebase", "prepare-commit-msg", "manual")
# The old stage names of the hook types `init` installs, which pre-commit still reads.
_OLD_NAMES = {"merge-commit": "pre-merge-commit", "push": "pre-push"}
# How a hook script written by `pre-commit install` says so: its notice, and the ids its versions wrote.
_STAGES_NOTE = ("Hooks without `stages:` run at these: every stage but the hook types\n"
                "`git balanced init` installed first, so they run where they ran before it.")

# The layout of a new file, and of an existing one whose layout cannot be guessed: `  - repo: local`.
_DEFAULT_INDENT = (2, 4, 2)


def balanced_hooks(entry: str = "git balanced", language: str = "system") -> list[dict[str, Any]]:
    """The two hook definitions, as pre-commit reads them; `entry` is the command before `hook NAME`."""
    return [
        {
            "id": f"balanced-{t}",
            "name": _NAMES[t],
            "entry": f"{entry} hook {t}",
            "language": language,
            "stages": [t],
            "pass_filenames": False,
            "always_run": True,
        }
        for t in HOOK_TYPES
    ]


def add_balanced_hooks(root: Path, newly: list[str] | None = None) -> bool:
    """Add the balanced hooks to `<root>/.pre-commit-config.yaml`, creating it if needed; False if
    they were already there (the file is then left untouched). `newly` is `newly_installed`'s answer, when
    the caller has it already."""
    path = Path(root) / CONFIG
    text, newline = _read(path)
    yaml = _yaml(text)
    data = _load(yaml, text, path)
    if data is None:
        # Empty, or only comments (ruamel drops them with no document to hang them on): keep them as they are.
        data = CommentedMap()
        data["repos"] = CommentedSeq()
        head = text.rstrip("\n") + "\n" if text.strip() else ""
    else:
        head = ""
    if not isinstance(data, CommentedMap):
        raise SettingsError(f"{path}: the top level is not a mapping with a `repos:` key.",
                            hint=f"see https://pre-commit.com/#plugins for its shape, then fix {path}")
    if data.get("repos") is None:
        data["repos"] = CommentedSeq()
    repos = data["repos"]
    if not isinstance(repos, CommentedSeq):
        raise SettingsError(f"{path}: `repos` is not a list.",
                            hint=f"make `repos:` in {path} a list of repos")
    owner, present = _existing(repos)
    missing = [h for h in balanced_hooks() if h["id"] not in present]
    staged = _default_stages(data, newly_installed(root) if newly is None else newly)
    if not missing and not staged:
        return False
    if missing:
        _add_hooks(repos, owner, missing)
    out = io.StringIO()
    yaml.dump(data, out)
    _write(path, head + out.getvalue(), newline)
    return True


def _add_hooks(repos: CommentedSeq, owner: CommentedMap | None, missing: list[dict[str, Any]]) -> None:
    """The missing balanced hooks, in the local entry that holds the others or in a new one at the end."""
    if owner is not None:
        owner["hooks"].extend(_hook_map(h) for h in missing)
    else:
        if not len(repos):
            repos.fa.set_block_style()
        tail = _steal_tail(repos[-1]) if len(repos) else ""
        entry = CommentedMap()
        entry["repo"] = "local"
        entry["hooks"] = CommentedSeq(_hook_map(h) for h in missing)
        repos.append(entry)
        if tail:
            # Comment lines that closed the list stay at its end, after the new entry.
            last = entry["hooks"][-1]
            token = CommentToken("\n" + tail, CommentMark(0), None)
            last.ca.items[list(last)[-1]] = [None, None, token, None]


def _default_stages(data: CommentedMap, newly: list[str]) -> bool:
    """Give the file a `default_stages:` before `repos:` when it has none (one of the user's own is kept as it
    is): every stage but the hook types `init` installs where none was, so a hook without `stages:` runs
    where it ran before and nowhere new. True when it was added."""
    if "default_stages" in data or not newly:
        return False
    stages = CommentedSeq(s for s in STAGES if s not in newly)
    stages.fa.set_flow_style()
    data.insert(list(data).index("repos"), "default_stages", stages)
    data.yaml_set_comment_before_after_key("default_stages", before=_STAGES_NOTE)
    return True


def installed_hook_types(where: Repo | Path) -> set[str]:
    """The hook types `pre-commit install` wrote a script for in the repository's hooks folder (the one
    core.hooksPath names, if set); none outside a repository."""
    try:
        repo = where if isinstance(where, Repo) else Repo.discover(where)
        folder, _ = hooks_dir(repo)
    except (NotARepository, GitError, OSError):
        return set()
    found = set()
    for kind in STAGES:
        try:
            text = (folder / kind).read_bytes()
        except OSError:
            continue
        if is_pre_commit_script(text):
            found.add(kind)
    return found


def newly_installed(where: Repo | Path) -> list[str]:
    """The hook types `install_hooks` adds to the repository's own setup: those pre-commit has no script
    for yet, and which the file's `default_install_hook_types` (what `pre-commit install` installs) leaves
    out."""
    root = where.root if isinstance(where, Repo) else Path(where)
    have = installed_hook_types(where) | set(_install_types(root / CONFIG))
    return [t for t in HOOK_TYPES if t not in have]


def _install_types(path: Path) -> list[str]:
    """The file's `default_install_hook_types`, or pre-commit's own default; [] if it cannot be read (the
    edit then reports why)."""
    try:
        text, _ = _read(path)
        data = _load(_yaml(text), text, path)
    except SettingsError:
        return []
    types = data.get("default_install_hook_types") if isinstance(data, dict) else None
    return [str(t) for t in types] if isinstance(types, list) else ["pre-commit"]


def hooks_starting_at(root: Path, newly: list[str] | None = None) -> dict[str, list[str]]:
    """The repository's own hooks that will start to run at a hook type `init` installs there for the first
    time, because their `stages:` (or the file's own `default_stages`) name it: {hook id: [hook types]}.
    `init` says so, as it cannot tell whether they were meant to wait for that hook to be installed."""
    newly = newly_installed(root) if newly is None else newly
    path = Path(root) / CONFIG
    if not newly or not path.is_file():
        return {}
    text, _ = _read(path)
    data = _load(_yaml(text), text, path)
    if not isinstance(data, dict) or not isinstance(data.get("repos"), list):
        return {}
    default = data.get("default_stages")
    out: dict[str, list[str]] = {}
    for repo in data["repos"]:
        hooks = repo.get("hooks") if isinstance(repo, dict) else None
        for hook in hooks if isinstance(hooks, list) else []:
            if not isinstance(hook, dict) or hook.get("id") in HOOK_IDS:
                continue
            stages = hook.get("stages", default)
            if not isinstance(stages, list):
                continue
            named = {_OLD_NAMES.get(str(s), str(s)) for s in stages}
            hit = [t for t in newly if t in named]
            if hit:
                out[str(hook.get("id"))] = hit
    return out


def install_hooks(root: Path) -> None:
    """Install the pre-commit framework's `pre-merge-commit` and `pre-push` hooks in the repository."""
    res = run_git(["config", "--show-scope", "--get", "core.hooksPath"], cwd=root)
    if res.ok and res.out.strip():
        scope, _, value = res.out.strip().partition("\t")
        unset = {
            "command": "run without `-c core.hooksPath` (or unset GIT_CONFIG_PARAMETERS)",
            "system": "sudo git config --system --unset-all core.hooksPath",
        }.get(scope, f"git config --{scope} --unset-all core.hooksPath")
        raise BalancedError(
            f"core.hooksPath is set to {value} (in the {scope} git config), so git would not run hooks "
            "installed by pre-commit; the balanced hooks were not installed.",
            hint=f"{unset}, then run `git balanced init` again; or `git balanced init --hooks git` installs "
                 f"plain git hooks in {value}")
    exe = _pre_commit_exe()
    cmd = [exe, "install", *(a for t in HOOK_TYPES for a in ("--hook-type", t))]
    res = proc.run(cmd, cwd=root, env=proc.no_git_env(), timeout=120)
    if not res.ok:
        said = (res.err.strip() or res.out.strip()).splitlines()[-10:]
        raise BalancedError(
            f"`pre-commit install` failed (exit {res.code}) in {root}:\n    " + "\n    ".join(said),
            hint="run `pre-commit install --hook-type pre-merge-commit --hook-type pre-push` to see why")


def _pre_commit_exe() -> str:
    # The pre-commit installed with us first: the one on PATH may be another version, or missing.
    beside = Path(sys.executable).parent / "pre-commit"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("pre-commit")
    if found is None:
        raise BalancedError("pre-commit is not installed: neither next to "
                            f"{sys.executable} nor on PATH.", hint="pip install pre-commit")
    return found


def _read(path: Path) -> tuple[str, str]:
    """The file's text ('' when missing) and its line ending, which the edit keeps."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return "", "\n"
    except OSError as exc:
        raise SettingsError(f"{path} cannot be read: {exc.strerror}.", hint=f"check {path}") from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SettingsError(f"{path} is not UTF-8 text (byte {exc.start}).",
                            hint=f"save {path} as UTF-8") from exc
    newline = "\r\n" if "\r\n" in text else "\n"
    return text.replace("\r\n", "\n"), newline


def _load(yaml: YAML, text: str, path: Path) -> Any:
    try:
        return yaml.load(text) if text.strip() else None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = exc.problem or exc.context or "broken YAML"
        if mark is None:
            raise SettingsError(f"{path} is not valid YAML: {what}.", hint=f"fix {path}") from None
        line, col = mark.line + 1, mark.column + 1
        lines = text.split("\n")
        shown = lines[line - 1] if line <= len(lines) else ""
        raise SettingsError(
            f"{path} is not valid YAML at line {line}, column {col}: {what}.\n"
            f"    {line} | {shown}\n    {' ' * len(str(line))} | {' ' * (col - 1)}^",
            hint=f"fix line {line} of {path}, then run `git balanced init` again") from None
    except YAMLError as exc:
        raise SettingsError(f"{path} is not valid YAML: {exc}.", hint=f"fix {path}") from None


def _yaml(text: str) -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap a long line of the user's
    mapping, sequence, offset = _guess_indent(text)
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    yaml.explicit_start = bool(re.match(r"(\s*#[^\n]*\n|\s*\n)*---", text))
    return yaml


def _guess_indent(text: str) -> tuple[int, int, int]:
    """(mapping indent, sequence indent, dash offset) as the file already uses them."""
    mapping: int | None = None
    sequence: int | None = None
    offset = 0
    key_only = None  # indent of the last `key:` line with its value on the lines below
    for line in text.split("\n"):
        body = line.lstrip(" ")
        if not body or body.startswith("#"):
            continue
        indent = len(line) - len(body)
        if key_only is not None and body.startswith("- ") and indent >= key_only and sequence is None:
            offset = indent - key_only
            sequence = offset + len(body) - len(body[1:].lstrip(" "))
        elif key_only is not None and not body.startswith("-") and indent > key_only and mapping is None:
            mapping = indent - key_only
        key_only = indent if re.fullmatch(r"[^\s#-][^#]*:\s*(#.*)?", body) else None
        if body.startswith("- ") and re.fullmatch(r"-\s+[^\s#][^#]*:\s*(#.*)?", body):
            key_only = indent + len(body) - len(body[1:].lstrip(" "))
    if sequence is None:
        return _DEFAULT_INDENT[0] if mapping is None else mapping, *_DEFAULT_INDENT[1:]
    return mapping or max(sequence - offset, 2), sequence, offset


def _existing(repos: CommentedSeq) -> tuple[CommentedMap | None, set[str]]:
    """Which balanced hook ids are configured anywhere, and the local repo entry holding one of them."""
    present: set[str] = set()
    owner = None
    for repo in repos:
        hooks = repo.get("hooks") if isinstance(repo, dict) else None
        if not isinstance(hooks, list):
            continue
        for hook in hooks:
            hook_id = hook.get("id") if isinstance(hook, dict) else None
            if hook_id in HOOK_IDS:
                present.add(hook_id)
                if repo.get("repo") == "local" and isinstance(hooks, CommentedSeq):
                    owner = repo
    return owner, present


def _hook_map(hook: dict[str, Any]) -> CommentedMap:
    out = CommentedMap()
    for key, value in hook.items():
        if isinstance(value, list):
            value = CommentedSeq(value)
            value.fa.set_flow_style()
        out[key] = value
    return out


def _steal_tail(node: Any) -> str:
    """Detach the comment lines after the last item of `node` (not its end-of-line comment)."""
    taken = []
    while isinstance(node, CommentedMap | CommentedSeq) and len(node):
        for tok in node.ca.end or []:
            taken.append(" " * tok.start_mark.column + tok.value if tok.value.startswith("#") else tok.value)
        node.ca.end = []
        last = list(node)[-1] if isinstance(node, CommentedMap) else len(node) - 1
        slot = node.ca.items.get(last)
        at = 2 if isinstance(node, CommentedMap) else 0
        if slot and len(slot) > at and isinstance(slot[at], CommentToken):
            own_line, newline, rest = slot[at].value.partition("\n")
            if rest:
                taken.append(rest)
                slot[at].value = own_line + newline
        node = node[last]
    return "".join(taken)


def _write(path: Path, text: str, newline: str) -> None:
    """Replace the file at once, keeping its mode, so a reader never sees half of it."""
    target = path.resolve()
    text = text.rstrip("\n") + "\n"
    if newline != "\n":
        text = text.replace("\n", newline)
    write_atomic(target, text, mode=target.stat().st_mode & 0o7777 if target.exists() else 0o644)
