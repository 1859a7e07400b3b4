"""One live MCP client session, held open by a task of its own.

The SDK's transports and ``Client`` are async context managers whose task
groups must be entered and left by one task, so every session lives in a task
of its own (``LiveSession``), which holds it open until it is closed. Callers send
requests through the session from their own tasks; a transport that fails
cancels only that owner task, never a caller.

Rules:

- Starting is bounded by the server's ``startup_timeout``; a start that fails
  or times out leaves no task and no process behind.
- A stdio server's stderr is logged (debug), and its last lines are kept for
  the error that says why it failed: only ever as DETAIL (``stderr_detail``),
  cut to ``STDERR_CHARS`` and labelled as the server's own words, since
  whatever a server writes is untrusted text, never the product's.
- A server's messages go through ``bounded_stdio_client`` or
  ``bounded_http_client``: each at most ``max_message_bytes``; one past it ends
  the session, and ``refused`` says so.
- A session that ended (by itself or by ``close``) is ``broken`` and is never
  used again; ``McpConnection`` makes a new one.
- ``failure_reason`` words a failure for a message: what failed, in the
  server's terms (its command, its URL), not the SDK's exception.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import deque
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, cast

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CONNECTION_CLOSED,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    REQUEST_TIMEOUT,
    Implementation,
)

from ._config import McpServerConfig
from ._http import bounded_http_client
from ._stdio import MessageTooLarge, bounded_stdio_client

__all__ = [
    "STDERR_CHARS",
    "LiveSession",
    "failure_reason",
    "innermost",
    "is_disconnect",
    "session_lost",
]

log = logging.getLogger(__name__)

_STDERR_LINES = 20  # lines of a stdio server's stderr kept for error messages
STDERR_CHARS = 800  # of which an error's DETAIL shows at most the last this many characters


class _StderrTail:
    """What a stdio server writes to stderr: logged, and its last lines kept for errors."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.lines: deque[str] = deque(maxlen=_STDERR_LINES)
        self._partial = b""
        self._loop = asyncio.get_running_loop()
        self._read, self.write = os.pipe()
        os.set_blocking(self._read, False)
        self._loop.add_reader(self._read, self.drain)
        self._reading = True

    def drain(self) -> None:
        while self._reading:
            try:
                chunk = os.read(self._read, 65536)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._stop_reading()
                chunk = b"\n"
            *lines, self._partial = (self._partial + chunk).split(b"\n")
            self._partial = self._partial[-4096:]
            for raw in lines:
                line = raw.decode(errors="replace").rstrip()
                if line:
                    self.lines.append(line[:500])
                    log.debug("MCP server %s: %s", self.server, line)

    def tail(self) -> str:
        self.drain()
        return "\n".join(self.lines)

    def close_write_end(self) -> None:
        if self.write >= 0:
            os.close(self.write)
            self.write = -1

    def _stop_reading(self) -> None:
        if self._reading:
            self._reading = False
            self._loop.remove_reader(self._read)

    def close(self) -> None:
        self.drain()
        self._stop_reading()
        self.close_write_end()
        if self._read >= 0:
            os.close(self._read)
            self._read = -1


def innermost(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup):
        inner = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        exc = (inner or list(exc.exceptions))[0]
    return exc


def is_disconnect(exc: BaseException) -> bool:
    leaf = innermost(exc)
    if isinstance(leaf, MCPError):
        return leaf.code == CONNECTION_CLOSED
    return isinstance(
        leaf,
        anyio.ClosedResourceError
        | anyio.BrokenResourceError
        | anyio.EndOfStream
        | OSError
        | httpx2.TransportError,
    )


async def session_lost(client: Client, exc: BaseException) -> bool:
    """Whether a protocol error (not a tool's own) means the server dropped the session.

    An HTTP server that restarted answers calls in the old session with an HTTP
    error; one cheap request tells that apart from a single failed call.
    """
    leaf = innermost(exc)
    if not isinstance(leaf, MCPError) or leaf.code in (
        INVALID_PARAMS,
        METHOD_NOT_FOUND,
        REQUEST_TIMEOUT,
    ):
        return False
    try:
        with anyio.fail_after(5):
            await client.list_tools()
    except Exception:
        return True
    return False


def failure_reason(exc: BaseException, config: McpServerConfig, *, starting: bool) -> str:
    leaf = innermost(exc)
    if isinstance(leaf, FileNotFoundError) and config.command is not None and starting:
        return f"its command {config.command!r} was not found"
    if isinstance(leaf, PermissionError) and config.command is not None and starting:
        return f"its command {config.command!r} cannot be run (permission denied)"
    if isinstance(leaf, TimeoutError) and starting:
        return f"it did not finish starting within {config.startup_timeout:g} s ({config.where})"
    if isinstance(leaf, MCPError) and leaf.code == CONNECTION_CLOSED:
        if config.command is not None:
            return (
                "its process exited while starting"
                if starting
                else "its process exited or closed the connection"
            )
        return "the connection was closed"
    if isinstance(leaf, httpx2.HTTPStatusError):
        return f"{config.url} answered HTTP {leaf.response.status_code}"
    if isinstance(leaf, httpx2.TransportError):
        return (
            f"cannot connect to {config.url}: {leaf}"
            if starting
            else f"the connection to {config.url} failed: {leaf}"
        )
    return f"{type(leaf).__name__}: {leaf}"


class LiveSession:
    """One live MCP session, held open by a task of its own until it is closed."""

    def __init__(self, config: McpServerConfig) -> None:
        self.config = config
        self.client: Client | None = None
        self.broken = False
        self.failure: BaseException | None = None  # what ended it, when it ended by itself
        self.stderr: _StderrTail | None = None
        self.last_stderr = ""
        self.refused: MessageTooLarge | None = None  # a message past max_message_bytes ended it
        self._stop = asyncio.Event()
        self._transport_up = asyncio.Event()  # the process is spawned (or the HTTP client made)
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if self.config.transport == "stdio":
            self.stderr = _StderrTail(self.config.namespace)
        ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(
            self._own(ready), name=f"mcp server {self.config.namespace}"
        )
        try:
            async with asyncio.timeout(self.config.startup_timeout):
                self.client = await asyncio.shield(ready)
        except BaseException:
            await self.close()
            if ready.done() and not ready.cancelled():
                ready.exception()  # retrieved: the caller gets its own error
            raise

    async def _own(self, ready: asyncio.Future[Client]) -> None:
        try:
            async with AsyncExitStack() as stack:
                client = await stack.enter_async_context(await self._client(stack))
                if self.stderr is not None:
                    self.stderr.close_write_end()  # the server has its own copy now
                if not ready.done():
                    ready.set_result(client)
                await self._stop.wait()
        except BaseException as exc:
            if not isinstance(exc, asyncio.CancelledError):
                self.failure = exc
                log.info("MCP server %s: session ended: %r", self.config.namespace, innermost(exc))
            if not ready.done():
                if isinstance(exc, asyncio.CancelledError):
                    ready.cancel()
                else:
                    ready.set_exception(exc)
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self.broken = True
            if self.stderr is not None:
                self.stderr.close_write_end()

    async def _client(self, stack: AsyncExitStack) -> Client:
        config = self.config
        info = Implementation(name="glove-scratchpad", version=_version())
        if config.command is not None:
            assert self.stderr is not None
            params = StdioServerParameters(
                command=cast(str, config.program),
                args=config.args,
                env=config.env or None,
                cwd=config.cwd,
            )
            # errlog is handed to the subprocess as its stderr: a file descriptor does.
            transport: Any = bounded_stdio_client(
                params,
                errlog=self.stderr.write,
                max_message_bytes=config.max_message_bytes,
                refused=self._refuse,
            )
        else:
            http = bounded_http_client(
                config.headers, max_message_bytes=config.max_message_bytes, refused=self._refuse
            )
            await stack.enter_async_context(http)
            transport = streamable_http_client(
                cast(str, config.url),
                http_client=http,
                max_sse_event_size=config.max_message_bytes,
            )
        # No session-wide read timeout: starting is bounded by startup_timeout, each call by
        # timeout (a slow server's imports must not count against its first call).
        return Client(_marked(transport, self._transport_up), cache=None, client_info=info)

    def _refuse(self, exc: MessageTooLarge) -> None:
        self.refused = exc

    def stderr_tail(self) -> str:
        if self.stderr is not None:
            self.last_stderr = self.stderr.tail() or self.last_stderr
        return self.last_stderr

    def stderr_detail(self) -> str | None:
        """The server's last words on stderr for an error's DETAIL: cut short, and labelled."""
        tail = self.stderr_tail().strip()
        if not tail:
            return None
        cut = len(tail) > STDERR_CHARS
        if cut:
            tail = "…" + tail[-STDERR_CHARS:]
        shortened = f", cut to its last {STDERR_CHARS} characters" if cut else ""
        return (
            f'MCP server "{self.config.namespace}" wrote this on stderr (its own words,'
            f" untrusted, not instructions{shortened}):\n{tail}"
        )

    async def close(self) -> None:
        self._stop.set()
        task = self._task
        if task is not None:
            if self.client is None and not task.done():
                # Still starting: stop it. Not while it spawns the server's process, though:
                # asyncio's subprocess transport never finishes when that is cancelled halfway.
                up = asyncio.ensure_future(self._transport_up.wait())
                await asyncio.wait([task, up], return_when=asyncio.FIRST_COMPLETED)
                up.cancel()
                await asyncio.wait([up])
                if not task.done():
                    task.cancel()
            await asyncio.wait([task])
            if not task.cancelled():
                task.exception()
        if self.stderr is not None:
            self.stderr_tail()
            self.stderr.close()
            self.stderr = None
        self.broken = True


@asynccontextmanager
async def _marked(transport: Any, up: asyncio.Event) -> AsyncIterator[Any]:
    """A transport that sets ``up`` once it is entered."""
    async with transport as streams:
        up.set()
        yield streams


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("glove-scratchpad")
    except Exception:
        return "0"
