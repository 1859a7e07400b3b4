"""``[approvals]`` in the config file of ``glove-scratchpad serve``: the file's rules gate
the served writes, and a misspelt key is refused before anything starts."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from glove_scratchpad.server.config import load_config

from ..fix_cli import cli_server
from ..fix_server import free_port, sidecar_database
from ..server.test_approvals_cli import _cli

CONFIG = """
[server]
writes = true

[approvals]
require = ["tasks.insert"]
approvers = ["ops"]
wait_s = 0.5
"""


def test_a_misspelt_approvals_key_is_refused(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text("[approvals]\naprovers = ['ops']\n")
    with pytest.raises(ValueError, match="approvers"):
        load_config(path, environ={})
    path.write_text(CONFIG)
    rules = load_config(path, environ={}).approvals
    assert (rules.require, rules.approvers, rules.wait_s) == (["tasks.insert"], ["ops"], 0.5)


async def test_the_config_files_rules_gate_the_served_writes(sidecar, tmp_path):
    database = "test_appr_serve"
    own = await sidecar_database(sidecar, database)
    config = tmp_path / "glove.toml"
    config.write_text(CONFIG)
    port = free_port()
    async with cli_server("--port", str(port), "--sidecar-dsn", own, "--config", str(config)):
        dsn = f"postgresql://%s@127.0.0.1:{port}/scratchpad"
        async with await psycopg.AsyncConnection.connect(dsn % "agent",
                                                         autocommit=True) as conn:
            with pytest.raises(psycopg.errors.QueryCanceled) as caught:
                await conn.execute("INSERT INTO tasks (title) VALUES ('gated')")
            assert "approval request" in str(caught.value)
            cur = await conn.execute("SELECT count(*) FROM tasks WHERE title = 'gated'")
            assert await cur.fetchone() == (0,)
            rid = (await (await conn.execute(
                "SELECT max(id) FROM scratchpad.approvals")).fetchone())[0]
            code, out, err = await _cli(dsn % "ops", "approve", str(rid), "-m", "fine")
            assert code == 0, err
            assert "fired" in out
            await asyncio.sleep(0)
            cur = await conn.execute("SELECT count(*) FROM tasks WHERE title = 'gated'")
            assert await cur.fetchone() == (1,)
