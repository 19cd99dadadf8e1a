"""The typed reads of folded jobs and plans as dataclasses: `Job`, `StoredPlan`, `StoredPiece` and the one piece
type, `PieceOptions`, declared in `state/declared.py` and made dataclasses here, in place, as this module is
imported (so `views.Job is declared.Job`). What builds, compares or copies jobs and plans (`Job(...)`,
`dataclasses.replace`, `dataclasses.fields`) imports them from here; the board and the inbox read them from
`declared.py` and never pay for `dataclasses`."""

from __future__ import annotations

from git_balanced.state import declared
from git_balanced.state.declared import _FOLD_KEYS as _FOLD_KEYS
from git_balanced.state.declared import CARRIED as CARRIED
from git_balanced.state.declared import FILE_OPTIONS as FILE_OPTIONS
from git_balanced.state.declared import OPTIONS as OPTIONS
from git_balanced.state.declared import PIECE_NEEDS as PIECE_NEEDS
from git_balanced.state.declared import RENAMED as RENAMED
from git_balanced.state.declared import Job as Job
from git_balanced.state.declared import PieceOptions as PieceOptions
from git_balanced.state.declared import PieceView as PieceView
from git_balanced.state.declared import PlanView as PlanView
from git_balanced.state.declared import StoredPiece as StoredPiece
from git_balanced.state.declared import StoredPlan as StoredPlan
from git_balanced.state.declared import Unreadable as Unreadable
from git_balanced.state.declared import latest_by_piece as latest_by_piece

declared.make_dataclasses()
