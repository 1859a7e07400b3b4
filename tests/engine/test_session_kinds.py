"""One judge, over the wire: every statement kind the gate accepts reaches a branch of
the engine that runs it, and every refusal reaches the client with its SQLSTATE and a
HINT. The samples are the gate's own (``tests/sql/gate_samples.py``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
from pglast import ast
from pydantic import BaseModel

from glove_scratchpad.resources import define_resource

from .. import fix_server
from ..sql.gate_samples import ACCEPTED, REFUSED


class Pr(BaseModel):
    number: int
    title: str


# What each kind answers (``ACCEPTED``'s statement of it): its command tag, and its rows
# (None: no result set), or what its rows must satisfy.
ANSWERS: dict[type[ast.Node], tuple[str, Any]] = {
    ast.SelectStmt: ("SELECT 1", [(1, "x")]),
    ast.InsertStmt: ("INSERT 0 1", None),
    ast.UpdateStmt: ("UPDATE 1", None),
    ast.DeleteStmt: ("DELETE 1", None),
    # the plan, calling nothing: first the one reference, its one call by its key
    ast.ExplainStmt: ("EXPLAIN", lambda rows: rows[0][0].startswith("Resource github_pr")
                      and "calls: 1" in rows[0][0]),
    ast.TransactionStmt: ("BEGIN", None),
    ast.VariableSetStmt: ("SET", None),
    ast.VariableShowStmt: ("SHOW", lambda rows: len(rows) == 1 and rows[0][0]),
    ast.DiscardStmt: ("DISCARD ALL", None),
    ast.DeallocateStmt: ("DEALLOCATE ALL", None),
    ast.ClosePortalStmt: ("CLOSE CURSOR ALL", None),
    ast.DeclareCursorStmt: ("DECLARE CURSOR", None),
    ast.FetchStmt: ("FETCH 1", [("x",)]),  # the one row of the cursor DECLARE opened
    ast.UnlistenStmt: ("UNLISTEN", None),
}


@pytest.fixture(scope="module")
async def dsn(sidecar: Any) -> AsyncIterator[str]:
    from glove_scratchpad.server import Database

    store = {1: Pr(number=1, title="x")}
    github_pr = define_resource(
        "github_pr", schema=Pr, keys=["number"], primary_key=["number"],
        volatility="volatile", select=lambda b: [store[n] for n in b.all("number") if n in store],
        insert=lambda rows: None, update=lambda changes, b: None, delete=lambda b: None)
    plain = [define_resource(n, columns=[("title", "text")], volatility="volatile",
                             select=lambda b: [], insert=lambda rows: None)
             for n in ("web", "notion_page")]
    db = await Database.create([github_pr, *plain], writes=True, sidecar=sidecar,
                               database="test_every_kind")
    try:
        async with fix_server.serving(db, writes=True) as srv:
            yield fix_server.dsn(srv)
    finally:
        await db.close()


@pytest.mark.parametrize("kind", sorted(ACCEPTED, key=lambda k: k.__name__),
                         ids=lambda k: k.__name__)
async def test_an_accepted_kind_runs(dsn, kind):
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        if kind is ast.FetchStmt:  # a FETCH needs a cursor to read
            await conn.execute(ACCEPTED[ast.DeclareCursorStmt], prepare=False)
        cur = await conn.execute(ACCEPTED[kind], prepare=False)
        rows = await cur.fetchall() if cur.description is not None else None
        status = conn.info.transaction_status
    tag, expected = ANSWERS[kind]
    assert cur.statusmessage == tag
    if callable(expected):
        assert rows is not None and expected(rows), rows
    else:
        assert rows == expected
    # only BEGIN leaves a transaction block open
    in_block = psycopg.pq.TransactionStatus.INTRANS
    assert (status == in_block) is (kind is ast.TransactionStmt)


@pytest.mark.parametrize("name", sorted(n for n, r in REFUSED.items()
                                        if r.params is None and not r.values_later))
async def test_a_refusal_reaches_the_client_whole(dsn, name):
    refused = REFUSED[name]
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        with pytest.raises(psycopg.Error) as info:
            await conn.execute(refused.sql, prepare=False)
    assert info.value.sqlstate == refused.code
    assert info.value.diag.message_hint
