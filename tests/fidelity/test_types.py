"""Type fidelity: every mapped type, read through the server, equals Postgres byte for byte.

The oracle is a real table in the sidecar filled by typed literals on a direct
connection. Both sides get the same SETs (through the server, they are forwarded
to the sidecar per statement); then the same SELECT is read in simple-protocol
text, extended text and extended binary, and every field description and every
value must be identical.
"""

from __future__ import annotations

import asyncio
import math
from decimal import Decimal
from typing import Any

import asyncpg
import psycopg
import pytest
from psycopg import pq

from .types_resource import COLUMNS, NROWS, SQL_TYPES, VALUES

COLS = ", ".join(COLUMNS)
SERVER_SQL = f"SELECT {COLS} FROM typed ORDER BY id"
ORACLE_SQL = f"SELECT {COLS} FROM oracle_typed ORDER BY id"

# Each: the SET statements (sent as written, on both connections).
SETTINGS: dict[str, list[str]] = {
    "defaults": [],
    "sql-dmy-kolkata-efd0": ["SET DateStyle = 'SQL, DMY'", "SET TIME ZONE 'Asia/Kolkata'",
                             "SET extra_float_digits = 0"],
    "german-stjohns-efd3": ["SET DateStyle TO German", "SET TimeZone = 'America/St_Johns'",
                            "SET extra_float_digits TO 3"],
    "postgres-chatham-efd-15": ["SET datestyle = 'Postgres, MDY'",
                                "SET timezone TO 'Pacific/Chatham'",
                                "SET extra_float_digits = -15",
                                "SET IntervalStyle = sql_standard"],
    "iso-ymd-efd1-escape": ["SET DateStyle = 'ISO, YMD'", "SET TimeZone = '-05:45'",
                            "SET extra_float_digits = 1", "SET IntervalStyle = 'iso_8601'",
                            "SET bytea_output = 'escape'"],
    "sql-mdy-stjohns-verbose": ["SET DateStyle = SQL, MDY", "SET TimeZone = 'America/St_Johns'",
                                "SET extra_float_digits = 2",
                                "SET IntervalStyle = postgres_verbose"],
}
MODES = ("simple", "text", "binary")

Fields = list[tuple[bytes, int, int, int, int]]
Rows = list[tuple[bytes | None, ...]]


def _check(res: pq.PGresult, what: str) -> pq.PGresult:
    if res.status not in (pq.ExecStatus.TUPLES_OK, pq.ExecStatus.COMMAND_OK):
        raise AssertionError(f"{what}: {res.status.name}: "
                             f"{(res.error_message or b'').decode(errors='replace')}")
    return res


def fetch(pgconn: pq.abc.PGconn, sql: str, mode: str) -> tuple[Fields, Rows]:
    """Raw field descriptions and raw value bytes, in the mode asked for."""
    if mode == "simple":
        res = pgconn.exec_(sql.encode())
    else:
        res = pgconn.exec_params(sql.encode(), [], result_format=1 if mode == "binary" else 0)
    _check(res, sql[:60])
    fields = [(res.fname(i) or b"", res.ftype(i), res.fmod(i), res.fsize(i), res.fformat(i))
              for i in range(res.nfields)]
    rows = [tuple(res.get_value(r, c) for c in range(res.nfields)) for r in range(res.ntuples)]
    return fields, rows


def apply(pgconn: pq.abc.PGconn, statements: list[str]) -> None:
    for sql in statements:
        _check(pgconn.exec_(sql.encode()), sql)


def _show(b: bytes | None, limit: int = 120) -> str:
    if b is None:
        return "NULL"
    return repr(b if len(b) <= limit else b[:limit] + b"...")


def compare(server: tuple[Fields, Rows], oracle: tuple[Fields, Rows]) -> None:
    (sf, sr), (of, orows) = server, oracle
    assert sf == of, "field descriptions differ"
    assert len(sr) == len(orows) == NROWS
    diffs = []
    for r, (a, b) in enumerate(zip(sr, orows, strict=True)):
        for c, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                diffs.append(f"row {r + 1} {COLUMNS[c]}: server {_show(x)} != postgres {_show(y)}")
    assert not diffs, "\n".join(diffs[:40])


def _read_both(dsn: str, direct: dict[str, Any], sets: list[str], modes: tuple[str, ...]
               ) -> dict[str, tuple[Any, Any]]:
    with psycopg.connect(dsn, autocommit=True) as srv, \
            psycopg.connect(**direct, autocommit=True) as ora:
        apply(srv.pgconn, sets)
        apply(ora.pgconn, sets)
        # The oracle's literals are read after the SETs, as the resolver's values are.
        from .types_resource import oracle_sql

        apply(ora.pgconn, oracle_sql("oracle_typed"))
        out = {}
        for mode in modes:
            out[mode] = (fetch(srv.pgconn, SERVER_SQL, mode), fetch(ora.pgconn, ORACLE_SQL, mode))
        # The settings themselves read back the same.
        for name in ("DateStyle", "TimeZone", "extra_float_digits", "IntervalStyle",
                     "bytea_output"):
            out[f"show {name}"] = (fetch(srv.pgconn, f"SHOW {name}", "text")[1],
                                   fetch(ora.pgconn, f"SHOW {name}", "text")[1])
        return out


@pytest.mark.parametrize("setting", list(SETTINGS))
async def test_every_type_byte_for_byte(fidelity_dsn, direct_kwargs, setting):
    out = await asyncio.to_thread(_read_both, fidelity_dsn, direct_kwargs, SETTINGS[setting],
                                  MODES)
    for key, (server, oracle) in out.items():
        if key.startswith("show"):
            assert server == oracle, key
    for mode in MODES:
        server, oracle = out[mode]
        assert all(f[4] == (1 if mode == "binary" else 0) for f in server[0]), mode
        try:
            compare(server, oracle)
        except AssertionError as exc:
            raise AssertionError(f"[{setting}, {mode}] {exc}") from None


def _types(dsn: str, direct: dict[str, Any]) -> list[tuple[str, str]]:
    with psycopg.connect(dsn, autocommit=True) as srv, \
            psycopg.connect(**direct, autocommit=True) as ora:
        (fields, _) = fetch(srv.pgconn, SERVER_SQL + " LIMIT 0", "text")
        names = []
        for name, oid, mod, _, _ in fields:
            row = ora.execute("SELECT format_type(%s, %s)", (oid, mod)).fetchone()
            names.append((name.decode(), row[0]))
        return names


async def test_the_mapping_gives_the_expected_types(fidelity_dsn, direct_kwargs):
    got = await asyncio.to_thread(_types, fidelity_dsn, direct_kwargs)
    assert got == list(SQL_TYPES.items())


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, Decimal) and isinstance(b, Decimal) and a.is_nan():
        return b.is_nan()
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a)
                                                     == math.copysign(1, b))
    return type(a) is type(b) and a == b


async def test_asyncpg_decodes_the_same_values(fidelity_dsn, direct_kwargs):
    """A binary-protocol driver decodes the server's rows into the same Python values."""
    from .types_resource import oracle_sql

    srv = await asyncpg.connect(fidelity_dsn)
    d = direct_kwargs
    ora = await asyncpg.connect(host=d["host"], port=d["port"], user=d["user"],
                                password=d["password"], database=d["dbname"])
    try:
        for conn in (srv, ora):
            await conn.execute("SET TimeZone = 'America/St_Johns'")
        for sql in oracle_sql("oracle_typed"):
            await ora.execute(sql)
        got = await srv.fetch(SERVER_SQL)
        want = await ora.fetch(ORACLE_SQL)
        assert len(got) == len(want) == NROWS
        for r, (a, b) in enumerate(zip(got, want, strict=True)):
            for c in COLUMNS:
                assert _same(a[c], b[c]), (r + 1, c, a[c], b[c])
        # And they are the values the resolver gave, where Python and Postgres agree.
        for col in ("i8", "f8", "bo", "tx", "d", "n", "u", "by", "tm"):
            for k, (value, _) in enumerate(VALUES[col]):
                if col == "n" and not value.is_finite():
                    continue  # asyncpg decodes numeric NaN/Infinity by its own rules
                assert _same(got[k][col], value) or got[k][col] == value, (col, k)
    finally:
        await srv.close()
        await ora.close()


def _params_both(dsn: str, direct: dict[str, Any], sets: list[str]) -> list[str]:
    """Every value as a parameter (binary, and text as the session spells it)."""
    problems = []
    with psycopg.connect(dsn, autocommit=True) as srv, \
            psycopg.connect(**direct, autocommit=True) as ora:
        apply(srv.pgconn, sets)
        apply(ora.pgconn, sets)
        for col, values in VALUES.items():
            typ = SQL_TYPES[col]
            for k, (_, literal) in enumerate(values):
                one = ora.pgconn.exec_params(f"SELECT {literal}".encode(), [], result_format=1)
                text = ora.pgconn.exec_params(f"SELECT {literal}".encode(), [], result_format=0)
                oid = one.ftype(0)
                for pfmt, value in ((1, one.get_value(0, 0)), (0, text.get_value(0, 0))):
                    sql = f"SELECT $1::{typ} AS v, $1::{typ} IS NULL AS n".encode()
                    for rfmt in (0, 1):
                        got = [c.pgconn.exec_params(sql, [value], [oid], [pfmt],
                                                    result_format=rfmt) for c in (srv, ora)]
                        a, b = ([(r.status, r.get_value(0, 0) if r.ntuples else r.error_message)
                                 for r in got])
                        if a != b:
                            problems.append(f"{col}[{k}] param format {pfmt} result format "
                                            f"{rfmt}: server {a!r:.120} != postgres {b!r:.120}")
    return problems


@pytest.mark.parametrize("setting", ["defaults", "german-stjohns-efd3", "postgres-chatham-efd-15"])
async def test_parameters_are_relayed_byte_for_byte(fidelity_dsn, direct_kwargs, setting):
    problems = await asyncio.to_thread(_params_both, fidelity_dsn, direct_kwargs,
                                       SETTINGS[setting])
    assert not problems, "\n".join(problems[:40])


async def test_mixed_result_formats_per_column(fidelity_server, sidecar):
    """One Bind asking text for some columns and binary for others (the raw codec)."""
    from glove_scratchpad.wire import Bind, DataRow, Execute, Parse, Query, Sync

    from .rawclient import RawClient
    from .types_resource import oracle_sql

    formats = tuple(i % 2 for i in range(len(COLUMNS)))
    srv = await RawClient.open("127.0.0.1", fidelity_server.port)
    ora = await RawClient.open(sidecar.host, sidecar.port)
    try:
        await srv.startup()
        await ora.startup(user=sidecar.user, database="test_fidelity")
        for sql in ["SET TimeZone = 'Asia/Kolkata'", "SET DateStyle = 'SQL, DMY'"]:
            for c in (srv, ora):
                c.send(Query(sql))
                await c.until_ready()
        ora.send(Query(";\n".join(oracle_sql("oracle_typed"))))
        await ora.until_ready()
        rows = []
        for c, sql in ((srv, SERVER_SQL), (ora, ORACLE_SQL)):
            c.send(Parse("", sql), Bind("", "", (), (), formats), Execute(), Sync())
            rows.append([m.values for m in await c.until_ready() if isinstance(m, DataRow)])
        assert len(rows[0]) == NROWS
        assert rows[0] == rows[1]
    finally:
        await srv.close()
        await ora.close()


def _read_with_options(dsn: str, direct: dict[str, Any], options: str) -> list[Any]:
    from .types_resource import oracle_sql

    with psycopg.connect(dsn, autocommit=True, options=options) as srv, \
            psycopg.connect(**direct, autocommit=True, options=options) as ora:
        apply(ora.pgconn, oracle_sql("oracle_typed"))
        out = []
        for mode in ("simple", "binary"):
            out.append((fetch(srv.pgconn, SERVER_SQL, mode), fetch(ora.pgconn, ORACLE_SQL, mode)))
        out.append(([srv.pgconn.parameter_status(n) for n in (b"DateStyle", b"TimeZone")],
                    [ora.pgconn.parameter_status(n) for n in (b"DateStyle", b"TimeZone")]))
        return out


async def test_settings_given_at_startup(fidelity_dsn, direct_kwargs):
    """Start-up options are applied as SETs: the same bytes as Postgres given them."""
    options = ("-c DateStyle=German -c TimeZone=America/St_Johns -c extra_float_digits=0 "
               "-c IntervalStyle=sql_standard")
    out = await asyncio.to_thread(_read_with_options, fidelity_dsn, direct_kwargs, options)
    for server, oracle in out[:2]:
        compare(server, oracle)
    assert out[2][0] == out[2][1]  # and reported so in ParameterStatus
