"""A reference's rows from its calls' results (``engine/call_rows.py``), over the wire:
each call of several keeps the rows of its own key values, a call whose rows all carry
another value of its key is named in a NOTICE (the NOTICEs of an empty answer:
``test_messages_read``)."""

from __future__ import annotations

from typing import Any

import psycopg

from glove_scratchpad.resources import Bindings, define_resource

from ..fix_server import dsn, serving


def _resources() -> list[Any]:
    def ignoring(b: Bindings) -> list[dict[str, Any]]:
        # A tool that ignores its key for 2: its rows are everyone's.
        return [{"id": i, "label": f"item {i}"} for i in (1, 2, 3)] if b.one("id") == 2 \
            else [{"id": b.one("id"), "label": f"only {b.one('id')}"}]

    def other_meaning(b: Bindings) -> list[dict[str, Any]]:
        return [{"id": 99, "label": "an id of its own"}]  # never the argument's value

    return [define_resource("items", columns=[("id", "bigint"), ("label", "text")],
                            keys=["id"], volatility="volatile", select=ignoring),
            define_resource("others", columns=[("id", "bigint"), ("label", "text")],
                            keys=["id"], volatility="volatile", select=other_meaning)]


async def _read(url: str, sql: str) -> tuple[list[tuple[Any, ...]], list[str]]:
    notices: list[str] = []
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
        rows = await (await conn.execute(sql)).fetchall()
    return rows, notices


async def test_each_call_keeps_the_rows_of_its_own_key(make_db):
    db = await make_db(_resources())
    async with serving(db) as server:
        url = dsn(server)
        rows, notices = await _read(url, "SELECT id, label FROM items WHERE id IN (1, 2) "
                                         "ORDER BY id")
        # 2's call gave 1, 2 and 3: it keeps its own row only, 1's call keeps its own.
        assert rows == [(1, "only 1"), (2, "item 2")]
        assert notices == []

        rows, notices = await _read(url, "SELECT * FROM others WHERE id = 5")
        assert rows == []
        assert notices == [
            'resource "others" returned 1 row for id = 5, none with that id: Postgres '
            "keeps only the rows whose id is the value given, so the answer has none of "
            "them"]
