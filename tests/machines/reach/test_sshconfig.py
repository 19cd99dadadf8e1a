"""Listing and resolving the hosts of an SSH config, with Include, patterns and Match."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from git_balanced.errors import BalancedError
from git_balanced.machines.reach import sshconfig
from git_balanced.machines.reach.transport import Transport
from tests.support.sshd import sshd_machines


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.sshd
def test_inventory_of_the_harness_follows_include_and_connects(tmp_path: Path) -> None:
    with sshd_machines(tmp_path, ["alpha", "beta"]) as ms:
        hosts = sshconfig.inventory()
        assert [h.alias for h in hosts] == ["beta", "alpha"], "the Include sits above the Host blocks"
        for h in hosts:
            m = ms.by_name(h.alias)
            assert (h.hostname, h.user, h.port) == ("127.0.0.1", m.user, m.port)
            t = Transport(h.alias)
            try:
                assert t.run(["id", "-un"]).out.strip() == m.user
            finally:
                t.close()


def test_patterns_negations_and_strange_names_are_skipped(sealed: Path) -> None:
    config = write(sealed / ".ssh" / "config", """
# a comment: Host hidden
Host build-box gpu?  *.example.com !bastion
    HostName 10.0.0.5
    User ci
Host=laptop
  Port=2200
Host "-oProxyCommand=touch /tmp/x" ok-too   # a trailing comment
Host *
    ServerAliveInterval 30
""")
    assert sshconfig.aliases(config) == ["build-box", "laptop", "ok-too"]
    laptop = sshconfig.resolve("laptop", config)
    assert (laptop.hostname, laptop.port) == ("laptop", 2200)
    box = sshconfig.resolve("build-box", config)
    assert (box.hostname, box.user, box.port, box.address) == ("10.0.0.5", "ci", 22, "ci@10.0.0.5:22")


def test_include_relative_to_dot_ssh_globbed_and_nested(sealed: Path) -> None:
    ssh_dir = sealed / ".ssh"
    write(ssh_dir / "conf.d" / "b.conf", "Host bravo\n  HostName b.internal\n  Include nested.conf\n")
    write(ssh_dir / "conf.d" / "a.conf", "Host alfa\n  HostName a.internal\n  ProxyJump bravo\n")
    write(ssh_dir / "nested.conf", "Port 2022\nHost charlie\n  User carl\n")
    write(ssh_dir / "all.conf", "Host echo\n")
    config = write(
        ssh_dir / "config",
        "Include conf.d/*.conf\nInclude ~/.ssh/missing-is-fine\nHost delta\nMatch all\nInclude all.conf\n",
    )
    # nested.conf is included inside `Host bravo`: its `Host charlie` could only match a name that is
    # both bravo and charlie, so charlie is no machine; `Match all` includes unconditionally.
    assert sshconfig.aliases(config) == ["alfa", "bravo", "delta", "echo"]
    by_alias = {h.alias: h for h in sshconfig.inventory(config)}
    assert by_alias["alfa"].hostname == "a.internal" and by_alias["alfa"].proxyjump == "bravo"
    assert by_alias["bravo"].proxyjump is None
    assert by_alias["bravo"].port == 2022 and by_alias["delta"].port == 22, "ssh -G applied the nesting"
    assert sshconfig.resolve("charlie", config).user != "carl"


def test_match_blocks_apply_through_ssh(sealed: Path) -> None:
    config = write(
        sealed / ".ssh" / "config", "Host gpu\n  HostName 10.1.1.1\nMatch host 10.1.1.1\n  User trainer\n"
    )
    assert sshconfig.resolve("gpu", config).user == "trainer"


def test_include_loop_is_an_error_naming_the_file(sealed: Path) -> None:
    config = write(sealed / ".ssh" / "config", "Host a\nInclude other\n")
    write(sealed / ".ssh" / "other", "Host b\nInclude config\n")
    with pytest.raises(BalancedError, match="includes itself"):
        sshconfig.aliases(config)


def test_no_config_at_all_offers_no_hosts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GIT_BALANCED_SSH_CONFIG")
    assert not (Path(os.environ["HOME"]) / ".ssh" / "config").exists()
    assert sshconfig.aliases() == []
