"""Memory with a ceiling, measured on a server process of its own (its RSS, by psutil):
messages half received count against one server-wide budget and are given back when
their connections end; rows a client does not read are not read from the sidecar."""

from __future__ import annotations

import asyncio
import contextlib
import struct
import time
from collections.abc import AsyncIterator

import psutil
import pytest

from .fix_cli import Running, cli_server
from .fix_server import free_port

pytestmark = pytest.mark.timeout(120)

MB = 1024 * 1024
BUDGET = 64 * MB  # max_pending_bytes of the server measured
CLAIMED = 1000 * MB  # what each half-sent message says it is: about 1 GB
SENT = 256 * MB  # what each sends of it: four budgets
# The RSS a server may grow by while two such messages arrive: the budget, a read ahead
# and the growth of a buffer per connection, and room for a busy machine's noise. Without
# the budget it grows by twice SENT.
HALF_SENT_GROWTH = BUDGET + 96 * MB
RETURNED = 48 * MB  # above the start, once the connections are gone


@contextlib.asynccontextmanager
async def _served(sidecar, name: str, **env: str) -> AsyncIterator[tuple[Running, int]]:
    """A ``serve`` process over the session's sidecar (schemas of ``name``), and its port."""
    port = free_port()
    dsn = sidecar.dsn.replace("/scratchpad?", "/postgres?")  # a database it has
    async with cli_server("--sidecar-dsn", dsn, "--name", name, "--port", str(port),
                          env={f"GLOVE_SCRATCHPAD_{k.upper()}": v for k, v in env.items()}
                          ) as running:
        yield running, port


def _rss(running: Running) -> int:
    return int(psutil.Process(running.proc.pid).memory_info().rss)


async def _started(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A raw connection past its start-up (loopback trust: no password)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    body = struct.pack("!i", 3 << 16) + b"user\x00agent\x00database\x00scratchpad\x00\x00"
    writer.write(struct.pack("!i", len(body) + 4) + body)
    seen = b""
    while not seen.endswith(b"Z\x00\x00\x00\x05I"):
        chunk = await reader.read(65536)
        assert chunk, seen
        seen += chunk
    return reader, writer


async def _send_half(writer: asyncio.StreamWriter) -> None:
    """A Query that says it is CLAIMED bytes long, SENT of them sent, until refused."""
    chunk = b"x" * MB
    writer.write(b"Q" + struct.pack("!I", CLAIMED))
    with contextlib.suppress(ConnectionError):
        for _ in range(SENT // MB):
            writer.write(chunk)
            await writer.drain()


async def _answer(reader: asyncio.StreamReader) -> bytes | None:
    """What the server said before it ended the connection (None: reset first)."""
    try:
        return await asyncio.wait_for(reader.read(), 10)
    except ConnectionError:
        return None


async def _peak(running: Running, until: asyncio.Future[None]) -> int:
    peak = 0
    while not until.done():
        peak = max(peak, _rss(running))
        await asyncio.sleep(0.01)
    return max(peak, _rss(running))


async def test_half_sent_messages_count_against_the_budget_and_are_given_back(sidecar):
    async with _served(sidecar, "halfsent", max_pending_bytes=str(BUDGET)) as (running, port):
        conns = [await _started(port) for _ in range(2)]
        start = _rss(running)
        sending = asyncio.gather(*(_send_half(w) for _, w in conns))
        peak = await _peak(running, sending)
        assert sending.exception() is None
        answers = [await _answer(r) for r, _ in conns]
        for _, w in conns:
            w.close()
        # Ended, once over the budget (its error comes first, if the reset lets it).
        assert all(a in (b"", None) or b"C53200\x00" in a for a in answers), answers
        assert peak - start <= HALF_SENT_GROWTH, (start // MB, peak // MB)
        deadline = time.monotonic() + 10
        while _rss(running) - start > RETURNED and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert _rss(running) - start <= RETURNED, (start // MB, _rss(running) // MB)
        # And the server serves on.
        _, writer = await _started(port)
        writer.close()



CLIENTS = 8
ROWS, WIDTH = 200_000, 1000  # a result of 200 MB, made in the sidecar
BIG = f"SELECT repeat('x', {WIDTH}) FROM generate_series(1, {ROWS})"
UNREAD_GROWTH = 300 * MB  # the RSS the server may grow by while none of them reads
WATCHED = 6.0  # seconds the unread results are watched: without backpressure, the server
# reads them from the sidecar all the while, and grows past the bound well within it


def _query(sql: str) -> bytes:
    body = sql.encode() + b"\x00"
    return b"Q" + struct.pack("!I", len(body) + 4) + body


async def test_results_a_client_does_not_read_are_not_read_from_the_sidecar(sidecar):
    async with _served(sidecar, "unread") as (running, port):
        conns = [await _started(port) for _ in range(CLIENTS)]
        start = _rss(running)
        for _, w in conns:
            w.write(_query(BIG))
        peak = await _peak(running, asyncio.ensure_future(asyncio.sleep(WATCHED)))
        print(f"unread: {start // MB} MB at the start, {peak // MB} MB at the peak")
        assert peak - start <= UNREAD_GROWTH, (start // MB, peak // MB)
        # Read at last, a result is whole: every row, then its tag.
        reader, _ = conns[0]
        got, tail = 0, b""
        while not tail.endswith(b"Z\x00\x00\x00\x05I"):
            chunk = await asyncio.wait_for(reader.read(4 * MB), 30)
            assert chunk, tail
            got += len(chunk)
            tail = (tail + chunk)[-64:]
        assert got > ROWS * (WIDTH + 11) and f"SELECT {ROWS}\x00Z".encode() in tail
        for _, w in conns:
            w.close()
