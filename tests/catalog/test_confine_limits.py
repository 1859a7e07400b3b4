"""The sidecar bounds what Postgres can bound for the agent's statements, whatever its
cluster is configured to: memory per sort or hash, recursion, spill to disk and time."""

from __future__ import annotations

import asyncpg

from glove_scratchpad.resources.demo import demo_resources
from glove_scratchpad.server import Database

from ..fix_server import dsn, serving

DATABASE = "test_sidecar_limits"
# What a cluster configured for other work might give every session of the database.
GENEROUS = {"work_mem": "256MB", "hash_mem_multiplier": "8", "max_stack_depth": "6MB",
            "temp_file_limit": "-1", "statement_timeout": "0"}
BOUNDED = {"work_mem": "4MB", "hash_mem_multiplier": "2", "max_stack_depth": "2MB",
           "temp_file_limit": "1GB"}


async def test_the_agents_statements_run_under_the_sidecars_limits(sidecar):
    admin = await asyncpg.connect(sidecar.dsn.replace("/scratchpad?", "/postgres?"))
    try:
        await admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        await admin.execute(f"CREATE DATABASE {DATABASE}")
        for name, value in GENEROUS.items():
            await admin.execute(f"ALTER DATABASE {DATABASE} SET {name} = '{value}'")
    finally:
        await admin.close()
    db = await Database.create(demo_resources(), sidecar=sidecar, database=DATABASE)
    try:
        async with serving(db) as srv:
            conn = await asyncpg.connect(dsn(srv))
            try:
                for name, value in BOUNDED.items():
                    assert await conn.fetchval(f"SELECT current_setting('{name}')") == value
                # The server's own statement timeout, as the sidecar's backstop.
                assert await conn.fetchval("SELECT current_setting('statement_timeout')") \
                    != "0"
            finally:
                await conn.close()
    finally:
        await db.close()
