"""The worker's permission prompt tool (shipped/permit.py): a stdio MCP server of the stdlib that asks the lead
through the run folder. Spoken to over its pipes here; the real Claude Code calls it in
tests/e2e/test_worker_plans.py."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

SHIPPED = Path(__file__).resolve().parents[2] / "git_balanced" / "shipped"


def test_it_speaks_mcp_and_a_denied_plan_goes_back_with_the_leads_line(tmp_path: Path) -> None:
    bin_dir = tmp_path / "run" / "bin"
    bin_dir.mkdir(parents=True)
    for name, file in (("git-balanced", "worker_shim.py"), ("pretool.py", "pretool.py"), ("permit.py", "permit.py")):
        shutil.copy(SHIPPED / file, bin_dir / name)
    # The lead's answer to the worker's first question is there already: the tool finds it at once.
    (tmp_path / "run" / "answers").mkdir()
    (tmp_path / "run" / "answers" / "1.json").write_text(json.dumps(
        {"decision": "deny", "text": "Say why in the file too.", "qid": "q7k2mx"}))
    calls = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
                                                                      "capabilities": {}, "clientInfo": {}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "approve", "arguments": {
            "tool_name": "ExitPlanMode", "input": {"plan": "1. Write notes.txt."}, "tool_use_id": "toolu_1"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "resources/list"},
    ]
    lines = "".join(json.dumps(c) + "\n" for c in calls)
    cp = subprocess.run([sys.executable, str(bin_dir / "permit.py")], input=lines, capture_output=True, text=True,
                        timeout=60, env={"PATH": "/usr/bin:/bin"})
    got = {m["id"]: m for m in map(json.loads, cp.stdout.splitlines())}
    assert sorted(got) == [1, 2, 3, 4], cp.stdout + cp.stderr
    assert got[1]["result"]["protocolVersion"] == "2025-06-18" and "tools" in got[1]["result"]["capabilities"]
    assert [t["name"] for t in got[2]["result"]["tools"]] == ["approve"]
    said = json.loads(got[3]["result"]["content"][0]["text"])
    assert said == {"behavior": "deny", "message": "Your lead sent the plan back. The lead denied it (q7k2mx): Say "
                                                   "why in the file too. Revise the plan and show it again."}
    asked = json.loads((tmp_path / "run" / "questions" / "1.json").read_text())
    assert (asked["kind"], asked["text"], asked["tool"]) == ("plan", "1. Write notes.txt.", "ExitPlanMode")
    assert got[4]["error"]["code"] == -32601
