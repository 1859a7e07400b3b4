"""Several servers on one database: different names keep apart, one name is shared by
servers with the same resources, and a clashing set under that name is refused."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import psycopg
import pytest

from glove_scratchpad.catalog import NameInUse
from glove_scratchpad.server import Database

from .. import fix_server
from .fix_postgres import Cluster
from .fix_resources import make

_dbs = itertools.count()


@asynccontextmanager
async def _serve(dsn: str, name: str, prefix: str, *, extra: bool = False,
                 take_over: bool = False) -> AsyncIterator[str]:
    db = await Database.create(make(prefix, extra), writes=True, sidecar_dsn=dsn, name=name,
                               take_over=take_over)
    try:
        async with fix_server.serving(db, writes=True, name=name) as server:
            yield fix_server.dsn(server)
    finally:
        await db.close()


async def _answers(url: str) -> dict[str, object]:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        greet = (await (await conn.execute(
            "SELECT text FROM greet WHERE who = 'x'")).fetchone())[0]  # type: ignore[index]
        await conn.execute("INSERT INTO notes (title) VALUES ('mine')")
        await conn.execute("UPDATE notes SET body = 'changed' WHERE title = 'mine'")
        notes = await (await conn.execute("SELECT title, body FROM notes ORDER BY id")).fetchall()
        tables = await (await conn.execute(
            "SELECT table_schema, table_name FROM information_schema.tables WHERE "
            "table_schema = current_schema() ORDER BY 2")).fetchall()
        return {"greet": greet, "notes": notes, "tables": tables}


@pytest.fixture
async def database(cluster: Cluster) -> str:
    name = f"shared_{next(_dbs)}"
    await cluster.execute(f"CREATE DATABASE {name}")
    return cluster.dsn(name)


async def test_two_names_on_one_database_each_answer_their_own(database: str):
    async with _serve(database, "alpha", "A:") as a, _serve(database, "beta", "B:") as b:
        got_a, got_b = await _answers(a), await _answers(b)
        assert got_a["greet"] == "A:hello x" and got_b["greet"] == "B:hello x"
        assert got_a["notes"] == [("first", "A:"), ("mine", "changed")]
        assert got_b["notes"] == [("first", "B:"), ("mine", "changed")]
        assert [s for s, _ in got_a["tables"]] == ["alpha"] * 3  # type: ignore[union-attr]
        assert [s for s, _ in got_b["tables"]] == ["beta"] * 3  # type: ignore[union-attr]
        # And again, after the other started: nothing of one was replaced by the other.
        assert (await _answers(a))["greet"] == "A:hello x"


async def test_one_name_shared_and_a_clashing_set_refused(database: str):
    async with AsyncExitStack() as stack:
        first = await stack.enter_async_context(_serve(database, "gamma", "1:"))
        second = await stack.enter_async_context(_serve(database, "gamma", "2:"))
        assert (await _answers(first))["greet"] == "1:hello x"
        assert (await _answers(second))["greet"] == "2:hello x"
        with pytest.raises(NameInUse, match=r"named 'gamma' is running .*added: more.*"
                                            r"--take-over"):
            await stack.enter_async_context(_serve(database, "gamma", "3:", extra=True))
        assert (await _answers(first))["greet"] == "1:hello x"  # untouched by the refusal
        third = await stack.enter_async_context(
            _serve(database, "gamma", "3:", extra=True, take_over=True))
        assert (await _answers(third))["greet"] == "3:hello x"
    # Nothing of that name runs now: another set simply replaces it.
    async with _serve(database, "gamma", "4:") as fourth:
        assert (await _answers(fourth))["tables"] == [
            ("gamma", "greet"), ("gamma", "notes"), ("gamma", "slow")]
