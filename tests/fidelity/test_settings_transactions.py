"""Settings under transactions, against Postgres itself: SET lasts until a ROLLBACK
undoes it, SET LOCAL until its transaction ends, and ``set_config(…, false)`` and
``(…, true)`` are SET and SET LOCAL. Each script runs, statement by statement, on the
server and on the sidecar (the oracle); after each one, the outcome, what SHOW says
and what the client was told in ParameterStatus must be the same.

One difference is allowed: in an aborted transaction, Postgres has already undone
its SETs and reported so; the server undoes them, and reports, at the ROLLBACK (or
ROLLBACK TO) that ends it. No statement can read a setting in between.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

SCRIPTS = {
    "set local ends with its transaction": [
        "BEGIN", "SET LOCAL TimeZone = 'Asia/Tokyo'", "COMMIT"],
    "a rollback undoes set": ["BEGIN", "SET TimeZone = 'Europe/Paris'", "ROLLBACK"],
    "a commit keeps set": ["BEGIN", "SET TimeZone = 'Europe/Paris'", "COMMIT"],
    "a failed transaction's commit undoes set": [
        "BEGIN", "SET TimeZone = 'Europe/Paris'", "SELECT 1/0", "COMMIT"],
    "set local outside a transaction changes nothing": [
        "SET LOCAL TimeZone = 'Asia/Tokyo'", "SELECT 1"],
    "set after set local is kept": [
        "BEGIN", "SET LOCAL TimeZone = 'Europe/Paris'", "SET TimeZone = 'Asia/Tokyo'",
        "COMMIT"],
    "set local after set is dropped, the set kept": [
        "BEGIN", "SET TimeZone = 'Asia/Tokyo'", "SET LOCAL TimeZone = 'Europe/Paris'",
        "COMMIT"],
    "rollback to a savepoint undoes what came after it": [
        "BEGIN", "SET TimeZone = 'UTC'", "SAVEPOINT a", "SET TimeZone = 'Asia/Tokyo'",
        "SET LOCAL DateStyle = 'German'", "ROLLBACK TO a", "SET TimeZone = 'Europe/Paris'",
        "RELEASE a", "COMMIT"],
    "an error after a savepoint, rolled back to it": [
        "BEGIN", "SET TimeZone = 'UTC'", "SAVEPOINT a", "SET TimeZone = 'Asia/Tokyo'",
        "SELECT 1/0", "ROLLBACK TO a", "COMMIT"],
    "a released savepoint's sets go with the transaction": [
        "BEGIN", "SAVEPOINT a", "SET TimeZone = 'Asia/Tokyo'", "RELEASE a", "ROLLBACK"],
    "reset is undone by a rollback": [
        "SET TimeZone = 'Asia/Tokyo'", "BEGIN", "RESET TimeZone", "ROLLBACK",
        "BEGIN", "RESET ALL", "COMMIT"],
    "discard all resets and reports, outside a transaction only": [
        "SET TimeZone = 'Asia/Tokyo'", "DISCARD PLANS", "DISCARD ALL",
        "SET TimeZone = 'Europe/Paris'", "BEGIN", "DISCARD ALL", "ROLLBACK"],
    "set local to default": [
        "SET TimeZone = 'Asia/Tokyo'", "BEGIN", "SET LOCAL TimeZone TO DEFAULT", "COMMIT"],
    "set_config false is set": [
        "SELECT set_config('TimeZone', 'America/New_York', false)",
        "BEGIN", "SELECT set_config('DateStyle', 'SQL, DMY', false)", "ROLLBACK"],
    "set_config true is set local": [
        "SELECT set_config('TimeZone', 'Asia/Tokyo', true)",
        "BEGIN", "SELECT set_config('TimeZone', 'Asia/Tokyo', true)", "COMMIT",
        "BEGIN", "SELECT set_config(is_local => 'on', new_value => 'Europe/Paris', "
        "setting_name => 'TimeZone')", "COMMIT"],
}
WATCHED = ("TimeZone", "DateStyle")
# Transactions here are virtual: their isolation level is kept for SHOW alone.
ISOLATION = [
    "BEGIN ISOLATION LEVEL SERIALIZABLE", "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
    "COMMIT", "SET default_transaction_isolation = 'repeatable read'", "BEGIN",
    "SET transaction_isolation = 'serializable'", "ROLLBACK",
    "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE", "BEGIN",
    "ROLLBACK", "RESET default_transaction_isolation"]


async def _state(conn: psycopg.AsyncConnection[Any], watched: tuple[str, ...] = WATCHED
                 ) -> tuple[Any, ...]:
    """What SHOW says of the watched settings (in its own statement), and what the
    client was told of them in ParameterStatus."""
    if conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR:
        return ("(aborted)",)
    shown = [(await (await conn.execute(f"SHOW {name}")).fetchone())[0] for name in watched]
    return (*shown, *(conn.info.parameter_status(n) for n in watched))


async def _run(conn: psycopg.AsyncConnection[Any], script: list[str],
               watched: tuple[str, ...] = WATCHED) -> list[Any]:
    seen = []
    for sql in script:
        try:
            await conn.execute(sql)
            outcome = "ok"
        except psycopg.Error as exc:
            outcome = exc.sqlstate
        seen.append((sql, outcome, await _state(conn, watched)))
    return seen


@pytest.mark.parametrize("name", list(SCRIPTS))
async def test_settings_follow_their_transaction_as_in_postgres(name, fidelity_dsn,
                                                                  direct_kwargs):
    script = SCRIPTS[name]
    async with (await psycopg.AsyncConnection.connect(fidelity_dsn, autocommit=True) as ours,
                await psycopg.AsyncConnection.connect(**direct_kwargs, autocommit=True)
                as postgres):
        assert await _state(ours) == await _state(postgres)
        assert await _run(ours, script) == await _run(postgres, script)


async def test_the_isolation_level_shows_as_in_postgres(fidelity_dsn, direct_kwargs):
    watched = ("transaction_isolation", "default_transaction_isolation")
    async with (await psycopg.AsyncConnection.connect(fidelity_dsn, autocommit=True) as ours,
                await psycopg.AsyncConnection.connect(**direct_kwargs, autocommit=True)
                as postgres):
        assert await _run(ours, ISOLATION, watched) == await _run(postgres, ISOLATION, watched)


async def test_set_config_with_parameters_is_kept_as_set(fidelity_dsn):
    async with await psycopg.AsyncConnection.connect(fidelity_dsn, autocommit=True) as conn:
        await conn.execute("SELECT set_config(%s, %s, %s)", ["TimeZone", "Asia/Tokyo", False])
        assert conn.info.parameter_status("TimeZone") == "Asia/Tokyo"
        cur = await conn.execute("SELECT current_setting('TimeZone')")
        assert await cur.fetchone() == ("Asia/Tokyo",)


async def test_set_config_whose_scope_is_computed_is_refused_before_it_runs(fidelity_dsn):
    async with await psycopg.AsyncConnection.connect(fidelity_dsn, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.FeatureNotSupported) as info:
            await conn.execute("SELECT set_config('TimeZone', 'Asia/Tokyo', 1 = 0)")
        assert "set_config('TimeZone', …, false)" in (info.value.diag.message_hint or "")
        assert (await (await conn.execute("SHOW TimeZone")).fetchone())[0] != "Asia/Tokyo"
