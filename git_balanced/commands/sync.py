"""`git balanced sync [REMOTE]`."""

from __future__ import annotations

from git_balanced import ui
from git_balanced.git import Repo
from git_balanced.state.sync import sync


def sync_command(remote: str, *, as_json: bool) -> int:
    report = sync(Repo.discover(), remote)
    if as_json:
        ui.emit_json({"remote": report.remote, "fetched": report.fetched,
                      "fast_forwarded": report.fast_forwarded, "merged": report.merged, "pushed": report.pushed,
                      "not_merged": report.not_merged, "not_pushed": report.not_pushed})
        return 0
    merged = f", merged {len(report.merged)} that diverged" if report.merged else ""
    bad = len(report.not_merged) + len(report.not_pushed)
    merged += f", {bad} malformed left out (named above)" if bad else ""
    ui.say(f"Synced with {remote}: {report.fetched} state refs fetched, {report.fast_forwarded} brought "
           f"up to date{merged}, {report.pushed} pushed.")
    return 0
