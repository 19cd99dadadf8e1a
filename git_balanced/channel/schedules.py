"""Schedules: tell the lead something at set times. `schedule add|list|rm`, and the engine's turn that fires
what is due into the inbox as `[balanced] Scheduled (s3, weekdays 07:00): TEXT`.

Each schedule is a chain on `refs/balanced/schedules/<name>` (added, fired, removed). A slot missed while no
engine ran fires once when one runs again, not once per missed slot (when.due_now decides that), and a
`once` schedule is done after it fired. Firing is compare-and-swap on the tip that was judged, so two
engines never fire the same slot twice.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from typing import Any

from git_balanced.channel.inbox import post
from git_balanced.channel.questions import append_if
from git_balanced.channel.when import HINT, When, due_now, local_zone, next_due, parse_when
from git_balanced.errors import BalancedError, UsageError
from git_balanced.lead import Lead
from git_balanced.state import cache

KIND = "schedules"
NAME = re.compile(r"^s[1-9][0-9]{0,8}$")
NOW_ENV = "GIT_BALANCED_NOW"  # a fixed clock for tests and demos: epoch seconds or ISO 8601


def now() -> datetime:
    """The lead machine's clock, in its local zone; GIT_BALANCED_NOW stands in for it when set."""
    raw = os.environ.get(NOW_ENV, "").strip()
    zone = local_zone()
    if not raw:
        return datetime.now(UTC).astimezone(zone)
    try:
        return datetime.fromtimestamp(float(raw), UTC).astimezone(zone)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        raise BalancedError(f"{NOW_ENV}={raw!r} is not a moment.",
                            hint=f"give epoch seconds or ISO 8601, e.g. {NOW_ENV}=2026-11-12T09:00:00+01:00, or "
                                 f"unset it.") from None
    return (moment.replace(tzinfo=zone) if moment.tzinfo is None else moment).astimezone(zone)


def at_time(ts: Any) -> datetime | None:
    return datetime.fromtimestamp(float(ts), UTC) if ts is not None else None


def _ref(name: str) -> str:
    return f"refs/balanced/{KIND}/{name}"


def all_schedules(lead: Lead) -> dict[str, dict[str, Any]]:
    """This lead's schedules, folded, by name (removed ones included)."""
    return {n: s for n, s in cache.read_all(lead.repo, KIND).items()
            if NAME.match(n) and s["fields"].get("lead") == lead.branch}


def _when(s: dict[str, Any]) -> When:
    return parse_when(str(s["fields"]["when"]))


def next_time(s: dict[str, Any], at: datetime) -> datetime | None:
    """When an active schedule comes next after `at`, in local time; None when it is done or removed."""
    if s["state"] != "active":
        return None
    when = _when(s)
    if when.kind == "once" and s["fields"].get("last_fired") is not None:
        return None
    return next_due(when, at, anchor=at_time(s["fields"]["added_at"]))


def shown_time(moment: datetime, at: datetime) -> str:
    """`today 07:00`, `tomorrow 07:00`, or `Tue 12 Nov 07:00`."""
    days = (moment.date() - at.date()).days
    if days == 0:
        return f"today {moment:%H:%M}"
    if days == 1:
        return f"tomorrow {moment:%H:%M}"
    return f"{moment:%a %d %b %Y %H:%M}" if moment.year != at.year else f"{moment:%a %d %b %H:%M}"


# -- add, remove ---------------------------------------------------------------------------------------
def add(lead: Lead, spec: str, text: str) -> tuple[str, When, datetime | None]:
    """Store a schedule under the next free name (s1, s2, ...; never reused)."""
    text = " ".join(text.split())
    if not text:
        raise UsageError("A schedule needs a text to tell the lead.", hint=HINT)
    at = now()
    when = parse_when(spec, now=at)
    taken = [int(n[1:]) for n in cache.read_all(lead.repo, KIND) if NAME.match(n)]
    number = max(taken, default=0) + 1
    data = {"when": when.text, "text": text, "lead": lead.branch, "added_at": at.timestamp()}
    while True:
        name = f"s{number}"
        made, _, _ = append_if(lead.repo, _ref(name), lambda cur: "taken" if cur else None, "added",
                               f"{name}: {when.text}: {text}", {**data, "name": name}, "active")
        if made:
            break
        number += 1  # another `schedule add` took this name first
    return name, when, next_due(when, at, anchor=at)


def remove(lead: Lead, name: str) -> dict[str, Any]:
    """Remove a schedule; refuses a name that is not one of this lead's, or one removed already."""
    if not NAME.match(name):
        raise BalancedError(f"{name!r} is not a schedule name: they are s1, s2, …",
                         hint="`git balanced schedule list` shows them.")
    s = all_schedules(lead).get(name)
    if s is None:
        raise BalancedError(f"There is no schedule {name} for {lead.branch}.",
                            hint="`git balanced schedule list` shows them.")

    def refuse(cur: dict[str, Any] | None) -> str | None:
        return "it was removed already" if cur is None or cur["state"] == "removed" else None

    made, _, why = append_if(lead.repo, _ref(name), refuse, "removed", f"{name}: removed", {"removed_at":
                                                                                             now().timestamp()},
                             "removed")
    if not made:
        raise BalancedError(f"{name} was not removed: {why}.", hint="`git balanced schedule list` shows them.")
    return s


# -- the engine's turn -----------------------------------------------------------------------------------
def message(name: str, when: str, text: str) -> str:
    return f"[balanced] Scheduled ({name}, {when}): {text}"


def fire_due(lead: Lead, at: datetime) -> list[str]:
    """Fire every schedule of this lead that is due at `at` into its inbox; the names fired."""
    fired = []
    for name, s in sorted(all_schedules(lead).items(), key=lambda kv: int(kv[0][1:])):
        if s["state"] != "active":
            continue
        f = s["fields"]
        when = _when(s)
        last = f.get("last_fired")
        slot = due_now(when, last_fired=at_time(last), added=at_time(f["added_at"]) or at, now=at)
        if slot is None:
            continue

        def refuse(cur: dict[str, Any] | None, last: Any = last) -> str | None:
            if cur is None or cur["state"] != "active" or cur["fields"].get("last_fired") != last:
                return "changed meanwhile"
            return None

        data = {"last_fired": slot.timestamp(), "fired_at": at.timestamp(),
                "fired": int(f.get("fired") or 0) + 1}
        made, _, _ = append_if(lead.repo, _ref(name), refuse, "fired", f"{name}: fired for {slot:%Y-%m-%d %H:%M}",
                               data, "done" if when.kind == "once" else None)
        if made:  # recorded before it is said, so a crash in between never says it twice
            post(lead.repo, lead.branch, message(name, when.text, str(f["text"])), kind="schedule", schedule=name,
                 slot=slot.timestamp())
            fired.append(name)
    return fired


def engine_tick(lead: Lead, settings: Any) -> None:
    """The engine's turn: fire what is due now."""
    fire_due(lead, now())


def board_items(lead: Lead) -> dict[str, list[dict[str, Any]]]:
    """The next schedule to fire, under Next."""
    at = now()
    upcoming = [(t, n, s) for n, s in all_schedules(lead).items() if (t := next_time(s, at)) is not None]
    if not upcoming:
        return {}
    t, name, s = min(upcoming, key=lambda x: (x[0], int(x[1][1:])))
    f = s["fields"]
    return {"next": [{"text": f"· {name} {shown_time(t, at)} ({f['when']}): {f['text']}", "schedule": name,
                      "at": t.isoformat()}]}


# -- commands --------------------------------------------------------------------------------------------


def rows(lead: Lead) -> list[dict[str, Any]]:
    """Every schedule not removed, with its next time (`schedule list` and the lead's tools)."""
    at = now()
    out = []
    for name, s in sorted(all_schedules(lead).items(), key=lambda kv: int(kv[0][1:])):
        if s["state"] == "removed":
            continue
        f = s["fields"]
        t = next_time(s, at)
        last = at_time(f.get("last_fired"))
        out.append({"name": name, "when": f["when"], "text": f["text"], "state": s["state"],
                    "next": t.isoformat() if t else None, "next_words": shown_time(t, at) if t else None,
                    "last_fired": last.astimezone(at.tzinfo).isoformat() if last else None,
                    "fired": int(f.get("fired") or 0)})
    return out
