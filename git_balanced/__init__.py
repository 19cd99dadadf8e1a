"""git balanced: hand pieces of a task to many coding agents and land only what passes the check."""

__version__ = "0.1.0"
