"""Each machine's check seats as `machines` and the board show them: how many of its budget are in use, and who
holds them. This machine's are read here; another machine's are asked of its runner (the `seats` action), and
kept in `.git/balanced/check-seats.json` with the time they were asked, for the board, which asks no machine."""

from __future__ import annotations

import time
from pathlib import Path

from git_balanced.errors import BalancedError
from git_balanced.files import loads, write_json  # json.loads' answer, without json (and re)
from git_balanced.git import Repo
from git_balanced.shipped import pids, seats

TYPE_CHECKING = False  # typing is not imported for this: the board and the inbox start without it
if TYPE_CHECKING:
    from typing import Any

KEPT = "check-seats.json"
LOCAL = "local"  # inventory.records.LOCAL, not loaded here: the board reads this module and stays light


def source() -> str:
    """shipped/seats.py's source after shipped/pids.py's (its pid check), one script, as a worker's start and the
    runner's `seats` action carry it."""
    parts = [Path(str(m.__file__)).read_text(encoding="utf-8") for m in (pids, seats)]
    return parts[0] + parts[1].replace("\nfrom __future__ import annotations\n", "\n")


def setting(repo: Repo) -> int:
    """`[balanced] check_seats` as committed at HEAD (0: each machine's cores)."""
    from git_balanced.lead import settings_at

    return int(settings_at(repo, "HEAD" if repo.rev_parse("HEAD") else None).balanced.check_seats)


def here(repo: Repo, budget: int | None = None) -> dict[str, Any]:
    """This machine's check seats, read now: of `budget`, else of the budget last used here (kept by `machines`,
    the landing and the engine's starts: the settings are not read), else of its cores."""
    if budget is None:
        budget = int((kept(repo).get(LOCAL) or {}).get("budget") or 0)
    return seats.seats_state(seats.seat_budget(budget))


def remember(repo: Repo, machine: str, budget: int) -> None:
    """Keep the budget a machine's seats go by (the setting, its cores for 0), for the board."""
    have = kept(repo)
    if (have.get(machine) or {}).get("budget") != budget:
        write_json(repo.state_dir / KEPT, {**have, machine: {**(have.get(machine) or {}), "budget": budget}})


def asked(repo: Repo, machines: list[str]) -> dict[str, dict[str, Any]]:
    """The check seats of each machine named (local read here, the others asked of their runners at once); a
    machine that did not answer has `error`. Those asked are kept for the board."""
    from git_balanced.lead import Lead
    from git_balanced.machines.reach.remote import RemoteHost

    n = setting(repo)
    lead = Lead(repo, repo.current_branch() or "HEAD")

    def one(name: str) -> dict[str, Any]:
        if name == LOCAL:
            return here(repo, seats.seat_budget(n))
        try:
            answer = RemoteHost(lead, name).call("seats", {"budget": n, "source": source()})
        except BalancedError as exc:
            return {"error": exc.message}
        return answer if "budget" in answer else {"error": str(answer.get("error") or answer)}

    from concurrent.futures import ThreadPoolExecutor  # only asking machines: the board reads this module too

    with ThreadPoolExecutor(max_workers=max(1, min(8, len(machines)))) as pool:
        out = dict(zip(machines, pool.map(one, machines), strict=True))
    now = time.time()
    write_json(repo.state_dir / KEPT, {**kept(repo), **{m: {**s, "at": now} if m != LOCAL else {"budget": s["budget"]}
                                                        for m, s in out.items() if "error" not in s}})
    return out


def kept(repo: Repo) -> dict[str, dict[str, Any]]:
    """The other machines' check seats as they were last asked (each with `at`)."""
    try:
        data = loads((repo.state_dir / KEPT).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def words(s: dict[str, Any]) -> str:
    """`1/2 in use` (or why it is not known)."""
    if "error" in s:
        return f"unknown ({s['error']})"
    return f"{s['in_use']}/{s['budget']} in use"
