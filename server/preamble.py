"""The preamble: the text that primes a model, generated from the catalog.

Rules:
- It is the discipline (discover, invoke, compose, stage, preview, commit) and
  the tables, in one of two forms. The full form gives every table with its
  columns, keys, filters, verbs and volatility; the compact one gives each
  table in one line (name, verbs, required keys, a short description) and the
  one statement that reads everything needed to call a table
  (``scratchpad.resources``). With more than ``LIST_LIMIT`` tables the compact
  form lists groups (namespaces) with their counts, and the one statement that
  lists a group's tables.
- ``detail="auto"`` (the default) keeps the full form while it is at most
  ``FULL_LIMIT`` characters.
- It describes schema, never rows, so it is deterministic.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from glove_scratchpad.catalog import (
    column_line,
    resource_filters,
    resource_group,
    short_description,
)
from glove_scratchpad.resources import Resource

from .engine.database import Database

__all__ = ["DISCOVERY_SQL", "FULL_LIMIT", "GROUP_SQL", "LIST_LIMIT", "SEARCH_SQL", "Detail",
           "catalog_form", "preamble"]

Detail = Literal["auto", "full", "compact"]

FULL_LIMIT = 8_000  # characters, about 2,000 tokens: "auto" keeps the full form up to this
LIST_LIMIT = 50  # tables the compact form lists one line each; with more, it lists groups
GROUP_SAMPLES = 3  # table names a group's line shows, so that its subject is plain
DISCOVERY_SQL = "SELECT * FROM scratchpad.resources WHERE name = '{table}'"
GROUP_SQL = ("SELECT name, verbs, keys, description FROM scratchpad.resources "
             "WHERE namespace = '{group}' ORDER BY name")
SEARCH_SQL = "SELECT * FROM scratchpad.search('{words}')"

_HEAD = """\
Your capabilities are tables of one PostgreSQL database. Call `execute_sql` with one SQL \
statement per call (`params` binds `$1`, `$2`, …); `explain_sql` dry-runs one.

## How to work

"""

_DISCOVER_FULL = """\
1. **Discover**: the tables are below; `information_schema.columns` and \
`SELECT * FROM scratchpad.resources` describe them too.
"""

_DISCOVER_COMPACT = """\
1. **Discover**: the tables are listed below without their columns. Before you use one, \
read everything needed to call it (columns with types and descriptions, keys, filters, \
verbs, an example) in one statement: `{discovery}`. `\\d {table}` and \
`information_schema.columns` work too.
"""

_INVOKE = """\
2. **Invoke**: `SELECT … FROM t WHERE key = 'v'`. Required keys are the tool's \
arguments: give each with `=`, `IN (…)` (one call per value) or `= ANY(…)`, or the read \
fails before any call. Its filters take any comparison, `LIKE`, `BETWEEN` or `IS NULL` and \
reach the tool too: `SELECT * FROM events WHERE calendar = 'work' AND at >= '2026-01-01'`. \
`LIMIT` on a one-table read reaches the tool: `SELECT * FROM web WHERE query = 'x' LIMIT 3`.
3. **Compose**: a join feeds a key, calling the tool once per distinct value: \
`SELECT t.title, w.url FROM tasks t JOIN web w ON w.query = t.title` (LATERAL, correlated \
subqueries and CTEs work the same way). Aggregates, \
`INSERT INTO a (…) SELECT … FROM b`: one statement does the work of many calls.
"""

_WRITES = """\
4. **Stage**: `BEGIN`, then INSERT, UPDATE or DELETE: the writes are staged and nothing \
fires. Outside a transaction a write fires at once.
5. **Preview**: `SELECT * FROM scratchpad.staged`.
6. **Commit or roll back**: `COMMIT` fires the staged writes in order and reports each; \
`ROLLBACK` discards them.

- One statement per call.
- Do not re-read to verify a write: the command tag (`INSERT 0 2`) and `RETURNING` say \
what happened.
"""

_READ_ONLY = """\
4. This database is read-only: INSERT, UPDATE and DELETE are refused (SQLSTATE 25006).

- One statement per call.
"""

_ADVICE = """\
- `EXPLAIN` costs nothing: it shows which tools a statement would call, with which \
arguments, and calls none.
- Temporary tables hold intermediate results for this session: `CREATE TEMP TABLE t AS \
SELECT …` calls the tools once, and later statements read `t` calling nothing.
- An error comes with its SQLSTATE, DETAIL and HINT: follow the HINT. A read that finds no \
rows says so in a NOTICE: re-check the values against the column descriptions.
- Volatility: a `volatile` table calls its tool for every statement, a `stable` one once \
per call, an `immutable` one once for the server's life.
"""

_SCRATCHPAD = """\
## The scratchpad schema

- `scratchpad.staged`: the writes staged in the open transaction.
- `scratchpad.resources`: one row per table with all it takes to call it: columns, keys, \
filters, verbs, volatility, examples (`WHERE name = 't'`; a group: `WHERE namespace = 'g'`).
- `scratchpad.calls`: the audit of the tool calls you made.
- `SELECT * FROM scratchpad.search('who starred this repo')`: the tables and functions \
a task needs, best first, with their keys.
"""


def preamble(source: Database | Iterable[Resource], *, writes: bool | None = None,
             detail: Detail = "auto", full_limit: int = FULL_LIMIT,
             list_limit: int = LIST_LIMIT) -> str:
    """The priming text for a model: the discipline, then the tables, sorted by name.

    ``source`` is a ``Database`` (its resources and write policy) or resources
    (``writes`` then defaults to True). Only schema goes in, so equal
    resources give equal text.

    ``detail``:
    - ``"full"``: every table with every column, its keys, verbs and volatility;
    - ``"compact"``: one line per table (name, verbs, required keys, a short
      description), and the one statement that reads a table's columns. With
      more than ``list_limit`` tables, one line per group (namespace) with its
      count, and the one statement that lists a group's tables;
    - ``"auto"`` (the default): the full form while it is at most
      ``full_limit`` characters, else the compact one.
    """
    resources, writes = _catalog(source, writes)
    if detail not in ("auto", "full", "compact"):
        raise ValueError(f"detail must be 'auto', 'full' or 'compact', not {detail!r}")
    if detail != "compact":
        full = _full(resources, writes)
        if detail == "full" or len(full) <= full_limit:
            return full
    return _compact(resources, writes, list_limit)


def catalog_form(source: Database | Iterable[Resource], *, writes: bool | None = None,
                 full_limit: int = FULL_LIMIT, list_limit: int = LIST_LIMIT) -> str:
    """Which form ``preamble(detail="auto")`` gives: "full", "compact" or "compact, grouped"."""
    resources, writes = _catalog(source, writes)
    if len(_full(resources, writes)) <= full_limit:
        return "full"
    return "compact, grouped" if len(resources) > list_limit else "compact"


def _catalog(source: Database | Iterable[Resource], writes: bool | None
             ) -> tuple[list[Resource], bool]:
    if isinstance(source, Database):
        resources = list(source.resources.values())
        writes = source.writes if writes is None else writes
    else:
        resources = list(source)
        writes = True if writes is None else writes
    return sorted(resources, key=lambda r: r.name), bool(writes)


def _discipline(discover: str, writes: bool) -> str:
    return _HEAD + discover + _INVOKE + (_WRITES if writes else _READ_ONLY) + _ADVICE


def _full(resources: list[Resource], writes: bool) -> str:
    parts = ["# SQL is your tool\n", _discipline(_DISCOVER_FULL, writes), "## Tables\n"]
    parts += [_describe(r) for r in resources]
    parts.append(_SCRATCHPAD)
    return "\n".join(parts).rstrip("\n") + "\n"


def _compact(resources: list[Resource], writes: bool, list_limit: int) -> str:
    table = resources[0].name if resources else "t"
    discover = _DISCOVER_COMPACT.format(discovery=DISCOVERY_SQL.format(table=table),
                                        table=table)
    parts = ["# SQL is your tool\n", _discipline(discover, writes)]
    if len(resources) <= list_limit:
        parts.append(f"## Tables ({len(resources)})\n\n"
                     + "".join(f"- {_one_line(r)}\n" for r in resources))
    else:
        parts.append(_groups(resources))
    parts.append(_SCRATCHPAD)
    return "\n".join(parts).rstrip("\n") + "\n"


def _one_line(resource: Resource) -> str:
    facts = ", ".join(resource.verbs)
    if resource.keys:
        facts += f"; {'keys' if len(resource.keys) > 1 else 'key'}: {', '.join(resource.keys)}"
    about = short_description(resource)
    return f"{resource.name} ({facts})" + (f": {about}" if about else "")


def _groups(resources: list[Resource]) -> str:
    groups: dict[str, list[str]] = {}
    for r in resources:
        groups.setdefault(resource_group(r), []).append(r.name)
    first = min(groups)
    lines = [f"## Tables: {len(resources)}, in {len(groups)} groups\n",
             "Too many to list: each group is one line below. Find the tables a task needs "
             f"with `{SEARCH_SQL.format(words='words of the task')}`, or list a group's "
             f"tables with `{GROUP_SQL.format(group=first)}`.\n"]
    for name in sorted(groups):
        names = groups[name]
        # Spread over the sorted names, so that they show more than one verb or prefix.
        picked = [names[i * len(names) // GROUP_SAMPLES]
                  for i in range(min(GROUP_SAMPLES, len(names)))]
        shown = ", ".join(picked) + (", …" if len(names) > GROUP_SAMPLES else "")
        noun = "table" if len(names) == 1 else "tables"
        lines.append(f"- {name}: {len(names)} {noun} ({shown})")
    return "\n".join(lines) + "\n"


def _describe(resource: Resource) -> str:
    lines = [f"### {resource.name}"]
    if resource.description:
        lines.append(resource.description)
    facts = [" ".join(v.upper() for v in resource.verbs), resource.volatility]
    if resource.keys:
        example = " AND ".join(f"{k} = '…'" for k in resource.keys)
        label = "required keys" if len(resource.keys) > 1 else "required key"
        facts.append(f"{label}: {', '.join(resource.keys)} "
                     f"(`SELECT * FROM {resource.name} WHERE {example}`)")
    if resource.primary_key:
        facts.append(f"primary key: {', '.join(resource.primary_key)}")
    if resource_filters(resource):
        facts.append(f"filters: {', '.join(resource_filters(resource))}")
    lines.append(" · ".join(facts))
    lines += [f"- {column_line(resource, col, filters=False)}" for col in resource.columns]
    return "\n".join(lines) + "\n"
