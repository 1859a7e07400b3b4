"""asyncio glue only: bytes to protocol events to session calls, and the server around them.

- ``server``: listening, the banner, graceful shutdown (``Server``).
- ``state``: what the server shares with its connections (``ServerState``): the
  config, the Database, and the registry of connections and tasks that
  CancelRequest and shutdown use.
- ``connection``: one client connection, simple and extended protocol (``ClientHandler``).
- ``phases``: a connection's phases and the moves between them, as data (``Phase``).
- ``portal_run``: Bind, [Describe], Execute and Sync that arrived together, answered in
  one pass; ``callbacks``: such a run answered in the transports' callbacks, no task.
- ``internal``: our own bugs: logged with their traceback, counted, and answered XX000.
- ``sink``: a client's socket as the rest reaches it: its output buffer, a result's
  rows relayed as they come (``ClientSocket``), its end when its slot is wanted.
- ``slots``: start-up slots (in total, per client address) and session slots, the
  last kept for admins (``Slots``).
- ``startup``: SSL/GSS negotiation, the StartupMessage, authentication, ParameterStatus.
- ``portals``: prepared statements and portals, and the paging of their rows.
- ``suspended``: an Execute, and portals read in parts (a row count, PortalSuspended,
  the next Execute), whose calls end with them (``Portals``).
- ``statements``: a client's SQL text parsed within its limits (bytes, nodes), long
  ones off the event loop.
- ``auth``: users and their SCRAM-SHA-256 verifiers.
- ``copy``: the client's side of a COPY (``ClientCopy``): the sidecar's COPY data out
  as it comes, the client's CopyData in.
- ``relay``: with ``--workers``, a CancelRequest handed to the worker that owns
  the connection it names.
- ``peers``: a CancelRequest handed to the server of the same name that owns it
  (servers behind a balancer).
- ``operator``: the operator's HTTP port (``--metrics-port``): ``/metrics``,
  ``/healthz`` and ``/readyz``, served from threads of its own.

Imports point one way. ``server`` imports ``connection``, which imports
``startup`` (which imports ``copy``), ``portals``, ``suspended`` (which imports
``portals`` and ``sink``), ``callbacks`` (which imports ``portal_run``, which imports
``portals``), ``phases``, ``internal`` and ``statements`` (which imports ``internal``);
``server`` also imports ``relay`` and ``peers``, which import ``state``. ``connection``
also imports ``sink``, and ``state`` imports ``slots``. ``sink``, ``slots``, ``auth``,
``copy``, ``phases``, ``internal`` and ``operator`` import no other module here, and
nothing imports ``server``.
"""
