"""Malformed input from one client never disturbs another client's session.

A normal asyncpg session runs queries while raw sockets send garbage, absurd
lengths, truncated messages, bad start-up packets and invalid UTF-8. Each bad
client gets a FATAL 08P01 (or, for a message it never finished, just the close),
and the asyncpg session and new connections keep working.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct

import asyncpg
import pytest

from glove_scratchpad.wire import Query, StartupMessage, Sync

STARTUP = StartupMessage(parameters={"user": "agent", "database": "scratchpad"}).encode()


def msg(type_byte: bytes, body: bytes) -> bytes:
    return type_byte + struct.pack("!i", len(body) + 4) + body


def packet(body: bytes) -> bytes:
    return struct.pack("!i", len(body) + 4) + body


# name: (bytes sent after connecting, whether a start-up happens first, SQLSTATEs accepted)
CASES: dict[str, tuple[bytes, bool, tuple[bytes, ...]]] = {
    "http request": (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", False, (b"08P01",)),
    "tls client hello": (bytes.fromhex("160301020001") + b"\x00" * 64, False, (b"08P01",)),
    "huge startup length": (b"\x7f\xff\xff\xff\x00\x03\x00\x00", False, (b"08P01",)),
    "negative startup length": (b"\xff\xff\xff\xf0\x00\x03\x00\x00", False, (b"08P01",)),
    "startup length below 8": (b"\x00\x00\x00\x02", False, (b"08P01",)),
    "protocol 2.0": (packet(b"\x00\x02\x00\x00user\x00agent\x00\x00"), False,
                     (b"08P01", b"0A000")),
    "protocol 4.0": (packet(b"\x00\x04\x00\x00user\x00agent\x00\x00"), False,
                     (b"08P01", b"0A000")),
    "unterminated parameters": (packet(b"\x00\x03\x00\x00user\x00agent"), False, (b"08P01",)),
    "key without value": (packet(b"\x00\x03\x00\x00user\x00agent\x00lonely\x00"), False,
                          (b"08P01",)),
    "non-utf8 user name": (packet(b"\x00\x03\x00\x00user\x00\xff\xfe\x00\x00"), False,
                           (b"08P01", b"22021")),
    "ssl request with a body": (packet(b"\x04\xd2\x16\x2fextra"), False, (b"08P01",)),
    "oversized query length": (b"Q\x7f\xff\xff\xff", True, (b"08P01",)),
    "negative message length": (b"Q\xff\xff\xff\xff", True, (b"08P01",)),
    "message length below 4": (b"Q\x00\x00\x00\x02", True, (b"08P01",)),
    "oversized sync": (b"S\x00\x00\x4e\x24" + b"\x00" * 20000, True, (b"08P01",)),
    "unknown message type": (msg(b"z", b""), True, (b"08P01",)),
    "startup packet in the normal phase": (STARTUP, True, (b"08P01",)),
    "query without its nul": (msg(b"Q", b"SELECT 1"), True, (b"08P01",)),
    "invalid utf-8 query": (msg(b"Q", b"SELECT '\xff\xfe\xc3'\x00"), True,
                            (b"08P01", b"22021")),
    "invalid utf-8 parse": (msg(b"P", b"\x00SELECT '\xc3\x28'\x00\x00\x00") + Sync().encode(),
                            True, (b"08P01", b"22021")),
    "bind claiming 5 parameters": (msg(b"B", b"\x00\x00\x00\x00\x00\x05") + Sync().encode(),
                                   True, (b"08P01",)),
    "execute with a short body": (msg(b"E", b"\x00\x00") + Sync().encode(), True, (b"08P01",)),
    "describe of kind X": (msg(b"D", b"Xname\x00") + Sync().encode(), True, (b"08P01",)),
    "garbage after a good query": (Query("SELECT 1").encode() + b"\x01\x02\x03\x04\x05\x06",
                                   True, (b"08P01",)),
}
# Sent, then the writing side is shut: the server must just close.
TRUNCATED: dict[str, tuple[bytes, bool]] = {
    "truncated startup packet": (STARTUP[:11], False),
    "truncated query": (b"Q\x00\x00\x01\x00SELECT", True),
    "header only": (b"Q\x00\x00", True),
}


async def _read_all(reader: asyncio.StreamReader) -> bytes:
    data = b""
    async with asyncio.timeout(15):
        while chunk := await reader.read(65536):
            data += chunk
    return data


async def _open(port: int, startup: bool) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    if startup:
        writer.write(STARTUP)
        buf = b""
        async with asyncio.timeout(15):
            while b"Z\x00\x00\x00\x05I" not in buf:
                chunk = await reader.read(65536)
                assert chunk, "closed during start-up"
                buf += chunk
    return reader, writer


async def _close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(ConnectionError, OSError):
        await writer.wait_closed()


async def bad_client(port: int, data: bytes, startup: bool) -> bytes:
    reader, writer = await _open(port, startup)
    try:
        writer.write(data)
        try:
            return await _read_all(reader)  # up to the server's close
        except ConnectionResetError:
            return b"<reset>"
    finally:
        await _close(writer)


async def assert_healthy(conn: asyncpg.Connection, dsn: str) -> None:
    assert await conn.fetchval("SELECT count(*) FROM items") == 100
    assert await conn.fetchval("SELECT name FROM items WHERE id = $1", 42) == "item 42"
    fresh = await asyncpg.connect(dsn)
    try:
        assert await fresh.fetchval("SELECT 1") == 1
    finally:
        await fresh.close()


@pytest.fixture
async def victim(dsn):
    conn = await asyncpg.connect(dsn)
    assert await conn.fetchval("SELECT price FROM items WHERE id = 2") == 3.0
    yield conn
    await conn.close()


@pytest.mark.parametrize("case", list(CASES))
async def test_malformed_input_gets_fatal_08p01(server, dsn, victim, case):
    data, startup, codes = CASES[case]
    reply = await bad_client(server.port, data, startup)
    if reply != b"<reset>":
        assert b"SFATAL\x00" in reply, reply[-300:]
        assert any(b"C" + code + b"\x00" in reply for code in codes), reply[-300:]
        # The FATAL names the client's violation, not a reply the server then could not send.
        assert b"not allowed in state" not in reply, reply[-300:]
    await assert_healthy(victim, dsn)


@pytest.mark.parametrize("case", list(TRUNCATED))
async def test_truncated_message_then_eof_just_closes(server, dsn, victim, case):
    data, startup = TRUNCATED[case]
    reader, writer = await _open(server.port, startup)
    try:
        writer.write(data)
        writer.write_eof()
        reply = await _read_all(reader)
        assert b"SFATAL" not in reply or b"C08P01" in reply
    finally:
        await _close(writer)
    await assert_healthy(victim, dsn)


async def test_a_stalled_partial_message_blocks_nobody(server, dsn, victim):
    _, writer = await _open(server.port, True)
    try:
        writer.write(b"Q\x00\x10\x00\x00SELECT ")  # promises 1 MiB, sends 7 bytes, waits
        await writer.drain()
        for _ in range(3):
            await assert_healthy(victim, dsn)
    finally:
        await _close(writer)


async def test_all_at_once_while_a_session_keeps_querying(server, dsn, victim):
    async def keep_querying() -> int:
        n = 0
        for i in range(1, 41):
            assert await victim.fetchval("SELECT name FROM items WHERE id = $1", i) == f"item {i}"
            n += 1
        return n

    bad = [bad_client(server.port, data, startup) for data, startup, _ in CASES.values()] * 3
    results = await asyncio.gather(keep_querying(), *bad)
    assert results[0] == 40
    for reply in results[1:]:
        assert reply == b"<reset>" or b"SFATAL\x00" in reply
    await assert_healthy(victim, dsn)


async def test_a_client_vanishing_mid_statement_disturbs_nobody(server, dsn, victim):
    _, writer = await _open(server.port, True)
    writer.write(Query("SELECT * FROM slow WHERE seconds = 0.5").encode())
    await writer.drain()
    await _close(writer)
    await assert_healthy(victim, dsn)
    await asyncio.sleep(0.6)
    await assert_healthy(victim, dsn)
