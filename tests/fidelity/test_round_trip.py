"""Values that travel from Postgres into Python: INSERT … SELECT and WHERE pushdown.

The server decodes these itself (into the resolvers' arguments), so they must not
depend on the client's output settings: DateStyle, IntervalStyle,
extra_float_digits and bytea_output change how Postgres spells a value, never
the value a tool receives.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import math
from decimal import Decimal
from typing import Any

import psycopg
import pytest
from psycopg import pq
from pydantic import BaseModel

from .test_types import SETTINGS, apply
from .types_resource import COLUMNS, NROWS, RECEIVED, SQL_TYPES, VALUES, python_rows


def norm(v: Any) -> Any:
    """Comparable form: jsonb numbers are numerics (1e308 comes back as an integer)."""
    if isinstance(v, BaseModel):
        return norm(v.model_dump())
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    if isinstance(v, list):
        return [norm(x) for x in v]
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        return ("float", repr(v))
    if isinstance(v, Decimal) and v.is_nan():
        return "NaN"
    return v


def norm_json(v: Any) -> Any:
    if isinstance(v, BaseModel):
        return norm_json(v.model_dump())
    if isinstance(v, dict):
        return {k: norm_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [norm_json(x) for x in v]
    if isinstance(v, int | float) and not isinstance(v, bool):
        return Decimal(repr(v)) if isinstance(v, float) else Decimal(v)
    return v


JSON_COLUMNS = ("jm", "jl", "jd", "ja")


def expected_difference(col: str, value: Any, timezone: str) -> bool:
    """Values whose round trip cannot give back the same Python value.

    Year 1 in a zone west of Greenwich is 1 BC in Postgres' text, and 9999-12-31 in one
    east of it is year 10000: no datetime holds those. The server reads the values it
    hands to tools in binary (UTC), so they arrive all the same: nothing is skipped
    for them. A naive datetime goes in as local time of the session's zone and comes
    back aware: the same instant, another Python value.
    """
    return col == "ts" and isinstance(value, dt.datetime) and value.tzinfo is None


def _insert_round_trip(dsn: str, sets: list[str]) -> list[tuple[int, str]]:
    failures = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        apply(conn.pgconn, sets)
        for k in range(1, NROWS + 1):
            res = conn.pgconn.exec_(f"INSERT INTO sink SELECT * FROM typed WHERE id = {k}"
                                    .encode())
            if res.status != pq.ExecStatus.COMMAND_OK:
                failures.append((k, (res.error_message or b"").decode()))
    return failures


@pytest.mark.parametrize("setting", list(SETTINGS))
async def test_insert_gives_the_tool_the_same_values(fidelity_dsn, setting):
    sets = SETTINGS[setting]
    timezone = next((s.split("'")[1] for s in sets if "zone" in s.lower()), "UTC")
    RECEIVED["sink"].clear()
    failures = await asyncio.to_thread(_insert_round_trip, fidelity_dsn, sets)
    rows = {r.id: r for r in RECEIVED["sink"]}
    expected = {r["id"]: r for r in python_rows()}
    problems = []
    failed_ids = {k for k, _ in failures}
    for k, message in failures:
        row = expected[k]
        if not any(expected_difference(c, row.get(c), timezone) for c in COLUMNS):
            problems.append(f"row {k}: INSERT failed: {message}")
    for k, row in expected.items():
        if k in failed_ids:
            continue
        got = rows.get(k)
        if got is None:
            problems.append(f"row {k}: not received")
            continue
        for col in COLUMNS:
            want, have = row.get(col), getattr(got, col)
            if expected_difference(col, want, timezone):
                continue
            if col in JSON_COLUMNS:
                same = norm_json(have) == norm_json(want)
            else:
                same = norm(have) == norm(want) and type(have) is type(want)
            if not same:
                problems.append(f"row {k} {col}: tool got {have!r:.100} want {want!r:.100}")
    assert not problems, f"[{setting}]\n" + "\n".join(problems[:40])


def _forms(col: str, literal: str, direct: pq.abc.PGconn) -> dict[str, tuple[str, list]]:
    """Ways to write one value in a WHERE: (SQL, [(param bytes, oid, format)])."""
    res = direct.exec_params(f"SELECT {literal}".encode(), [], result_format=0)
    text, oid = res.get_value(0, 0), res.ftype(0)
    binary = direct.exec_params(f"SELECT {literal}".encode(), [], result_format=1).get_value(0, 0)
    forms: dict[str, tuple[str, list]] = {
        "subquery": (f"(SELECT {literal})", []),  # computed by Postgres, read back by us
        "text param": ("$1", [(text, 0, 0)]),  # as the client's settings spell it
        "binary param": ("$1", [(binary, oid, 1)]),
    }
    if literal.startswith("'") and literal.count("'::") == 1 and literal.endswith(
            literal.rsplit("::", 1)[1]):
        forms["untyped literal"] = (literal.rsplit("::", 1)[0], [])
    if col == "by":
        forms["untyped literal"] = ("'\\x" + binary.hex() + "'", [])
    return forms


def _pushdown(dsn: str, direct_kwargs: dict[str, Any], sets: list[str]) -> list[str]:
    problems = []
    with psycopg.connect(dsn, autocommit=True) as srv, \
            psycopg.connect(**direct_kwargs, autocommit=True) as ora:
        apply(srv.pgconn, sets)
        apply(ora.pgconn, sets)
        for col, values in VALUES.items():
            for k, (value, literal) in enumerate(values):
                exact = ora.pgconn.exec_params(f"SELECT {literal}".encode(), [],
                                               result_format=1).get_value(0, 0)
                for form, (sql, params) in _forms(col, literal, ora.pgconn).items():
                    # What Postgres makes of this spelling (a text parameter is as precise
                    # as the client's extra_float_digits made it).
                    ref = ora.pgconn.exec_params(
                        f"SELECT ({sql})::{SQL_TYPES[col]}".encode(), [p[0] for p in params],
                        [p[1] for p in params], [p[2] for p in params], result_format=0)
                    if ref.status != pq.ExecStatus.TUPLES_OK:
                        continue  # e.g. 1.79769313486232e+308: out of range for Postgres too
                    want = ref.get_value(0, 0)
                    ref_bin = ora.pgconn.exec_params(
                        f"SELECT ({sql})::{SQL_TYPES[col]}".encode(), [p[0] for p in params],
                        [p[1] for p in params], [p[2] for p in params], result_format=1)
                    RECEIVED["echo"].clear()
                    res = srv.pgconn.exec_params(
                        f"SELECT {col} FROM echo WHERE {col} = {sql}".encode(),
                        [p[0] for p in params], [p[1] for p in params],
                        [p[2] for p in params], result_format=0)
                    where = f"{col}[{k}] {form} {literal[:60]!r}"
                    if res.status != pq.ExecStatus.TUPLES_OK:
                        problems.append(f"{where}: {(res.error_message or b'').decode()}")
                        continue
                    if res.ntuples != 1:
                        got = RECEIVED["echo"][-1].get(col) if RECEIVED["echo"] else "no call"
                        problems.append(f"{where}: {res.ntuples} rows; the tool got {got!r:.80}")
                        continue
                    if res.get_value(0, 0) != want:
                        problems.append(f"{where}: read back {res.get_value(0, 0)!r:.80}")
                    have = RECEIVED["echo"][-1][col]
                    if ref_bin.get_value(0, 0) != exact:
                        continue  # the client sent a rounded value: the tool got that one
                    if isinstance(value, dt.datetime) and value.tzinfo is None:
                        continue  # naive: one instant in the session's zone (the row matched)
                    if col in JSON_COLUMNS:
                        same = norm_json(have) == norm_json(value)
                    else:
                        same = norm(have) == norm(value) and type(have) is type(value)
                    if not same:
                        problems.append(f"{where}: the tool got {have!r:.80}")
    return problems


@pytest.mark.parametrize("setting", list(SETTINGS))
async def test_pushed_down_values_reach_the_tool_exactly(fidelity_dsn, direct_kwargs, setting):
    problems = await asyncio.to_thread(_pushdown, fidelity_dsn, direct_kwargs, SETTINGS[setting])
    assert not problems, f"[{setting}]\n" + "\n".join(problems[:60])


def _returning(dsn: str, direct_kwargs: dict[str, Any], sets: list[str], mode: str
               ) -> tuple[Any, Any]:
    from .test_types import COLS, ORACLE_SQL, fetch
    from .types_resource import oracle_sql

    with psycopg.connect(dsn, autocommit=True) as srv, \
            psycopg.connect(**direct_kwargs, autocommit=True) as ora:
        apply(srv.pgconn, sets)
        apply(ora.pgconn, sets)
        apply(ora.pgconn, oracle_sql("oracle_typed"))
        server = fetch(srv.pgconn, f"INSERT INTO sink SELECT * FROM typed ORDER BY id "
                                   f"RETURNING {COLS}", mode)
        return server, fetch(ora.pgconn, ORACLE_SQL, mode)


@pytest.mark.parametrize("mode", ["simple", "binary"])
@pytest.mark.parametrize("setting", list(SETTINGS))
async def test_insert_returning_gives_back_the_same_bytes(fidelity_dsn, direct_kwargs, setting,
                                                          mode):
    """Through the tool and back: INSERT … RETURNING equals the oracle byte for byte."""
    from .test_types import compare

    RECEIVED["sink"].clear()
    server, oracle = await asyncio.to_thread(_returning, fidelity_dsn, direct_kwargs,
                                             SETTINGS[setting], mode)
    compare((server[0], server[1]), oracle)


async def test_calls_with_non_finite_arguments_are_audited(fidelity_dsn):
    """JSON has no NaN/Infinity: such an argument must not lose the audit records."""
    import asyncpg

    conn = await asyncpg.connect(fidelity_dsn)
    try:
        for value in ("NaN", "Infinity", "-Infinity", "1.5"):
            await conn.fetch(f"SELECT f8 FROM echo WHERE f8 = '{value}'")
        rows = await conn.fetch("SELECT arguments FROM scratchpad.calls "
                                "WHERE resource = 'echo' ORDER BY at")
        import json

        args = [json.loads(r[0]) for r in rows][-4:]
        assert [a["f8"] for a in args] == ["nan", "inf", "-inf", 1.5]
    finally:
        await conn.close()


@pytest.mark.parametrize("kind", ["nul in text", "lone surrogate", "nan in jsonb",
                                  "infinity in jsonb", "nul in jsonb", "int beyond bigint"])
async def test_unrepresentable_values_are_a_clean_error(fidelity_dsn, kind):
    """A resolver value Postgres cannot hold fails the statement with a SQLSTATE that
    says so (never an internal error), and the session goes on."""
    import asyncpg

    conn = await asyncpg.connect(fidelity_dsn)
    try:
        with pytest.raises(asyncpg.PostgresError) as info:
            await conn.fetch("SELECT * FROM odd WHERE kind = $1", kind)
        err = info.value
        assert err.sqlstate != "XX000", (err.sqlstate, str(err))
        assert err.sqlstate[:2] in ("22", "38"), (err.sqlstate, str(err))
        assert await conn.fetchval("SELECT 1") == 1
    finally:
        await conn.close()
