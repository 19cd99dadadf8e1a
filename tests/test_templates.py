"""templates/: the sample plan stores as a plan, each stack's settings read as settings, the instructions are
there, and all of it (with hooks/) is found from a checkout that was never installed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from git_balanced.bundled import template, template_text
from git_balanced.plans.planfile import load_plan
from git_balanced.settings import load_settings_text
from tests.support.builders import make_repo
from tests.support.cli import balanced

ROOT = Path(__file__).resolve().parents[1]


def test_the_sample_plan_is_a_valid_plan(tmp_path: Path) -> None:
    plan = load_plan(template_text("plan.yaml"), "templates/plan.yaml")
    assert [p.id for p in plan.pieces] == ["orders-api", "orders-page", "orders-tests"]
    assert plan.piece("orders-tests").after == ("orders-api", "orders-page")
    repo = make_repo(tmp_path / "shop")
    r = balanced(repo, "plan", str(ROOT / "templates" / "plan.yaml"), "--wait")  # claude may be nowhere here
    assert r.code == 0, r
    assert "3 pieces · budget $6.00" in r.out and "orders-tests  After: orders-api and orders-page" in r.out, r.out
    shares = {line.split()[0]: line.split()[-1] for line in r.out.splitlines()[1:4]}
    assert shares == {"orders-api": "$3.00", "orders-page": "$1.50", "orders-tests": "$1.50"}, "by size: 2, 1, 1"


@pytest.mark.parametrize("stack", ["python", "node", "go"])
def test_each_stacks_settings_are_settings(stack: str) -> None:
    settings = load_settings_text(template_text(f"settings/{stack}.toml"), f"templates/settings/{stack}.toml")
    assert settings.worktree.setup and settings.worktree.check, "a setup and a check, both"


def test_the_instructions_are_there() -> None:
    lead = template_text("lead.md")
    assert "git balanced plan" in lead and "git balanced answer" in lead and "templates/plan.yaml" in lead
    worker = template_text("worker.md")
    assert "{branch}" in worker and "git balanced ask" in worker
    assert template("settings.toml").is_file()


def test_a_plain_checkout_finds_templates_and_hooks() -> None:
    """Without site-packages (so without the editable install's finder), from the checkout alone."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from git_balanced import bundled; "
            "print(bundled.template('settings/go.toml')); print(bundled.hook_script('pre-push')); "
            "print(bundled.template_text('worker.md').splitlines()[0])")
    cp = subprocess.run([sys.executable, "-S", "-c", code, str(ROOT)], capture_output=True, text=True)
    assert cp.returncode == 0, cp.stderr
    lines = cp.stdout.splitlines()
    assert lines[:2] == [str(ROOT / "templates" / "settings" / "go.toml"), str(ROOT / "hooks" / "pre-push")]
    assert lines[2].startswith("You are a worker of git balanced")
