"""Portal runs answered in the transports' callbacks (``net/callbacks.py``), over a raw
socket, when our own code fails there.

A compiled read whose calls are cached, its Bind, Execute and Sync sent together, is
answered in callbacks (tests/net/test_portal_run.py shows its answers, cancels and
timeouts). A bug while starting such a run is logged and counted, and the task answers
the run its own way, with the right rows. A bug while answering one loses its reply:
the connection ends with XX000, said FATAL, rather than closing without a word.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlparse

import pytest

from glove_scratchpad.server.engine.guard import Limits
from glove_scratchpad.server.engine.session import Session
from glove_scratchpad.server.net import internal, portal_run
from glove_scratchpad.wire import (
    Bind,
    BindComplete,
    CommandComplete,
    DataRow,
    ErrorResponse,
    Execute,
    Parse,
    ParseComplete,
    ReadyForQuery,
    Sync,
)

from ..engine.fix_cache import counting, serve
from ..fidelity.rawclient import RawClient
from ..fix_metrics import counted

LOOKUP = "SELECT id, label FROM big WHERE id = $1"
COUNTED = "glove_internal_errors_total"


class Boom(RuntimeError):
    pass


@pytest.fixture
async def client(sidecar: Any, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[RawClient]:
    """A raw client whose prepared LOOKUP ran once (by the full path: compiled after)."""
    async with serve(sidecar, counting(monkeypatch), Limits(cache_min_rows=20)) as (_, dsn):
        raw = await RawClient.open("127.0.0.1", int(urlparse(dsn).port or 0))
        try:
            assert isinstance((await raw.startup())[-1], ReadyForQuery)
            raw.send(Parse("lookup", LOOKUP, ()), Sync())
            assert [type(m) for m in await raw.until_ready()] == [ParseComplete,
                                                                   ReadyForQuery]
            assert await _run(raw, 7) == [BindComplete, DataRow, CommandComplete,
                                          ReadyForQuery]
            yield raw
        finally:
            await raw.close()


async def _run(raw: RawClient, key: int) -> list[Any]:
    raw.send(Bind("", "lookup", (), (str(key).encode(),), ()), Execute("", 0), Sync())
    return [type(m) for m in await raw.until_ready()]


def _logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == internal.__name__
            and r.exc_info and isinstance(r.exc_info[1], Boom)]


async def test_a_bug_starting_a_run_in_callbacks_is_counted_and_the_task_answers_it(
        client: RawClient, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture):
    sample = counted(monkeypatch)
    before = sample(COUNTED)
    tried = []

    def boom(*_: Any) -> None:
        tried.append(True)
        raise Boom("callbacks' secret")

    monkeypatch.setattr(Session, "answer_read", boom)
    client.send(Bind("", "lookup", (), (b"8",), ()), Execute("", 0), Sync())
    replies = await client.until_ready()
    assert [type(m) for m in replies] == [BindComplete, DataRow, CommandComplete,
                                          ReadyForQuery]
    assert replies[1].values[0] == b"8"  # the task's answer, right
    assert tried and _logged(caplog) == ["internal error starting a portal run in callbacks"]
    assert sample(COUNTED) - before == 1


async def test_a_bug_answering_a_run_in_callbacks_ends_the_connection_with_xx000(
        client: RawClient, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture):
    sample = counted(monkeypatch)
    before = sample(COUNTED)

    def boom(*_: Any) -> None:
        raise Boom("callbacks' secret")

    monkeypatch.setattr(portal_run, "send_run", boom)
    client.send(Bind("", "lookup", (), (b"8",), ()), Execute("", 0), Sync())
    err = await client.recv()
    assert isinstance(err, ErrorResponse)
    assert (err.fields["S"], err.fields["C"], err.fields["M"]) == (
        "FATAL", "XX000", internal.MESSAGE)
    assert "secret" not in str(err.fields)
    assert await client.closed()
    assert _logged(caplog) == ["internal error answering a portal run"]
    assert sample(COUNTED) - before == 1
