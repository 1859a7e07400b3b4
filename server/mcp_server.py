"""The MCP server mode: ``glove-scratchpad mcp``, the agent's tool for any MCP client.

It serves the tools ``execute_sql`` and ``explain_sql`` (``agent.py`` defines,
runs and renders them) and the catalog, the preamble, as the resource
``scratchpad://catalog`` and as the server's instructions. The catalog's form
is chosen by size, as ``agent.preamble`` chooses it: every column of every
table while that is at most ``agent.FULL_LIMIT`` characters, else one line
per table (or per group, past ``agent.LIST_LIMIT`` tables) and the statement
that reads a table's columns. ``create_server(catalog=…, full_limit=…,
list_limit=…)`` and ``serve_mcp`` change the choice. Transports: stdio (the
default) or streamable HTTP (``--http``), through the ``mcp`` SDK's low-level
``Server``.

Sessions: a transaction spans tool calls (``BEGIN`` in one call, ``COMMIT`` in
a later one), so each MCP client session gets its own ``Session``:

- stdio: one client per process, so one ``Session``.
- streamable HTTP: one ``Session`` per ``Mcp-Session-Id``. The server answers
  ``server/discover`` with the handshake-era versions only, so a client in the
  SDK's ``auto`` mode opens a session. A request without a session id (a
  client pinned to the stateless 2026 protocol) gets a fresh ``Session`` for
  that one call, and a call that would leave a transaction open across calls
  is refused, its staged writes discarded: nothing it staged could ever fire.
  Sessions idle for longer than the transport's idle timeout are forgotten.

Signing in (streamable HTTP; ``mcp_http`` is the door): with ``[users.NAME]``
configured, every request signs in as a user (a bearer token or HTTP basic), and
its ``Session`` runs as that user: the user's visible resources, writes, limits
and upstream credentials (``Session.user`` is the role an API's
``roles.<name>`` names). The catalog and the tools' hints are the user's too;
the instructions, one text for every user (the SDK's initialize sends the same),
then only point at the catalog.
Sessions are kept per (user, session id). Without users, only loopback is
served, as ``serve`` does.

Calls within one session run one at a time, as on a wire connection. In stdio
mode stdout carries the protocol, so everything else (logs, the sidecar's
output) goes to stderr.

The server reports itself as ``glove-scratchpad`` with the installed package's
version. ``serve_mcp`` can also serve MCP servers' tools as tables (the
``[[mcp.servers]]`` of a config file), as ``glove-scratchpad serve`` does: it
starts them before the Database and stops them after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import logging
import signal
import socket
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import mcp.types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import DEFAULT_SESSION_IDLE_TIMEOUT
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from glove_scratchpad import errors
from glove_scratchpad.resources import Fn, Resource

from . import agent
from .config import ANY_ADDRESS
from .engine.database import Database
from .engine.policy import Policy
from .engine.session import Session
from .mcp_http import Door, check_listen, describe, transport_security, user_of

if TYPE_CHECKING:
    from glove_scratchpad.resources.mcp import McpServerConfig
    from glove_scratchpad.resources.openapi import OpenApiBridge

    from .engine.guard import Limits
    from .net.auth import User

__all__ = ["CATALOG_URI", "DEFAULT_MCP_PORT", "Sessions", "create_server", "http_app",
           "serve_mcp"]

log = logging.getLogger(__name__)

CATALOG_URI = "scratchpad://catalog"
DEFAULT_MCP_PORT = 55433  # next to the Postgres port, 55432
SESSION_HEADER = "mcp-session-id"

Transport = Literal["stdio", "http"]

_SIGNED_IN_INSTRUCTIONS = (
    "The tables here are your tools, and which ones you have depends on the user you signed "
    f"in as: read the resource {CATALOG_URI} for yours and how to use them, or run SELECT "
    "name, description FROM scratchpad.resources with execute_sql.")

_STATELESS_HINT = (
    "This MCP connection has no session, so a transaction cannot span calls. Send the whole "
    "transaction in one call (BEGIN; INSERT …; COMMIT), or connect with a session (stdio, or "
    "streamable HTTP with an Mcp-Session-Id)."
)


@dataclass
class _Entry:
    session: Session
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    used: float = field(default_factory=time.monotonic)


class Sessions:
    """The ``Session`` of each MCP client session, keyed by its user and its id."""

    def __init__(self, db: Database, *, idle_timeout: float = DEFAULT_SESSION_IDLE_TIMEOUT,
                 users: Mapping[str, User] | None = None) -> None:
        self.db = db
        self.idle_timeout = idle_timeout
        self.users = dict(users or {})
        self._entries: dict[tuple[str | None, str], _Entry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    async def open(self, user: str | None = None) -> Session:
        """A new session, as ``user`` (a configured user's name) or, None, as the server."""
        if user is None:
            return self.db.session()
        session = await self.db.open_session(Policy.of(self.users[user]))
        session.user = user
        return session

    @contextlib.asynccontextmanager
    async def lease(self, key: str | None, user: str | None = None
                    ) -> AsyncIterator[Session]:
        """The session for ``key``, held for one call; ``None``: a fresh one for this call."""
        if key is None:
            yield await self.open(user)
            return
        self._forget_idle()
        entry = self._entries.get((user, key))
        if entry is None:
            entry = self._entries[(user, key)] = _Entry(await self.open(user))
        async with entry.lock:
            try:
                yield entry.session
            finally:
                entry.used = time.monotonic()

    def _forget_idle(self) -> None:
        cutoff = time.monotonic() - self.idle_timeout
        for key in [k for k, e in self._entries.items() if e.used < cutoff and not e.lock.locked()]:
            del self._entries[key]


@dataclass
class _State:
    db: Database
    sessions: Sessions


def create_server(db: Database, *, transport: Transport = "stdio",
                  catalog: agent.Detail = "auto", full_limit: int = agent.FULL_LIMIT,
                  list_limit: int = agent.LIST_LIMIT,
                  users: Mapping[str, User] | None = None) -> Server[Any]:
    """An MCP server for a Database (which it does not close).

    ``transport`` decides how calls map to sessions (see the module docstring);
    ``catalog``, ``full_limit`` and ``list_limit`` choose the catalog's form, as
    ``agent.preamble``'s ``detail`` and limits do. ``users`` (over HTTP, behind
    ``mcp_http.Door``): each request runs as the user it signed in as.
    """
    users = dict(users or {}) if transport == "http" else {}
    catalogs: dict[str | None, tuple[str, types.Resource]] = {}

    def policy(user: str | None) -> Policy:
        return Policy(writes=db.writes) if user is None else Policy.of(users[user])

    def catalog_of(user: str | None) -> tuple[str, types.Resource]:
        """The catalog ``user`` sees (None: the whole database's), made once."""
        if user not in catalogs:
            seen = policy(user).visible(db.resources)
            source = db if user is None else [db.resources[n] for n in sorted(seen)]
            writes = None if user is None else policy(user).writes
            form = agent.catalog_form(source, writes=writes, full_limit=full_limit,
                                      list_limit=list_limit)
            if catalog != "auto":
                grouped = catalog == "compact" and len(seen) > list_limit
                form = "compact, grouped" if grouped else catalog
            body = agent.preamble(source, writes=writes, detail=catalog,
                                  full_limit=full_limit, list_limit=list_limit)
            catalogs[user] = (body, types.Resource(
                uri=CATALOG_URI, name="catalog",
                title="The database's tables and how to use them",
                description=_CATALOG_ABOUT[form], mime_type="text/markdown"))
        return catalogs[user]

    text = _SIGNED_IN_INSTRUCTIONS if users else catalog_of(None)[0]

    @contextlib.asynccontextmanager
    async def lifespan(_: Server[Any]) -> AsyncIterator[_State]:
        yield _State(db, Sessions(db, users=users))

    def session_key(ctx: Any) -> str | None:
        if transport == "stdio":
            return "stdio"
        request = ctx.request
        return request.headers.get(SESSION_HEADER) if request is not None else None

    def signed_in(ctx: Any) -> str | None:
        user = user_of(ctx.request) if users else None
        if users and user not in users:  # the door lets no one else through
            raise MCPError(code=types.INVALID_REQUEST, message="not signed in")
        return user

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        writes = policy(signed_in(ctx)).writes
        return types.ListToolsResult(tools=_mcp_tools(writes=writes))

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in _TOOL_NAMES:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        state: _State = ctx.lifespan_context
        key = session_key(ctx)
        async with state.sessions.lease(key, signed_in(ctx)) as session:
            reply = await agent.call_tool(session, params.name, params.arguments)
            if key is None and session.tx_status != "I":
                reply = _stateless_refusal(session, reply)
        return types.CallToolResult(content=[types.TextContent(type="text", text=reply.text)],
                                    is_error=reply.is_error)

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[catalog_of(signed_in(ctx))[1]])

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams
                            ) -> types.ReadResourceResult:
        if str(params.uri) != CATALOG_URI:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown resource: {params.uri}",
                           data={"uri": str(params.uri)})
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=CATALOG_URI, mime_type="text/markdown", text=catalog_of(signed_in(ctx))[0])])

    server: Server[Any] = Server(
        "glove-scratchpad", version=_version(), instructions=text, lifespan=lifespan,
        get_tool_input_schema=_input_schema,
        on_list_tools=list_tools, on_call_tool=call_tool,
        on_list_resources=list_resources, on_read_resource=read_resource,
    )
    if transport == "http":
        async def discover(ctx: Any, params: Any) -> types.DiscoverResult:
            # Only the handshake era has sessions, and transactions need one.
            return types.DiscoverResult(supported_versions=list(HANDSHAKE_PROTOCOL_VERSIONS),
                                        capabilities=server.get_capabilities(),
                                        instructions=text)

        server.add_request_handler("server/discover", types.RequestParams, discover)
    return server


_TOOL_NAMES = frozenset(t["name"] for t in agent.tool_definitions())
_DISCIPLINE = "the discipline: discover, invoke, compose, stage, preview, commit."
_CATALOG_ABOUT = {
    "full": f"Every table (tool) with its columns, keys, verbs and volatility, and {_DISCIPLINE}",
    "compact": "Every table (tool) in one line (verbs, required keys, purpose), the one "
               f"statement that reads a table's columns and keys, and {_DISCIPLINE}",
    "compact, grouped": "The tables' groups (namespaces) with their counts, the statements "
                        "that list a group's tables and read a table's columns and keys, and "
                        + _DISCIPLINE,
}


def _version() -> str:
    """The installed package's version, for ``serverInfo``."""
    try:
        return importlib.metadata.version("glove-scratchpad")
    except importlib.metadata.PackageNotFoundError:  # run from a tree that is not installed
        return "0"


def _input_schema(name: str) -> dict[str, Any] | None:
    return next((t["input_schema"] for t in agent.tool_definitions() if t["name"] == name), None)


def _mcp_tools(*, writes: bool) -> list[types.Tool]:
    read_only = {"execute_sql": not writes, "explain_sql": True}
    return [types.Tool(
        name=t["name"], description=t["description"], input_schema=t["input_schema"],
        annotations=types.ToolAnnotations(read_only_hint=read_only[t["name"]],
                                          destructive_hint=not read_only[t["name"]],
                                          open_world_hint=True),
    ) for t in agent.tool_definitions()]


def _stateless_refusal(session: Session, reply: agent.ToolReply) -> agent.ToolReply:
    """A call without a session left a transaction open: it ends here, nothing staged fires."""
    staged = len(session.preview())
    if reply.is_error:  # the statement's own error says more; add what became of the rest
        return agent.ToolReply(reply.text + "\nNOTE: without a session the transaction ended "
                               "with this call; nothing it staged fired.", is_error=True)
    detail = (f"\nDETAIL: {staged} staged write{'s' if staged != 1 else ''} discarded; nothing "
              "fired." if staged else "")
    return agent.ToolReply(f"ERROR {errors.InvalidTransactionState.sqlstate}: a transaction "
                           "cannot stay open after this call"
                           + detail + f"\nHINT: {_STATELESS_HINT}", is_error=True)


# -- running it -----------------------------------------------------------------


async def serve_mcp(
    resources: Sequence[Resource] | None = None,
    *,
    writes: bool = False,
    sidecar_dsn: str | None = None,
    sidecar_dir: str | None = None,
    http: bool = False,
    host: str = "127.0.0.1",
    port: int = DEFAULT_MCP_PORT,
    ready: Callable[[str], None] | None = None,
    mcp_servers: Iterable[McpServerConfig | Mapping[str, Any]] = (),
    apis: OpenApiBridge | None = None,
    fns: Iterable[Fn] | None = None,
    limits: Limits | None = None,
    catalog: agent.Detail = "auto",
    full_limit: int = agent.FULL_LIMIT,
    list_limit: int = agent.LIST_LIMIT,
    users: Mapping[str, User] | None = None,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
    approvals: Any = None,
) -> None:
    """Serve until the client goes away (stdio) or SIGTERM/SIGINT (both).

    ``resources`` default to the demo set. ``mcp_servers`` (``[[mcp.servers]]``)
    and ``apis`` (``[[openapi.apis]]``) add their tables, as ``glove-scratchpad
    serve`` does (``loader.sources``): with them and no ``resources``, only their
    tables are served; an MCP server that does not start, or an API whose document
    cannot be fetched or breaks a limit, is left out (logged), and a mistake of the
    configuration (a local document that cannot be read) is an error. Over HTTP,
    ``port`` 0 picks a free port; the URL is printed (and passed to ``ready``) once the
    server listens. ``catalog``, ``full_limit`` and ``list_limit`` choose the catalog's
    form (``create_server``). Over HTTP, ``users`` sign in (``mcp_http``; without them
    only loopback is served, and another ``host`` is a ValueError before anything
    starts), and ``allowed_hosts`` and ``allowed_origins`` add to the Host and Origin
    headers answered.
    """
    from glove_scratchpad.resources.mcp import McpBridge

    from .loader import sources

    users = dict(users or {})
    if http:
        check_listen(host, users)
        if host in ANY_ADDRESS and not allowed_hosts:
            log.warning("listening on every address, but answering only Host headers that name "
                        "loopback: set mcp_allowed_hosts (--allowed-host) to the names clients "
                        "reach this server by")

    shape = {"catalog": catalog, "full_limit": full_limit, "list_limit": list_limit}
    bridge = McpBridge(mcp_servers)

    @contextlib.asynccontextmanager
    async def open_db() -> AsyncIterator[Database]:
        try:
            served = resources
            if (apis is not None and apis.configs) or bridge.connections:
                served = await sources(list(resources or ()) or None, apis, bridge)
            db = await Database.create(served, writes=writes, sidecar_dsn=sidecar_dsn,
                                       sidecar_dir=sidecar_dir, fns=fns, limits=limits,
                                       approvals=approvals)
            try:
                yield db
            finally:
                await db.close()
        finally:
            await bridge.aclose()
            if apis is not None:
                await apis.aclose()

    if http:
        door = {"users": users, "allowed_hosts": allowed_hosts,
                "allowed_origins": allowed_origins}
        await _serve_http(open_db, host, port, ready, {**shape, **door})
    else:
        await _serve_stdio(open_db, ready, shape)


_OpenDb = Callable[[], contextlib.AbstractAsyncContextManager[Database]]


def http_app(db: Database, *, host: str = "127.0.0.1", users: Mapping[str, User] | None = None,
             allowed_hosts: Sequence[str] = (), allowed_origins: Sequence[str] = (),
             **shape: Any) -> Door:
    """The ASGI app of ``--http`` for ``db``: the MCP server behind its door (``mcp_http``).

    ``host`` is where it listens (its own name is an allowed Host); ``shape``:
    ``create_server``'s catalog choices. Serve it with its lifespan on, and ``close``
    it after.
    """
    users = dict(users or {})
    security = transport_security(host, allowed_hosts, allowed_origins)
    server = create_server(db, transport="http", users=users, **shape)
    log.info("MCP over HTTP: %s", describe(host, users, security))
    return Door(server.streamable_http_app(host=host, transport_security=security),
                users=users, security=security)


async def _serve_stdio(open_db: _OpenDb, ready: Callable[[str], None] | None,
                       shape: Mapping[str, Any]) -> None:
    task = asyncio.current_task()
    assert task is not None
    received: list[int] = []

    def stop(sig: int) -> None:
        received.append(sig)
        task.cancel()

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop, sig)
    # stdio_server points fd 1 at stderr while it serves, so nothing the sidecar
    # prints can reach the protocol stream: the sidecar starts inside it.
    async with stdio_server() as (read, write):
        try:
            async with open_db() as db:
                server = create_server(db, transport="stdio", **shape)
                log.info("glove-scratchpad MCP server on stdio")
                if ready is not None:
                    ready("stdio")
                await server.run(read, write, server.create_initialization_options())
        finally:
            if received:
                # The SDK reads stdin in a thread that nothing interrupts, so leaving
                # stdio_server would wait for the client to close stdin: with the
                # Database closed, die by the signal instead, as its default would.
                logging.shutdown()
                signal.signal(received[0], signal.SIG_DFL)
                signal.raise_signal(received[0])


async def _serve_http(open_db: _OpenDb, host: str, port: int,
                      ready: Callable[[str], None] | None, shape: Mapping[str, Any]) -> None:
    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family)
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    url = f"http://{shown}:{sock.getsockname()[1]}/mcp"
    app: Door | None = None
    try:
        async with open_db() as db:
            app = http_app(db, host=host, **shape)
            uv = _uvicorn_server()(uvicorn.Config(app, log_config=None, access_log=False,
                                                  lifespan="on", timeout_graceful_shutdown=10))
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.add_signal_handler(sig, setattr, uv, "should_exit", True)
            task = asyncio.create_task(uv.serve(sockets=[sock]))
            while not uv.started and not task.done():
                await asyncio.sleep(0.05)
            if uv.started:
                print(f"glove-scratchpad MCP server on {url}", flush=True)
                if ready is not None:
                    ready(url)
            await task
            if not uv.started:
                raise RuntimeError("the MCP HTTP server did not start (see the log above)")
    finally:
        if app is not None:
            app.close()
        sock.close()


def _uvicorn_server() -> type:
    import uvicorn

    class Quiet(uvicorn.Server):
        """uvicorn, minus its signal handling: ours stops it and then closes the Database
        (uvicorn's would re-raise the signal after its shutdown, killing the process first)."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    return Quiet
