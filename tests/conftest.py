"""The hermetic seal (DESIGN §12) and the shared builders every test uses."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import agent_home, sshd
from tests.support.builders import commit, make_remote, make_repo  # noqa: F401  (re-exported)
from tests.support.cli import forget_process_state

# The modules that take longest (their tests' time summed, `pytest --durations`), longest first. With `make test`'s
# `--dist loadfile --no-loadscope-reorder` the workers are handed modules in this order, so a long module
# starts early instead of holding up the end of the run; the rest follow, those with sshd machines or agent
# CLIs before the quick ones. A worker running a module of one or two tests is handed the next at once, so the
# long modules of one test each (the chief's runs) come after the first four, one behind each of them.
LONGEST_FIRST = (
    "tests/machines/prepare/test_ready_install.py", "tests/e2e/test_careless_workers.py",
    "tests/e2e/test_remote_workers.py", "tests/e2e/test_headless_lead.py",
    "tests/e2e/test_chief_claude.py", "tests/e2e/test_chief_pi.py", "tests/e2e/test_lead_plugins.py",
    "tests/commands/test_init.py", "tests/e2e/test_machine_lost.py", "tests/landing/test_safety.py",
    "tests/machines/prepare/test_agents_per_machine.py", "tests/e2e/test_careless_remote.py",
    "tests/e2e/test_real_agents.py", "tests/machines/boxes/test_box_on_machine.py", "tests/e2e/test_agents_real.py",
    "tests/machines/boxes/test_containers.py", "tests/e2e/test_lead_agents.py", "tests/engine/test_nodes.py",
    "tests/engine/test_limits.py", "tests/hooks/test_modes.py", "tests/e2e/test_worker_plans.py",
    "tests/engine/test_budget.py", "tests/forge/test_real_agent_fix.py", "tests/e2e/test_untrusted_machines.py",
    "tests/e2e/test_tell_agent.py", "tests/forge/test_headless_fix.py", "tests/e2e/test_idle_lead.py",
)


def _rank(item: pytest.Item) -> tuple[int, int]:
    path = item.nodeid.split("::", 1)[0]
    if path in LONGEST_FIRST:
        return 0, LONGEST_FIRST.index(path)
    slow = item.get_closest_marker("sshd") or item.get_closest_marker("agents")
    return (1 if slow else 2), 0


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that asks for the real agent CLIs is an `agents` test (`make test-fast` leaves those out); the
    longest modules go first (a stable sort: each module's tests keep their order)."""
    for item in items:
        if "agent_bin" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.agents)
    items.sort(key=_rank)


@pytest.fixture(autouse=True)
def _sshd_only_when_marked(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a test marked `sshd` may start sshd machines, so `make test-fast` never waits for one."""
    if request.node.get_closest_marker("sshd") is None:
        def refused(*args: object, **kwargs: object) -> sshd.Machines:
            pytest.fail("this test starts sshd machines: mark it @pytest.mark.sshd")

        monkeypatch.setattr(sshd, "start_machines", refused)


@pytest.fixture(autouse=True)
def sealed(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own HOME and XDG folders, no system git config, fixed identity and dates."""
    home = tmp_path_factory.mktemp("home")
    for var in list(os.environ):
        if var.startswith("GIT_") or var.startswith("BALANCED_") or var.startswith("XDG_"):
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    # `git balanced` (and the hooks that call it) must find this venv's console script.
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Ada Lead")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "ada@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Ada Lead")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "ada@example.com")
    monkeypatch.setenv("GIT_AUTHOR_DATE", "2026-01-01T00:00:00+00:00")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-01-01T00:00:00+00:00")
    monkeypatch.setenv("GIT_TEMPLATE_DIR", "")
    monkeypatch.setenv("GIT_EDITOR", "false")
    monkeypatch.setenv("GIT_TERMINAL_PROMPT", "0")
    monkeypatch.setenv("GIT_BALANCED_SSH_CONFIG", str(home / ".ssh" / "config"))
    monkeypatch.setenv("PRE_COMMIT_HOME", str(home / ".cache" / "pre-commit"))
    # An engine that ends waits for its landed workers' cleanup rather than leave it to a process of its own:
    # a test looks at their folders once it returns, and a process must not outlive the test whose HOME it has.
    monkeypatch.setenv("GIT_BALANCED_SWEEP_WAIT", "1")
    (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n[protocol \"file\"]\n\tallow = always\n")
    return home


@pytest.fixture(autouse=True)
def _process_state_dropped() -> Iterator[None]:
    """Runner sessions, transports and caches a test made end with it (a session keeps the HOME it was
    opened in), and the test ends in the folder it began in."""
    here = os.getcwd()
    yield
    forget_process_state()
    os.chdir(here)


@pytest.fixture(scope="session")
def agent_bin() -> str:
    """The folder of the real agent CLIs (installed when missing); a test that asks for it is an `agents` test."""
    return agent_home.installed_bin()
