"""What `plan FILE` imports and builds, where only this machine is ticked: no SSH (placement asks no machine), no
job events (a plan places no job), no thread pool, and no settings model: `allow` kept its checked reading of the
settings (settings_view.py), which `plan` reads back. The engine's fixed cost starts with storing the plan."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.plans import lead_repo, piece

# Modules `plan` has no use for here; each was imported by it before.
UNUSED = ("git_balanced.machines.reach", "git_balanced.shipped", "git_balanced.job_events", "concurrent.futures")
SCRIPT = """
import json, sys
from git_balanced import cli
code = cli.main(["plan", sys.argv[1]])
from git_balanced import settings
built = sorted(c.__name__ for c in (settings.Settings, settings.BalancedSettings, settings.WorktreeSettings)
               if c.__pydantic_complete__)
print(json.dumps({"code": code, "modules": sorted(sys.modules), "built": built}), file=sys.stderr)
"""


def _plan(repo: Path, path: Path) -> dict:
    """`plan FILE` in a fresh interpreter: its exit code, the modules it imported, the settings models it built."""
    cp = subprocess.run([sys.executable, "-c", SCRIPT, str(path)], cwd=repo, capture_output=True, text=True,
                        timeout=120)
    assert cp.returncode == 0, cp.stderr
    assert "p1" in cp.stdout, cp.stdout  # the plan as stored: its piece and where it goes
    return json.loads(cp.stderr.strip().splitlines()[-1])


def test_plan_imports_no_ssh_no_job_events_and_builds_no_settings_model(tmp_path: Path) -> None:
    repo = lead_repo(tmp_path)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"task": "Two plans", "pieces": [piece("p1", "echo 1 > one.txt")]}))
    for ran in (_plan(repo, path), _plan(repo, path)):  # the first plan after `allow`, and one after it
        assert ran["code"] == 0, ran
        unused = [m for m in ran["modules"] if m.startswith(UNUSED)]
        assert unused == [], f"`plan` imported what it does not use: {unused}"
        assert ran["built"] == [], f"settings models built though `allow` checked the settings: {ran['built']}"
        assert "tomllib" not in ran["modules"], "the settings' TOML parsed again"
        assert "git_balanced.plans.reader" in ran["modules"], "the plan itself is still read and checked"
        assert "git_balanced.plans.planfile" not in ran["modules"], "a stored plan builds no pydantic models"
