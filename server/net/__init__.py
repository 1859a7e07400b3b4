"""asyncio glue only: bytes to protocol events to session calls, and the server around them.

- ``server``: listening, the banner, graceful shutdown (``Server``).
- ``state``: what the server shares with its connections (``ServerState``): the
  config, the Database, and the registry of connections and tasks that
  CancelRequest and shutdown use.
- ``connection``: one client connection, simple and extended protocol (``ClientHandler``).
- ``startup``: SSL/GSS negotiation, the StartupMessage, authentication, ParameterStatus.
- ``portals``: prepared statements and portals, and the paging of their rows.
- ``statements``: a client's SQL text parsed within its limits (bytes, nodes), long
  ones off the event loop.
- ``auth``: users and their SCRAM-SHA-256 verifiers.
- ``relay``: with ``--workers``, a CancelRequest handed to the worker that owns
  the connection it names.
- ``peers``: a CancelRequest handed to the server of the same name that owns it
  (servers behind a balancer).
- ``operator``: the operator's HTTP port (``--metrics-port``): ``/metrics``,
  ``/healthz`` and ``/readyz``, served from threads of its own.

Imports point one way. ``server`` imports ``connection``, which imports
``startup``, ``portals`` and ``statements``; ``server`` also imports ``relay`` and ``peers``,
which import ``state``. ``state``, ``auth`` and ``operator`` import no other
module here, and nothing imports ``server``.
"""
