"""``python -m benchmarks.search [--smoke]``: finding the right table among GitHub's 735.

GitHub's whole REST document (npm ``@octokit/openapi``, installed by ``make
node-deps`` in ``tests/openapi/node``) is served as tables, and each task of
``search_tasks.TASKS`` is searched over the wire, two ways, in the same run:

- ``scratchpad.search(task)``, the server's search;
- the baseline: plain full-text search over ``scratchpad.resources``, the
  task's words OR'ed (``websearch_to_tsquery``'s words, any of them) against
  the name and description, ranked by ``ts_rank``.

Reported: recall@1 and recall@5 (the task's table is first, or in the first
five), the mean reciprocal rank (over the first ``DEPTH`` rows), the characters
of the top five rows as a client prints them, and the search's latency.

It checks what it measures: every task's operation is served by exactly one
table, and every row either search returns names a table of the catalog; a
mismatch raises ``WrongAnswer``. No request reaches the API: the base URL is a
port nothing listens on, and the audit must show no call.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from .results import WrongAnswer
from .search_tasks import TASKS

__all__ = ["NAME", "SPEC", "Figures", "measure", "run"]

NAME = "search"
REPO = Path(__file__).resolve().parents[1]
SPEC = (REPO / "tests" / "openapi" / "node" / "node_modules" / "@octokit" / "openapi"
        / "generated" / "api.github.com.json")
DEPTH = 10  # rows each search returns: a rank beyond counts 0 in the MRR
SMOKE_TASKS = 8
SEARCH_SQL = ("SELECT name, kind, namespace, score, summary, keys, verbs "
              "FROM scratchpad.search(%s, %s)")
# The baseline: what a model could write itself over scratchpad.resources.
BASELINE_SQL = """
SELECT name, ts_rank(doc, q) AS rank
FROM (SELECT name, to_tsvector('english', name || ' ' || description) AS doc
      FROM scratchpad.resources) r,
     (SELECT replace(websearch_to_tsquery('english', %s)::text, '&', '|')::tsquery AS q) w
WHERE doc @@ q ORDER BY rank DESC, name LIMIT %s"""


@dataclass
class Figures:
    """One way of searching, over every task."""

    ranks: list[int | None]  # the rank of the task's table (1-based), None: not in DEPTH
    ms: list[float]
    chars: list[int]  # of the top five rows

    def recall(self, k: int) -> float:
        return sum(1 for r in self.ranks if r is not None and r <= k) / len(self.ranks)

    @property
    def mrr(self) -> float:
        return sum(1 / r for r in self.ranks if r is not None) / len(self.ranks)


def _rows_text(rows: Sequence[Sequence[Any]]) -> str:
    """The rows as a client shows them: one line each, columns separated by `|`."""
    return "\n".join(" | ".join("" if v is None else str(v) for v in row) for row in rows)


def _table_of(tables: Sequence[Any], operation: str) -> str:
    """The one table whose description lists ``operation`` (``GET /path``)."""
    found = [t.name for t in tables if any(
        f"{operation}{end}" in t.description for end in (",", ")"))]
    if len(found) != 1:
        raise WrongAnswer(f"the task's operation {operation} is served by {found or 'no'} "
                          "table(s), not one")
    return found[0]


async def measure(dsn: str, tables: Sequence[Any], tasks: Sequence[tuple[str, str]]
                  ) -> tuple[Figures, Figures, list[tuple[str, str, list[str]]]]:
    """Both searches over ``tasks``: (search, baseline, the misses of search@5)."""
    from glove_scratchpad.catalog import SYSTEM_VIEWS

    names = {t.name for t in tables} | {f"scratchpad.{v}" for v in SYSTEM_VIEWS}
    ours, base = Figures([], [], []), Figures([], [], [])
    misses = []
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        for words, operation in tasks:
            want = _table_of(tables, operation)
            for figures, sql in ((ours, SEARCH_SQL), (base, BASELINE_SQL)):
                started = time.perf_counter()
                cur = await conn.execute(sql, (words, DEPTH))
                rows = await cur.fetchall()
                figures.ms.append((time.perf_counter() - started) * 1000)
                found = [str(r[0]) for r in rows]
                strangers = [n for n in found if n not in names]
                if strangers:
                    raise WrongAnswer(f"{words!r} answered names that are no table: "
                                      f"{strangers}")
                figures.ranks.append(found.index(want) + 1 if want in found else None)
                figures.chars.append(len(_rows_text(rows[:5])))
                if figures is ours and want not in found[:5]:
                    misses.append((words, want, found[:3]))
        cur = await conn.execute(
            "SELECT count(*) FROM scratchpad.calls WHERE resource LIKE 'gh\\_%'")
        row = await cur.fetchone()
        if row is None or row[0] != 0:
            raise WrongAnswer(f"a search called a tool: {row}")
    return ours, base, misses


async def run(tasks: Sequence[tuple[str, str]]) -> tuple[Figures, Figures, list[Any], int]:
    """GitHub's document served, and the tasks measured: (search, baseline, misses, tables)."""
    from glove_scratchpad.catalog import EmbeddedSidecar
    from glove_scratchpad.resources.openapi import OpenApiBridge
    from glove_scratchpad.server import Database
    from glove_scratchpad.server.config import ServerConfig
    from glove_scratchpad.server.net.server import Server

    if not SPEC.exists():
        raise SystemExit("GitHub's document is missing: run make node-deps")
    sidecar = EmbeddedSidecar(temporary=True)
    await sidecar.start()
    bridge = OpenApiBridge([{"namespace": "gh", "spec": str(SPEC),
                             "base_url": "http://127.0.0.1:9"}], REPO)
    try:
        tables = await bridge.load()
        db = await Database.create(tables, writes=True, sidecar=sidecar, database="github")
        server = Server(ServerConfig(port=0, writes=True), db)
        await server.start()
        try:
            dsn = f"postgresql://agent@127.0.0.1:{server.port}/scratchpad"
            ours, base, misses = await measure(dsn, tables, tasks)
        finally:
            await server.shutdown()
            await db.close()
    finally:
        await bridge.aclose()
        await sidecar.stop()
    return ours, base, misses, len(tables)


def report(ours: Figures, base: Figures, count: int, tasks: int) -> str:
    """The figures as the Markdown table docs/catalog.md shows."""
    lines = [f"{tasks} tasks over {count} tables of GitHub's REST API.", "",
             "| | recall@1 | recall@5 | MRR | top five rows, characters (median, max) "
             "| latency, ms (median) |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for label, f in (("`scratchpad.search`", ours),
                     ("baseline: full-text search over `scratchpad.resources`", base)):
        lines.append(f"| {label} | {f.recall(1):.2f} | {f.recall(5):.2f} | {f.mrr:.2f} | "
                     f"{statistics.median(f.chars):.0f}, {max(f.chars)} | "
                     f"{statistics.median(f.ms):.1f} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.search")
    parser.add_argument("--smoke", action="store_true",
                        help=f"the first {SMOKE_TASKS} tasks only")
    args = parser.parse_args(argv)
    tasks = TASKS[:SMOKE_TASKS] if args.smoke else TASKS
    ours, base, misses, count = asyncio.run(run(tasks))
    print(report(ours, base, count, len(tasks)))
    if misses:
        print("\nNot in the first five:")
        for words, want, found in misses:
            print(f"- {words!r}: {want}; found {', '.join(found)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
