"""Where a piece goes: the one placement entry point (where.py), seats, accounts' room, the machines table."""
