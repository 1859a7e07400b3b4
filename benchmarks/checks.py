"""Checks of what the benchmarks time: each timed statement's answer must be right.

A benchmark asks the statement it times once more (besides its timed loop) over the
same endpoint and protocol, and compares the answer with what the resource produced.
A mismatch raises ``WrongAnswer``: the benchmark fails (the report marks it FAIL
with the reason) instead of recording the time of a fast wrong answer.

- ``lookup``: the point lookup (``items``, or ``big`` and ``big_ttl``, which have its
  rows), by pgbench itself and by full rows;
- ``materialized``: a ``rows`` (or ``kept_rows``) answer's count and checksum (through
  the server, or of the COPY reference's table);
- ``calls`` and ``ttl_calls``: how many times a kept resource's resolver ran
  (``kept_stats``): a kept call is not called again until it goes;
- ``plan``: EXPLAIN rows (non-empty, naming every resource), e.g. ``explain_wire``;
- ``expect``: any other answer (resolver counts, idle clients' lookups).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import asyncpg

from . import pgwire
from .bench_resources import ITEMS, item_row, make_rows
from .env import Endpoint
from .pgbench import PgbenchResult, lookup_script, pgbench, write_script
from .results import Section, WrongAnswer

__all__ = ["WrongAnswer", "calls", "checked_pgbench", "expect", "explain_wire", "item_text",
           "lookup", "materialized", "passed", "plan", "rows_checksum", "ttl_calls"]

ITEM_COLUMNS = ["id", "name", "qty"]


def _show(value: Any, limit: int = 300) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def expect(what: str, got: Any, want: Any) -> None:
    """Raise ``WrongAnswer`` unless ``got == want``."""
    if got != want:
        raise WrongAnswer(f"{what}: expected {_show(want)}, got {_show(got)}")


def passed(section: Section, checked: Sequence[str]) -> None:
    """A PASS target, and a note of what was checked (a wrong answer raised before this)."""
    section.check(
        f"`{section.name}`: every timed statement's answer is right",
        f"{len(checked)} checked",
        True,
    )
    section.notes.append("Answers checked (`benchmarks/checks.py`): " + "; ".join(checked) + ".")


# -- the point lookup ------------------------------------------------------------------


def item_text(i: int) -> tuple[str, ...]:
    """The row ``items`` has for id ``i``, as text (how the wire sends it)."""
    row = item_row(i)
    return tuple(str(row[c]) for c in ITEM_COLUMNS)


def _sample_ids(low: int, high: int) -> list[int]:
    return sorted({low, high, (low + high) // 2, min(high, low + 41)})


async def _rows(ep: Endpoint, mode: str, sql: str, i: int) -> tuple[list[str], list[tuple]]:
    """``sql`` (``… = $1``, or ``:id`` in simple mode) for id ``i``, over ``mode``'s protocol."""
    if mode == "simple":  # pgbench substitutes the value into the text, as here
        answer = await pgwire.query_once(ep, sql.replace(":id", str(i)))
        return answer.columns, answer.rows
    # extended: unnamed statements (asyncpg without its cache); prepared: named ones.
    conn = await asyncpg.connect(
        host=ep.host, port=ep.port, user=ep.user, database=ep.database,
        statement_cache_size=100 if mode == "prepared" else 0,
    )
    try:
        stmt_sql = sql.replace(":id", "$1")
        if mode == "prepared":
            stmt = await conn.prepare(stmt_sql)
            records = await stmt.fetch(i)
        else:
            records = await conn.fetch(stmt_sql, i)
    finally:
        await conn.close()
    columns = list(records[0].keys()) if records else []
    return columns, [tuple(str(v) for v in r.values()) for r in records]


async def lookup(
    ep: Endpoint,
    mode: str,
    workdir: Path,
    *,
    clients: int = 1,
    low: int = 1,
    high: int = ITEMS,
    table: str = "items",
) -> str:
    """Check the point lookup of ``table`` (which has ``items``' rows: ``items``, ``big``,
    ``big_ttl``) on ``ep`` in pgbench mode ``mode``; returns what it checked.

    - pgbench, in the same mode with the same clients, runs the timed statement with
      ``\\gset`` and aborts unless the row's id and qty are those of the id looked up
      (pgbench cannot compare text), or when no row comes back;
    - the full row, the label included, of a few ids over the same protocol: a raw
      ``Query`` (simple), unnamed statements (extended), named prepared ones (prepared).
    """
    script = write_script(
        workdir, f"check_lookup_{table}_{low}_{high}", lookup_script(low, high, True, table)
    )
    await pgbench(ep, script, ["-t", "5"], clients=clients, threads=2, mode=mode)
    statement = lookup_script(low, high, table=table).splitlines()[-1].rstrip(";")
    for i in _sample_ids(low, high):
        columns, rows = await _rows(ep, mode, statement, i)
        what = f"{ep.name} -M {mode}: {statement} (id = {i})"
        expect(f"{what}, columns", columns, ITEM_COLUMNS)
        expect(what, rows, [item_text(i)])
    what = "lookup" if table == "items" else f"lookup of {table}"
    return f"{what} {ep.name} -M {mode}" + (f" c={clients}" if clients > 1 else "")


async def checked_pgbench(ep: Endpoint, script: Path, workdir: Path, length: list[str], *,
                          clients: int, table: str = "items") -> tuple[str, PgbenchResult]:
    """A timed pgbench run of the point lookup (``-M prepared -j 2``), right after
    ``lookup`` checked its answers with as many clients; what was checked, and the run."""
    checked = await lookup(ep, "prepared", workdir, clients=clients, table=table)
    result = await pgbench(ep, script, length, clients=clients, threads=2, mode="prepared")
    return checked, result


# -- materialization -------------------------------------------------------------------


def _pg_float(v: float) -> str:
    """float8 as Postgres prints it (shortest round trip; fine below 1e15)."""
    text = repr(float(v))
    return text[:-2] if text.endswith(".0") else text


def rows_checksum(rows: Iterable[dict]) -> str:
    """md5 of ``n|i|name|value`` lines in order: what ``CHECKSUM_SQL`` computes."""
    h = hashlib.md5(usedforsecurity=False)
    first = True
    for r in rows:
        line = f"{r['n']}|{r['i']}|{r['name']}|{_pg_float(r['value'])}"
        h.update((line if first else "\n" + line).encode())
        first = False
    return h.hexdigest()


CHECKSUM_SQL = (
    "SELECT count(*), md5(string_agg(concat_ws('|', n, i, name, value), E'\\n' ORDER BY i))"
    " FROM {table} WHERE n = {n}"
)


@functools.lru_cache(maxsize=1)
def _made(n: int) -> tuple[int, str]:
    """What the ``rows`` resource produces for ``n``: its count and checksum."""
    return n, rows_checksum(make_rows(n))


async def materialized(conn: asyncpg.Connection, table: str, n: int, what: str) -> None:
    """The rows of ``table`` for ``n``: their count and checksum are those of ``make_rows(n)``."""
    got = tuple(await conn.fetchrow(CHECKSUM_SQL.format(table=table, n=n)))
    expect(f"{what}: count and md5 of {table} WHERE n = {n}", got, _made(n))


# -- kept calls ------------------------------------------------------------------------


def calls(what: str, got: int, least: int, most: int) -> None:
    """A resolver's call count lies in [least, most]: more means a kept call was made
    again while it should have been read; fewer, that it was not made (or not again)."""
    if not least <= got <= most:
        want = str(least) if least == most else f"{least} to {most}"
        raise WrongAnswer(f"{what}: {got} resolver calls, expected {want}")


def ttl_calls(seconds: float, ttl: float) -> tuple[int, int]:
    """The calls a resource kept for ``ttl`` seconds may make over ``seconds`` of its
    statements, as (least, most): a call is made again only once the last one's ttl is
    over, so at most one per ttl begun (and one of slack); when the statements span
    over twice the ttl, the last ones came after the first call expired: at least two."""
    least = 2 if seconds > 2 * ttl else 1
    return least, int(seconds / ttl) + 2


# -- EXPLAIN ---------------------------------------------------------------------------


def plan(what: str, rows: Sequence[Sequence[Any]], names: Iterable[str]) -> None:
    """EXPLAIN's rows: at least one, naming every resource in ``names``."""
    if not rows:
        raise WrongAnswer(f"{what}: EXPLAIN returned no rows")
    text = "\n".join(str(v) for r in rows for v in r)
    missing = [n for n in names if n not in text]
    if missing:
        raise WrongAnswer(f"{what}: the plan does not name {missing}: {_show(text)}")


async def explain_wire(ep: Endpoint, statement: str, names: Iterable[str]) -> str:
    """``statement`` (an EXPLAIN, as pgbench ``-M simple`` sends it) in one ``Query``."""
    answer = await pgwire.query_once(ep, statement)
    plan(f"{ep.name}: {statement[:60]}…", answer.rows, names)
    return f"EXPLAIN {ep.name} (simple)"
