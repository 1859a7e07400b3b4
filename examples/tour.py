"""A tour of glove-scratchpad, in process: discover, invoke, compose, stage, preview, commit.

Run it with ``.venv/bin/python examples/tour.py`` (``make test`` creates the venv).
It serves the bundled demo resources on a temporary embedded sidecar, and
needs no network and no API key.
"""

from __future__ import annotations

import asyncio

from glove_scratchpad.catalog import EmbeddedSidecar
from glove_scratchpad.resources.demo import demo_resources
from glove_scratchpad.server import Database, Result


def show(title: str, sql: str, result: Result) -> None:
    print(f"\n-- {title}\n{sql}")
    if result.columns:
        print("  " + " | ".join(result.column_names))
        for row in result.rows:
            print("  " + " | ".join(str(v) if len(str(v)) < 60 else str(v)[:57] + "…"
                                    for v in row))
    print(f"  ({result.command_tag})")
    for notice in result.notices:
        print(f"  {notice.severity}: {notice.message}")


async def main() -> None:
    sidecar = EmbeddedSidecar(temporary=True)
    db = await Database.create(demo_resources(), writes=True, sidecar=sidecar)
    session = db.session()
    steps = [
        ("discover: which tables are there?",
         "SELECT table_name, obj_description(('glove.' || table_name)::regclass) AS about "
         "FROM information_schema.tables WHERE table_schema = 'glove' ORDER BY 1"),
        ("discover: what does `web` take?",
         "SELECT column_name, data_type, col_description('web'::regclass, ordinal_position) "
         "FROM information_schema.columns WHERE table_name = 'web' ORDER BY ordinal_position"),
        ("invoke: WHERE equalities are the tool's arguments",
         "SELECT rank, title, url FROM web WHERE query = 'postgresql protocol' LIMIT 3"),
        ("compose: a subquery's value becomes another tool's argument",
         "SELECT id, title, due FROM tasks WHERE due = (SELECT tomorrow FROM time)"),
        ("dry-run: EXPLAIN calls nothing",
         "EXPLAIN SELECT * FROM images WHERE prompt IN ('a cat', 'a dog')"),
        ("stage: inside BEGIN, a write is recorded, not sent", "BEGIN"),
        ("stage", "INSERT INTO emails (to_addr, subject, body) "
                  "SELECT 'me@example.org', 'Due tomorrow: ' || title, 'Reminder' FROM tasks "
                  "WHERE due = (SELECT tomorrow FROM time)"),
        ("preview: what COMMIT would fire", "SELECT id, verb, calls FROM scratchpad.staged"),
        ("commit: fire the staged writes, in order", "COMMIT"),
        ("roll back: a true dry run", "BEGIN"),
        ("roll back", "UPDATE tasks SET status = 'done' WHERE id = 2"),
        ("roll back", "ROLLBACK"),
        ("errors name the next step", "SELECT * FROM web"),
    ]
    try:
        for title, sql in steps:
            try:
                show(title, sql, await session.execute(sql))
            except Exception as exc:  # the tour shows errors the way a model sees them
                print(f"\n-- {title}\n{sql}\n  ERROR: {exc}")
    finally:
        await db.close()
        await sidecar.stop()


if __name__ == "__main__":
    asyncio.run(main())
