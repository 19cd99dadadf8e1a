"""Machines: the SSH transport, the SSH config inventory, readiness and placement."""
