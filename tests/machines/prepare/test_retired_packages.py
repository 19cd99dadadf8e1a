"""`ready` takes an agent's package under its old name off a machine before installing the pinned one: npm
refuses to replace another package's `~/.local/bin/pi` (EEXIST)."""

from __future__ import annotations

from typing import Any

from git_balanced import proc
from git_balanced.machines.inventory import pins
from git_balanced.machines.prepare import install


class Recorder:
    """A machine that answers every command with success and remembers them."""

    name = "box"

    def __init__(self) -> None:
        self.commands: list[list[str]] = []

    def run(self, argv: list[str], **_: Any) -> proc.Result:
        self.commands.append(argv)
        return proc.Result(0, "", "")


def npm_calls(t: Recorder) -> list[list[str]]:
    return [argv[4:] for argv in t.commands if argv[:2] == ["sh", "-c"] and "exec npm" in argv[2]]


def test_pis_old_package_is_removed_before_the_new_one_goes_in() -> None:
    t = Recorder()
    said = install.install_agents(t, install.Facts({"home": "/home/ada", "registry": True}), ["pi"],  # type: ignore[arg-type]
                                  lambda _: None)
    assert "installed into ~/.local from the npm registry" in said
    calls = npm_calls(t)
    assert calls[0][:4] == ["uninstall", "-g", "--prefix", "/home/ada/.local"]
    assert calls[0][-1] == "@mariozechner/pi-coding-agent" and "--offline" in calls[0]
    assert calls[1][0] == "install" and calls[1][-1] == pins.spec("pi") == "@earendil-works/pi-coding-agent@1.6.0"


def test_agents_with_no_old_name_are_only_installed() -> None:
    t = Recorder()
    install.install_agents(t, install.Facts({"home": "/home/ada", "registry": True}), ["claude"],  # type: ignore[arg-type]
                           lambda _: None)
    assert [c[0] for c in npm_calls(t)] == ["install"]
