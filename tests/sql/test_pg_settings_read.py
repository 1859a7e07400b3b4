"""The one read of ``pg_settings`` the gate allows (``sql/pg_settings_read.py``), through
the wire: pgjdbc's shape, a setting named by a literal, passes the gate; any other shape is
refused, saying to SHOW the setting instead."""

from __future__ import annotations

import psycopg
import pytest

from .fix_answers import answer, refusal

REFUSED = "permission denied for relation pg_settings: it shows server settings and the " \
    "paths of the server's files"


@pytest.mark.parametrize("sql", [
    "SELECT setting FROM pg_settings WHERE name <> 'work_mem'",
    "SELECT setting FROM pg_settings WHERE lower(name) = 'work_mem'",
    "SELECT sourcefile FROM pg_settings WHERE name = 'work_mem'",
])
async def test_another_shape_is_refused(server, sql):
    error = await refusal(server, sql)
    assert (error.sqlstate, error.message_primary) == ("42501", REFUSED)
    assert error.message_hint == "SHOW a setting by name instead."


async def test_the_pinned_read_passes_the_gate(server):
    # The gate lets it through to the sidecar, whose agent role may or may not read the
    # view: whatever the sidecar answers, it is not the gate's refusal.
    try:
        await answer(server, "SELECT setting FROM pg_settings WHERE name = 'work_mem'")
    except psycopg.Error as exc:
        assert exc.diag.message_primary != REFUSED
