"""The client matrix through the Python drivers: every case of fix_matrix.CASES, in every
protocol mode each driver has (checked on the wire by the relay, not assumed).

- psycopg: simple (``ClientCursor``, ``prepare=False``), extended (pipeline mode,
  ``prepare=False``: psycopg sends a statement without parameters as a simple Query
  outside a pipeline), prepared (``prepare=True``);
- asyncpg: prepared (its statement cache names every statement);
- pg8000 (native): simple (``run`` without parameters), extended (``execute_unnamed``),
  prepared (``prepare``);
- SQLAlchemy ``text()`` in AUTOCOMMIT, over psycopg (simple) and over asyncpg (prepared).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
import pg8000.native
import psycopg
import pytest
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.ext.asyncio import create_async_engine

from .fix_clients import in_thread
from .fix_matrix import CASES, Case, Relay, Seen, app_name, check, relay

__all__ = ["relay"]  # the fixture, used by name

Run = Callable[[Relay, str, Case], Awaitable[Seen]]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


async def run_psycopg(relay: Relay, mode: str, case: Case) -> Seen:
    seen = Seen()
    factory = psycopg.AsyncClientCursor if mode == "simple" else psycopg.AsyncCursor
    conn = await psycopg.AsyncConnection.connect(
        relay.dsn(app_name("psycopg", mode, case)), autocommit=True, cursor_factory=factory)
    conn.add_notice_handler(lambda d: seen.notices.append((d.message_primary, d.message_hint)))
    try:
        for sql in case.statements:
            cur = conn.cursor()
            try:
                if mode == "extended":
                    async with conn.pipeline():
                        await cur.execute(sql, prepare=False)
                else:
                    await cur.execute(sql, prepare=mode == "prepared")
            except psycopg.Error as e:
                seen.errors.append((e.diag.sqlstate, e.diag.message_primary, e.diag.message_hint))
                continue
            if cur.description is not None:
                seen.rows.extend(_text(r[0]) for r in await cur.fetchall())
    finally:
        await conn.close()
    return seen


async def run_asyncpg(relay: Relay, mode: str, case: Case) -> Seen:
    seen = Seen()
    conn = await asyncpg.connect(relay.dsn(app_name("asyncpg", mode, case)))
    conn.add_log_listener(lambda _c, m: seen.notices.append((m.message, m.hint)))
    try:
        for sql in case.statements:
            try:
                seen.rows.extend(_text(r[0]) for r in await conn.fetch(sql))
            except asyncpg.PostgresError as e:
                seen.errors.append((e.sqlstate, e.message, e.hint))
            await asyncio.sleep(0)  # log listeners are called soon, not at once
    finally:
        await conn.close()
    return seen


def _pg8000(port: int, mode: str, case: Case) -> Seen:
    seen = Seen()
    conn = pg8000.native.Connection(
        "agent", host="127.0.0.1", port=port, database="scratchpad",
        application_name=app_name("pg8000", mode, case))
    try:
        for sql in case.statements:
            try:
                if mode == "simple":
                    rows = conn.run(sql)
                elif mode == "extended":
                    rows = conn.execute_unnamed(sql).rows
                else:
                    rows = conn.prepare(sql).run()
            except pg8000.native.DatabaseError as e:
                f = e.args[0]
                seen.errors.append((f["C"], f["M"], f.get("H")))
            else:
                seen.rows.extend(_text(r[0]) for r in rows or ())
            seen.notices.extend((n[b"M"].decode(), n[b"H"].decode() if b"H" in n else None)
                                for n in conn.notices)
            conn.notices.clear()
    finally:
        conn.close()
    return seen


async def run_pg8000(relay: Relay, mode: str, case: Case) -> Seen:
    return await in_thread(_pg8000, relay.port, mode, case)


async def run_sqlalchemy(relay: Relay, mode: str, case: Case, *, dbapi: str) -> Seen:
    seen = Seen()
    url = relay.dsn(app_name(f"sqlalchemy+{dbapi}", mode, case)).replace(
        "postgresql://", f"postgresql+{dbapi}://", 1)
    if dbapi == "asyncpg":  # asyncpg takes neither in the URL
        url = url.split("?")[0]
        args: dict[str, Any] = {"ssl": False, "server_settings": {
            "application_name": app_name(f"sqlalchemy+{dbapi}", mode, case)}}
    else:
        args = {}
    engine = create_async_engine(url, connect_args=args, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            raw: Any = (await conn.get_raw_connection()).driver_connection
            if dbapi == "asyncpg":
                raw.add_log_listener(lambda _c, m: seen.notices.append((m.message, m.hint)))
            else:
                raw.add_notice_handler(
                    lambda d: seen.notices.append((d.message_primary, d.message_hint)))
            for sql in case.statements:
                try:
                    result = await conn.execute(sa.text(sql))
                except sa_exc.DBAPIError as e:
                    orig: Any = e.orig
                    if dbapi == "asyncpg":
                        pg = orig.__cause__
                        seen.errors.append((pg.sqlstate, pg.message, pg.hint))
                    else:
                        d = orig.diag
                        seen.errors.append((d.sqlstate, d.message_primary, d.message_hint))
                    continue
                if result.returns_rows:
                    seen.rows.extend(_text(r[0]) for r in result.fetchall())
                await asyncio.sleep(0)
    finally:
        await engine.dispose()
    return seen


async def run_sqlalchemy_psycopg(relay: Relay, mode: str, case: Case) -> Seen:
    return await run_sqlalchemy(relay, mode, case, dbapi="psycopg")


async def run_sqlalchemy_asyncpg(relay: Relay, mode: str, case: Case) -> Seen:
    return await run_sqlalchemy(relay, mode, case, dbapi="asyncpg")


CLIENTS: list[tuple[str, str, Run]] = [
    ("psycopg", "simple", run_psycopg),
    ("psycopg", "extended", run_psycopg),
    ("psycopg", "prepared", run_psycopg),
    ("asyncpg", "prepared", run_asyncpg),
    ("pg8000", "simple", run_pg8000),
    ("pg8000", "extended", run_pg8000),
    ("pg8000", "prepared", run_pg8000),
    ("sqlalchemy+psycopg", "simple", run_sqlalchemy_psycopg),
    ("sqlalchemy+asyncpg", "prepared", run_sqlalchemy_asyncpg),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
@pytest.mark.parametrize(("driver", "mode", "run"), CLIENTS,
                         ids=[f"{d}-{m}" for d, m, _ in CLIENTS])
async def test_client_matrix(relay: Relay, driver: str, mode: str, run: Run,
                             case: Case) -> None:
    seen = await run(relay, mode, case)
    check(relay, driver, mode, case, seen)
