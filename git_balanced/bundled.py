"""The files shipped beside the code: `templates/` and the plain git hooks of `hooks/`.

Both folders sit at the top of the repository; pyproject.toml maps them to the packages
`git_balanced.templates` and `git_balanced.hook_scripts`, so a wheel and an editable install find them
through importlib.resources. A checkout run without installing it has no such packages: then the folders
are read where they are."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

HOOK_SCRIPTS = ("pre-merge-commit", "pre-push")


def _folder(package: str, top: str) -> Traversable:
    from importlib import resources  # here: it brings tempfile and shutil, which most commands never use

    try:
        return resources.files(package)
    except ModuleNotFoundError:
        return Path(__file__).resolve().parent.parent / top


def template(name: str) -> Traversable:
    """A file of templates/, by its path there (`worker.md`, `settings/python.toml`)."""
    return _folder("git_balanced.templates", "templates").joinpath(*name.split("/"))


PART = re.compile(r"^// \{part ([\w.-]+)\}\n", re.M)  # a line naming a part of templates/ to write in its place


def template_text(name: str) -> str:
    """The text of a file of templates/, each part it names (`// {part pi-part.ts}`, a line) written in: a file
    an agent loads is whole, and what several share is kept once."""
    text = template(name).read_text(encoding="utf-8")
    return PART.sub(lambda m: template_text(m.group(1)), text)


def hook_script(name: str) -> Traversable:
    """One of the plain git hook scripts of hooks/ (`pre-merge-commit`, `pre-push`)."""
    return _folder("git_balanced.hook_scripts", "hooks").joinpath(name)
