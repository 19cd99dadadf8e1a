"""Forges (GitHub first): opening a pull request for the lead's branch, and watching it. One small interface
(`base.Forge`); a forge is a module beside `github.py`."""
