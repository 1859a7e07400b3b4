"""SQLAlchemy 2 against the wire server: ``postgresql+psycopg`` and ``postgresql+asyncpg``.

Reflection reads the sidecar's real catalogs, so columns, primary keys and the
comments carrying the resources' descriptions come back as they were declared.
SQLAlchemy's dialects also run their own start-up queries (the psycopg one
fetches the hstore type inside a savepoint), which must pass too.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from .fix_clients import (
    ITEM_7,
    JOIN_ROWS,
    JOIN_SQL,
    MISSING_KEY_HINT,
    MISSING_KEY_STATE,
    STAGED_SQL,
    TABLES,
    TASK_COMMENTS,
    TASK_ROWS,
    TASKS_COMMENT,
    WEB_ROWS,
    WEB_SQL,
    fired_notice,
    in_thread,
    staged_notice,
    staged_rows,
)


class Base(DeclarativeBase):
    pass


class Task(Base):
    """The demo ``tasks`` resource, mapped by hand as an application would."""

    __tablename__ = "tasks"
    id: Mapped[int] = mapped_column(sa.BigInteger, primary_key=True)
    title: Mapped[str]
    due: Mapped[dt.date | None]
    status: Mapped[str | None]


WEB_COMMENT = ("Web search over a small offline corpus. Verbs: select. "
               "Required keys: query (WHERE query = …). Volatility: volatile.")
TASK_COLUMN_SHAPES = [("id", sa.BIGINT, False), ("title", sa.TEXT, False),
                      ("due", sa.DATE, True), ("status", sa.TEXT, True)]


def _url(dsn: str, driver: str) -> str:
    return dsn.replace("postgresql://", f"postgresql+{driver}://", 1)


def _check_reflection(conn: sa.Connection) -> None:
    """Runs on a sync connection: the psycopg one, or the asyncpg one via run_sync."""
    insp = sa.inspect(conn)
    assert sorted(insp.get_table_names()) == TABLES
    columns = insp.get_columns("tasks")
    assert [(c["name"], type(c["type"]), c["nullable"]) for c in columns] == TASK_COLUMN_SHAPES
    assert {c["name"]: c["comment"] for c in columns} == TASK_COMMENTS
    pk = insp.get_pk_constraint("tasks")
    assert (pk["constrained_columns"], pk["name"]) == (["id"], "tasks_pkey")
    assert insp.get_table_comment("tasks") == {"text": TASKS_COMMENT}
    assert insp.get_pk_constraint("web")["constrained_columns"] == []
    md = sa.MetaData()
    md.reflect(conn)
    assert sorted(md.tables) == TABLES
    items = md.tables["items"]
    assert [c.name for c in items.primary_key.columns] == ["id"]
    assert md.tables["web"].comment == WEB_COMMENT
    assert md.tables["tasks"].c.status.comment == TASK_COMMENTS["status"]


def _items() -> sa.Table:
    return sa.Table("items", sa.MetaData(), sa.Column("id", sa.BigInteger, primary_key=True),
                    sa.Column("name", sa.Text), sa.Column("price", sa.Float))


def _emails() -> sa.Table:
    return sa.Table("emails", sa.MetaData(), sa.Column("id", sa.BigInteger),
                    sa.Column("to_addr", sa.Text), sa.Column("subject", sa.Text))


def _core_select() -> sa.Select[Any]:
    items = _items()
    return sa.select(items.c.id, items.c.name, items.c.price).where(
        items.c.id == sa.bindparam("item_id"))


def _check_reads(conn: sa.Connection) -> None:
    assert conn.execute(_core_select(), {"item_id": 7}).all() == [ITEM_7]
    assert conn.execute(sa.text(WEB_SQL)).all() == WEB_ROWS
    web = sa.text("SELECT title, rank FROM web WHERE query = :q ORDER BY rank")
    assert conn.execute(web, {"q": "postgresql"}).all() == WEB_ROWS
    assert conn.execute(sa.text(JOIN_SQL)).all() == JOIN_ROWS


# -- postgresql+psycopg ---------------------------------------------------------------


@pytest.fixture
async def engine(dsn):
    eng = sa.create_engine(_url(dsn, "psycopg"))
    yield eng
    await in_thread(eng.dispose)


async def test_psycopg_reflection(engine):
    def run() -> None:
        with engine.connect() as conn:
            _check_reflection(conn)

    await in_thread(run)


async def test_psycopg_core_and_orm_reads(engine):
    def run() -> None:
        with engine.connect() as conn:
            _check_reads(conn)
        with Session(engine) as session:
            tasks = session.scalars(sa.select(Task).order_by(Task.id)).all()
            assert [(t.id, t.title, t.status) for t in tasks] == TASK_ROWS
            assert all(isinstance(t.due, dt.date) for t in tasks)
            assert session.get(Task, 2).title == "Book the team offsite"  # type: ignore[union-attr]
            done = session.scalars(sa.select(Task).where(Task.status == "done")).one()
            assert done.id == 3

    await in_thread(run)


async def test_psycopg_staged_write_commit_and_error(engine):
    def run() -> None:
        emails = _emails()
        with engine.connect() as conn:
            notices: list[str] = []
            conn.connection.driver_connection.add_notice_handler(  # type: ignore[union-attr]
                lambda d: notices.append(d.message_primary))
            with conn.begin():
                result = conn.execute(sa.insert(emails).values(
                    to_addr="ed@example.org", subject="core"
                ).execution_options(preserve_rowcount=True))  # else INSERT's is not kept
                assert result.rowcount == 1
                assert conn.execute(sa.text(STAGED_SQL)).all() == staged_rows(1)
                assert notices == [staged_notice(1)]
            assert notices == [staged_notice(1), fired_notice(1)]
            assert conn.execute(sa.text(STAGED_SQL)).all() == []
            conn.rollback()

            with pytest.raises(sa_exc.DBAPIError) as info:
                conn.execute(sa.text("SELECT * FROM web"))
            orig: Any = info.value.orig
            assert (orig.sqlstate, orig.diag.message_hint) == (MISSING_KEY_STATE,
                                                               MISSING_KEY_HINT)
            conn.rollback()
            assert conn.execute(_core_select(), {"item_id": 7}).all() == [ITEM_7]
            conn.rollback()

        # In autocommit an INSERT fires at once, and RETURNING shows the created row.
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            row = conn.execute(sa.insert(emails).values(to_addr="ed@example.org", subject="now")
                               .returning(emails.c.id, emails.c.subject)).one()
            assert isinstance(row.id, int) and row.id > 0 and row.subject == "now"

    await in_thread(run)


async def test_psycopg_nested_transaction_is_a_savepoint(engine):
    """begin_nested() is SAVEPOINT; rolling it back discards only what it staged."""

    def run() -> None:
        emails = _emails()
        with engine.connect() as conn:
            conn.execute(sa.insert(emails).values(to_addr="fi@example.org", subject="kept"))
            nested = conn.begin_nested()
            conn.execute(sa.insert(emails).values(to_addr="fi@example.org", subject="dropped"))
            assert len(conn.execute(sa.text(STAGED_SQL)).all()) == 2
            nested.rollback()
            assert conn.execute(sa.text(STAGED_SQL)).all() == staged_rows(1)
            conn.rollback()

    await in_thread(run)


# -- postgresql+asyncpg ----------------------------------------------------------------


@pytest.fixture
async def async_engine(dsn):
    try:
        from sqlalchemy.ext.asyncio import create_async_engine
    except ImportError as exc:  # greenlet: sqlalchemy[asyncio]
        pytest.fail(f"SQLAlchemy's asyncio extension cannot load: {exc}")
    eng = create_async_engine(_url(dsn, "asyncpg"))
    yield eng
    await eng.dispose()


async def test_asyncpg_reflection_and_reads(async_engine):
    from sqlalchemy.ext.asyncio import AsyncSession

    async with async_engine.connect() as conn:
        await conn.run_sync(_check_reflection)
        await conn.run_sync(_check_reads)
    async with AsyncSession(async_engine) as session:
        tasks = (await session.scalars(sa.select(Task).order_by(Task.id))).all()
        assert [(t.id, t.title, t.status) for t in tasks] == TASK_ROWS
        task = await session.get(Task, 3)
        assert task is not None and task.status == "done"


async def test_asyncpg_staged_write_commit_and_error(async_engine):
    emails = _emails()
    notices: list[str] = []
    async with async_engine.connect() as conn:
        raw = await conn.get_raw_connection()
        raw.driver_connection.add_log_listener(  # type: ignore[union-attr]
            lambda _conn, msg: notices.append(msg.message))
        async with conn.begin():
            result = await conn.execute(sa.insert(emails).values(
                to_addr="gu@example.org", subject="async"
            ).execution_options(preserve_rowcount=True))
            assert result.rowcount == 1
            assert (await conn.execute(sa.text(STAGED_SQL))).all() == staged_rows(1)
        assert notices == [staged_notice(1), fired_notice(1)]

        with pytest.raises(sa_exc.DBAPIError) as info:
            await conn.execute(sa.text("SELECT * FROM web"))
        orig: Any = info.value.orig
        assert orig.sqlstate == MISSING_KEY_STATE
        assert orig.__cause__.hint == MISSING_KEY_HINT  # the asyncpg exception
        await conn.rollback()
        assert (await conn.execute(_core_select(), {"item_id": 7})).all() == [ITEM_7]
        await conn.rollback()

    autocommit = async_engine.execution_options(isolation_level="AUTOCOMMIT")
    async with autocommit.connect() as conn:
        row = (await conn.execute(sa.insert(emails).values(to_addr="gu@example.org",
                                                           subject="now")
                                  .returning(emails.c.id))).one()
        assert isinstance(row.id, int) and row.id > 0
