"""A stdio transport for MCP servers whose every message is budgeted.

The SDK's own stdio reader joins each chunk to the line so far and splits the
whole again, which is quadratic in a line's length, and it takes a line of any
size: one 100 MB line kept the event loop busy for minutes. This transport
reads the server's stdout as bytes and splits lines in linear time
(``LineSplitter``: each chunk is scanned once, the pieces of a line are joined
once), and refuses a line past ``max_message_bytes`` before it holds more of it.

Rules:

- A line past the limit ends the session: the server is killed at once (it is
  blocked writing the rest, and nothing it says next can be trusted to start a
  message), and ``MessageTooLarge`` is handed to ``refused``, so that the call
  that waited fails saying why rather than as a lost connection.
- A large line is parsed in a worker thread: parsing megabytes of JSON takes
  far longer than any other client may wait behind it.
- POSIX only, as the stderr reader beside it (``_session``). The process is
  started and stopped as the SDK's transport does: a session
  of its own, stdin closed first, then the whole process group ended.
"""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio
import anyio.to_thread
from anyio.abc import Process
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.os.posix.utilities import terminate_posix_process_tree
from mcp.shared.message import SessionMessage
from mcp.types import jsonrpc_message_adapter

__all__ = ["LineSplitter", "MessageTooLarge", "bounded_stdio_client"]

# Lines longer than this are parsed in a worker thread.
_PARSE_INLINE = 256 * 1024
# Seconds a server has to exit by itself once its stdin is closed, and then after SIGTERM.
_EXIT_GRACE = 2.0


class MessageTooLarge(Exception):
    """A server sent a message longer than its ``max_message_bytes``."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"it sent a message longer than max_message_bytes ({limit} bytes)")
        self.limit = limit


class LineSplitter:
    """Bytes in, whole lines out, in time linear in the bytes; a line past ``limit`` raises."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._parts: list[bytes] = []
        self._size = 0

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            self._size += len(piece)
            if self._size > self.limit:
                self._parts.clear()
                raise MessageTooLarge(self.limit)
            if end < 0:
                if piece:
                    self._parts.append(piece)
                return
            line = b"".join([*self._parts, piece]) if self._parts else piece
            self._parts.clear()
            self._size = 0
            start = end + 1
            if line.strip():
                yield line


def _parse(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return exc


@asynccontextmanager
async def bounded_stdio_client(
    server: StdioServerParameters,
    *,
    errlog: Any,
    max_message_bytes: int,
    refused: Callable[[MessageTooLarge], None],
) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's ``stdio_client``, with a linear line reader that refuses long lines."""
    process = await anyio.open_process(
        [server.command, *server.args],
        env=get_default_environment() | (server.env or {}),
        stderr=errlog,
        cwd=server.cwd,
        start_new_session=True,
    )
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def stdout_reader() -> None:
        assert process.stdout is not None
        lines = LineSplitter(max_message_bytes)
        try:
            async with read_writer:
                try:
                    async for chunk in process.stdout:
                        for line in lines.feed(chunk):
                            if len(line) > _PARSE_INLINE:
                                message = await anyio.to_thread.run_sync(_parse, line)
                            else:
                                message = _parse(line)
                            await read_writer.send(message)
                except MessageTooLarge as exc:
                    # Said before the stream closes, so that the waiting call knows why.
                    refused(exc)
                    _kill_group(process)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
            pass  # the session is gone, or our own shutdown closed the pipe

    async def stdin_writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((data + "\n").encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()  # the session sees the end, not a request hanging

    async with anyio.create_task_group() as tg:
        tg.start_soon(stdout_reader)
        tg.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                read_stream.close()
                write_stream.close()
                await _stop(process)
            tg.cancel_scope.cancel()


def _kill_group(process: Process) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


async def _stop(process: Process) -> None:
    """Close stdin, give the server its grace, then end its whole process group."""
    assert process.stdin is not None and process.stdout is not None
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    with anyio.move_on_after(_EXIT_GRACE):
        while process.returncode is None:
            await anyio.sleep(0.01)
    if process.returncode is None:
        await terminate_posix_process_tree(process, _EXIT_GRACE)
        with anyio.move_on_after(_EXIT_GRACE):
            while process.returncode is None:
                await anyio.sleep(0.01)
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdout.aclose()
    with suppress(Exception), anyio.move_on_after(_EXIT_GRACE):
        await process.aclose()
