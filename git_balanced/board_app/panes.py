"""The board's app, its panes: Now, Running and Next over `board --json`'s data, redrawn when a state ref moves
(one listing of `refs/balanced/` a second, compared with the last), and the keys that fit the row under the
cursor."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult, ScreenStackError
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.widgets import DataTable, Footer, Static

from git_balanced.board_app import prefs
from git_balanced.board_app.rows import Row, next_rows, now_rows, seats_words, worker_rows
from git_balanced.board_app.screens import Worker
from git_balanced.engine.shown import collect_shown, engine_line, engine_pid
from git_balanced.lead import Lead

POLL = 1.0  # seconds between two listings of the state refs
ON_NOW = {"mark", "answer_marked", "allow", "deny", "correct", "ship", "not_now", "go_ahead"}
ON_WORKER = {"log", "tell", "stop", "retry", "land"}
FITS = {"mark": {"question"}, "answer_marked": {"question"}, "allow": {"question"}, "deny": {"question"},
        "correct": {"review", "idea"}, "ship": {"review"}, "not_now": {"review", "idea"}, "go_ahead": {"idea"}}
WIDE = {"now": 1, "running": 3, "next": 2}  # the column of each pane that holds words of any length
ROOM = {"now": 12, "running": 50, "next": 30}  # the width the other columns and the borders take, about


class Panes(App[int]):
    """The board's three panes, read from the board's data and redrawn when it changes, and which keys fit the
    row under the cursor; the keys themselves are BoardApp's (app.py)."""

    TITLE = "git balanced"
    CSS = """
    #top { height: auto; padding: 0 1; }
    .pane { height: auto; max-height: 45%; border: round $secondary; }
    .pane:focus-within { border: round $accent; }
    DataTable { height: auto; max-height: 100%; }
    #dialog { width: 84; max-width: 100%; height: auto; border: thick $accent; padding: 1 2; background: $surface; }
    Prompt, Confirm, Help { align: center middle; }
    """
    def __init__(self, lead: Lead, poll: float = POLL) -> None:
        super().__init__()
        self.lead = lead
        self.poll_every = poll
        self.folded = prefs.folded(lead)
        self.marked: set[str] = set()
        self.rows: dict[str, list[Row]] = {"now": [], "running": [], "next": []}
        self.seen: object = None
        self._fits: object = None
        self.data: dict[str, Any] = {}

    def compose(self) -> ComposeResult:
        yield Static(id="top")
        for pane, title in (("now", "Now"), ("running", "Running"), ("next", "Next")):
            with Vertical(classes="pane", id=f"{pane}-pane") as box:
                box.border_title = title
                table: DataTable[Any] = DataTable(id=pane, cursor_type="row", zebra_stripes=False)
                table.show_header = False
                yield table
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#now", DataTable).add_columns("n", "what")
        self.query_one("#running", DataTable).add_columns("", "handle", "piece", "words", "where")
        self.query_one("#next", DataTable).add_columns("", "piece", "words", "machine")
        self.reload()
        self.query_one("#now" if self.rows["now"] else "#running", DataTable).focus()
        self.set_interval(self.poll_every, self.poll)

    # -- reading --------------------------------------------------------------------------------------------
    def fingerprint(self) -> object:
        """What changes when the board may: every state ref's tip, the lead's branch, the engine's pid."""
        repo = self.lead.repo
        return (tuple(sorted(repo.list_refs("refs/balanced/").items())), repo.read_ref(self.lead.ref),
                engine_pid(self.lead))

    def on_resize(self) -> None:
        if self.data:
            self._reload_if_shown()

    def poll(self) -> None:
        if self.fingerprint() != self.seen:
            self._reload_if_shown()

    def _reload_if_shown(self) -> None:
        """Reload, unless the app is closing: a timer or a resize can come after its panes are gone (they are
        composed once and never removed while it runs)."""
        try:
            self.reload()
        except (NoMatches, ScreenStackError):
            pass

    def reload(self) -> None:
        self.seen = self.fingerprint()
        self.data = collect_shown(self.lead)
        self.rows = {"now": now_rows(self.data), "running": worker_rows(self.data, self.folded),
                     "next": next_rows(self.data)}
        keys = {r.key for r in self.rows["now"]}
        self.marked &= keys
        for pane, rows in self.rows.items():
            self._fill(pane, rows)
        self._head()

    def _fill(self, pane: str, rows: list[Row]) -> None:
        table = self.query_one(f"#{pane}", DataTable)
        at = self.current(pane)
        table.clear()
        wide = WIDE[pane]
        room = max(20, self.size.width - ROOM[pane])  # the long column is cut to the width: no sideways scrolling
        for r in rows:
            cells = list(r.cells)
            if pane == "now":
                cells[0] = ("✓ " if r.key in self.marked else "  ") + str(cells[0])
            long = cells[wide]
            if isinstance(long, Text) and long.cell_len > room and r.kind != "fold":
                long = long.copy()
                long.truncate(room, overflow="ellipsis")
                cells[wide] = long
            table.add_row(*cells, key=r.key)
        keys = [r.key for r in rows]
        if at is not None and at.key in keys:
            table.move_cursor(row=keys.index(at.key))
        self.query_one(f"#{pane}-pane").display = bool(rows) or pane == "running"
        if pane == "now":
            self._subtitle()

    def _subtitle(self) -> None:
        n = len(self.marked)
        self.query_one("#now-pane").border_subtitle = f"{n} marked · Enter: Allow {n}" if n else ""

    def _head(self) -> None:
        e = self.data.get("engine") or {}
        engine = f"engine running (pid {e['pid']})" if e.get("running") else (engine_line(self.data) or
                                                                                "no engine runs; nothing waits")
        spent = [f"plan {p['id'][-4:]}: ${p['spent_usd']:.2f}" + (f" of ${p['budget_usd']:.2f}" if p.get(
            "budget_usd") else "") for p in self.data.get("plans", [])
            if p.get("state") in ("created", "started") and (p.get("spent_usd") or p.get("budget_usd"))]
        spent += [seats] if (seats := seats_words(self.data)) else []  # checks holding machines' check seats
        self.query_one("#top", Static).update(f"{self.lead.branch} · {engine}" + (" · " + " · ".join(spent)
                                                                                  if spent else ""))

    def current(self, pane: str | None = None) -> Row | None:
        """The row under the cursor of `pane` (default: the focused one)."""
        pane = pane or self.pane()
        if pane is None:
            return None
        table = self.query_one(f"#{pane}", DataTable)
        rows = self.rows.get(pane, [])
        return rows[table.cursor_row] if 0 <= table.cursor_row < len(rows) else None

    def pane(self) -> str | None:
        focused = self.focused if self.screen_stack else None  # none while the app closes
        return focused.id if isinstance(focused, DataTable) else None

    # -- which keys fit ------------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if not self.screen_stack:  # asked while the app closes
            return True
        if isinstance(self.screen, Worker):  # its own keys, on its worker
            return action in ON_WORKER - {"log"} or action in ("help", "quit")
        if self.screen is not self.screen_stack[0]:
            return action in ("help", "quit")
        row = self.current() if isinstance(self.focused, DataTable) else None
        # A key that does not fit the row is left out of the footer, which then holds what fits at 80 columns.
        if action in ON_NOW:
            if action == "answer_marked":
                return bool(self.marked)
            return row is not None and row.kind in FITS[action]
        if action in ON_WORKER:
            return row is not None and row.kind == "worker"
        return True

    def _keys_fit(self) -> None:
        """Show the keys that fit the row under the cursor: redrawn only when what fits changed (a footer
        redrawn on every move of the cursor is slow)."""
        row = self.current() if self.screen_stack and isinstance(self.focused, DataTable) else None
        fits = (self.pane(), row.kind if row else None, bool(self.marked))
        if fits != self._fits:
            self._fits = fits
            self.refresh_bindings()

    def on_descendant_focus(self) -> None:
        self._keys_fit()

    def on_data_table_row_highlighted(self) -> None:
        self._keys_fit()
