"""Layer 2 alone: the attack corpus, with the gate switched off, still fails in the sidecar."""

from __future__ import annotations

import pytest

from glove_scratchpad import errors
from glove_scratchpad.resources import define_resource
from glove_scratchpad.server.engine import sidecar

from .corpus import ATTACKS


def _resources():
    def shape(name):
        return define_resource(name, columns=[("number", "bigint"), ("title", "text"),
                                              ("query", "text"), ("body", "text")],
                               volatility="volatile", select=lambda b: [],
                               insert=lambda rows: None)
    return [shape("github_pr"), shape("web"), shape("notion_page")]


@pytest.fixture(scope="module")
async def unguarded_session(sidecar):
    from glove_scratchpad.server import Database

    db = await Database.create(_resources(), writes=True, sidecar=sidecar,
                               database="test_layer2")
    session = db.session()
    # The sidecar's own statement timeout bounds pg_sleep and friends here.
    await session.execute("SET statement_timeout = '2s'")
    yield session
    await db.close()


STATE = ("SELECT current_user, session_user, current_setting('work_mem'), "
         "current_setting('search_path'), current_setting('standard_conforming_strings'), "
         "current_setting('default_transaction_read_only'), current_setting('row_security'), "
         "current_setting('client_encoding'), current_setting('statement_timeout')")


async def _state(session):
    result = await sidecar.unguarded(session.statement(), STATE)
    return [row.values for row in result.data_rows]


async def test_every_attack_fails_or_is_contained_without_the_gate(unguarded_session):
    """Each attack either errors in the sidecar, or runs as the unprivileged role in the
    transaction a read of its kind gets (the implicit read-only one, or one rolled back
    when it calls set_config), leaving the connection exactly as it was."""
    session = unguarded_session
    baseline = await _state(session)
    role = session.services.catalog.agent_user.encode()
    assert baseline[0][:2] == (role, role) and role.startswith(b"glove_agent_")
    errored = contained = 0
    escaped = []
    for sql, _ in ATTACKS:
        try:
            await sidecar.unguarded(session.statement(), sql)
        except errors.SqlError:
            errored += 1
            continue
        if await _state(session) == baseline:
            contained += 1
        else:
            escaped.append(sql)
    assert escaped == []
    assert errored + contained == len(ATTACKS) >= 100
    assert errored > 3 * contained  # most are refused outright by privileges
    # PREPARE left nothing behind on the pooled connection.
    with pytest.raises(errors.SqlError) as info:
        await sidecar.unguarded(session.statement(), "EXECUTE p")
    assert info.value.sqlstate == "26000"


async def test_a_statement_that_is_not_a_plain_query_retires_its_connection(
        unguarded_session):
    """Statements stay prepared on pooled connections, so DEALLOCATE ALL no longer ends
    each pipeline; a PREPARE in a read-write transaction would outlive its ROLLBACK. Any
    step whose command tag is not a plain query's retires the connection that ran it."""
    session = unguarded_session
    pool = session.view.pool
    for sql in ("SET work_mem = '64MB'", "LISTEN somewhere", "SHOW work_mem"):
        await sidecar.unguarded(session.statement(), "SELECT 1")
        [before] = pool._idle
        await sidecar.unguarded(session.statement(), sql)
        assert before not in pool._all and before not in pool._idle, sql
    await sidecar.unguarded(session.statement(), "SELECT 1")
    [kept] = pool._idle
    await sidecar.unguarded(session.statement(), "SELECT 2")
    assert pool._idle == [kept]  # a plain query keeps its connection
