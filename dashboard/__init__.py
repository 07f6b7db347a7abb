"""The dashboard: the hub and its spokes, live in the browser (a client of the hub like any other)."""
