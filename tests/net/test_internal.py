"""Our own bugs, as a client meets them (``net/internal.py``), over a raw socket: in a
message of the extended protocol, in a statement of a simple Query, and outside both.

A fault is put where each way meets it (a function of the server's made to raise an
exception whose text holds a secret and a path). Each way: the client gets XX000 with
the generic message and the HINT, and nothing of the exception (its text, its type, a
traceback); the log has the traceback; ``glove_internal_errors`` counts it once. In a
message or a statement the connection goes on; outside both it ends with the error
FATAL.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from glove_scratchpad.server.engine.session import Session
from glove_scratchpad.server.net import connection, internal, portals
from glove_scratchpad.wire import (
    Bind,
    CommandComplete,
    DataRow,
    ErrorResponse,
    Execute,
    Parse,
    ParseComplete,
    Query,
    ReadyForQuery,
    RowDescription,
    Sync,
)

from ..fidelity.rawclient import RawClient
from ..fix_metrics import counted

SECRET = "token=s3cr3t in /srv/glove/server/net/portals.py line 42"
COUNTED = "glove_internal_errors_total"


def _boom(*_: Any, **__: Any) -> Any:
    raise RuntimeError(SECRET)


async def _raw(server: Any) -> RawClient:
    client = await RawClient.open("127.0.0.1", server.port)
    assert isinstance((await client.startup())[-1], ReadyForQuery)
    return client


def _says_nothing_internal(err: ErrorResponse, severity: str) -> None:
    fields = err.fields
    assert (fields["S"], fields["C"], fields["M"], fields["H"]) == (
        severity, "XX000", internal.MESSAGE, internal.HINT)
    told = " ".join(str(v) for v in fields.values())
    for word in ("s3cr3t", "/srv", ".py", "RuntimeError", "Traceback"):
        assert word not in told


def _logged(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The internal errors logged, each with its traceback."""
    found = [r for r in caplog.records if r.name == internal.__name__]
    assert all(r.exc_info and isinstance(r.exc_info[1], RuntimeError)
               and SECRET in str(r.exc_info[1]) for r in found)
    return found


async def test_our_bug_in_a_message_is_xx000_and_the_connection_goes_on(
        server: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture):
    sample = counted(monkeypatch)
    before = sample(COUNTED)
    client = await _raw(server)
    try:
        monkeypatch.setattr(portals, "bind", _boom)
        client.send(Parse("", "SELECT 1", ()), Bind("", "", (), (), ()), Execute("", 0),
                    Sync())
        replies = await client.until_ready()
        assert [type(m) for m in replies] == [ParseComplete, ErrorResponse, ReadyForQuery]
        _says_nothing_internal(replies[1], "ERROR")
        assert [r.getMessage() for r in _logged(caplog)] == ["internal error in Bind"]
        assert sample(COUNTED) - before == 1
        client.send(Query("SELECT 1"))
        assert [type(m) for m in await client.until_ready()] == [
            RowDescription, DataRow, CommandComplete, ReadyForQuery]
    finally:
        await client.close()


async def test_our_bug_in_a_statement_is_xx000_and_the_connection_goes_on(
        server: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture):
    sample = counted(monkeypatch)
    before = sample(COUNTED)
    client = await _raw(server)
    try:
        with monkeypatch.context() as m:
            m.setattr(Session, "run", _boom)
            client.send(Query("SELECT 1"))
            replies = await client.until_ready()
        assert [type(m) for m in replies] == [ErrorResponse, ReadyForQuery]
        _says_nothing_internal(replies[0], "ERROR")
        assert [r.getMessage() for r in _logged(caplog)] == [
            "internal error running 'SELECT 1'"]
        assert sample(COUNTED) - before == 1
        client.send(Query("SELECT 1"))
        assert [type(m) for m in await client.until_ready()] == [
            RowDescription, DataRow, CommandComplete, ReadyForQuery]
    finally:
        await client.close()


async def test_our_bug_outside_a_message_ends_the_connection_with_xx000(
        server: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture):
    sample = counted(monkeypatch)
    before = sample(COUNTED)
    client = await _raw(server)
    try:
        monkeypatch.setattr(connection, "parsed", _boom)
        client.send(Query("SELECT 1"))
        err = await client.recv()
        assert isinstance(err, ErrorResponse)
        _says_nothing_internal(err, "FATAL")
        assert await client.closed()
        assert [r.getMessage().split(",")[0] for r in _logged(caplog)] == [
            "internal error serving ('127.0.0.1'"]
        assert sample(COUNTED) - before == 1
    finally:
        await client.close()
