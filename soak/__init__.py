"""The soak: many clients for many minutes over flaky, slow resources, then a report.

``python -m soak --clients 64 --minutes 10`` (``make soak``) starts a server (its own
embedded sidecar in a temporary directory, loopback only) serving ``soak.resources``,
and runs the clients (``soak.run``). The report: statements run, errors by SQLSTATE
with unexpected ones counted apart, the server's RSS at the start, middle and end,
the sidecar's backends, and the journal check (every row final, no idempotency key
fired twice: the write resolvers append each key they fire to a file).
"""

from .run import Report, soak

__all__ = ["Report", "soak"]
