"""The health checks of ``glove-scratchpad ping``: is a server there, and is it ready.

``ping`` asks the server for the start of a session (an SSLRequest) and exits 0
when a PostgreSQL server answers; ``ping --ready`` reads the metrics port's
``/readyz`` (the sidecar answers, the catalog is installed). Either says why on
stderr when it exits 1, and needs nothing of the server's code but the wire codec.
"""

from __future__ import annotations

import sys

from .config import ANY_ADDRESS, DEFAULT_PORT

__all__ = ["PING_TIMEOUT", "ping", "ready"]

PING_TIMEOUT = 5.0  # seconds for ``ping`` to get an answer


def ping(host: str | None = None, port: int | None = None) -> int:
    """0 if a server answers an SSLRequest on host:port (the banner's), else 1."""
    import os
    import socket

    from glove_scratchpad.wire import SSLRequest

    env = os.environ
    host = host or env.get("GLOVE_SCRATCHPAD_HOST") or "127.0.0.1"
    if host in ANY_ADDRESS:
        host = "127.0.0.1"
    port = port or int(env.get("GLOVE_SCRATCHPAD_PORT") or DEFAULT_PORT)
    try:
        with socket.create_connection((host, port), timeout=PING_TIMEOUT) as sock:
            sock.sendall(SSLRequest().encode())
            answer = sock.recv(1)
    except OSError as exc:
        print(f"glove-scratchpad: no server on {host}:{port}: {exc}", file=sys.stderr)
        return 1
    if answer not in (b"S", b"N"):
        print(f"glove-scratchpad: {host}:{port} is not a PostgreSQL server", file=sys.stderr)
        return 1
    return 0


def ready(host: str | None = None, port: int | None = None) -> int:
    """0 if the metrics port's /readyz says the server is ready (a health check), else 1,
    with the reason on stderr."""
    import os
    import urllib.error
    import urllib.request

    env = os.environ
    port = port or int(env.get("GLOVE_SCRATCHPAD_METRICS_PORT") or 0) or None
    if not port:
        print("glove-scratchpad: ping --ready reads /readyz on the metrics port: give "
              "--metrics-port (or set GLOVE_SCRATCHPAD_METRICS_PORT), as the server has it",
              file=sys.stderr)
        return 1
    host = host or env.get("GLOVE_SCRATCHPAD_METRICS_HOST") or "127.0.0.1"
    if host in ANY_ADDRESS:
        host = "127.0.0.1"
    try:
        with urllib.request.urlopen(f"http://{host}:{port}/readyz", timeout=PING_TIMEOUT):
            return 0
    except urllib.error.HTTPError as exc:
        print(f"glove-scratchpad: {exc.read().decode(errors='replace').strip()}",
              file=sys.stderr)
    except OSError as exc:
        print(f"glove-scratchpad: no metrics port on {host}:{port}: {exc}", file=sys.stderr)
    return 1
