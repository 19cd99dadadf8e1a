"""Machines: which there are (inventory/), the routes to them (reach/), getting one ready (prepare/), and where
a piece goes (placing/). Each sub-package imports only those named before it."""
