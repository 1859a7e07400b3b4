"""Pure SQL work, no I/O: parsing, the gate, analysis, rewriting and EXPLAIN text.

Syntax trees in, frozen plan dataclasses and text out. Nothing here awaits,
touches a socket or a sidecar, or knows a session.
"""
