"""The names a server takes in its sidecar, and the SQL it sends there at install."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import glove_scratchpad.catalog as catalog
from glove_scratchpad.catalog import DEFAULT_NAME, Catalog, check_name, schema_names
from glove_scratchpad.resources import define_resource

CATALOG = Path(catalog.__file__).parent


def test_the_default_name_keeps_the_short_names_but_not_public():
    s = schema_names()
    assert (s.name, s.served, s.system, s.fns, s.private) == (
        DEFAULT_NAME, "glove", "scratchpad", "fn", "_gs_audit")
    assert "public" not in (s.served, s.system, s.fns, s.private)


def test_another_name_derives_every_schema_from_itself():
    s = schema_names("support")
    assert (s.served, s.system, s.fns, s.private) == (
        "support", "support_scratchpad", "support_fn", "_gs_audit_support")
    assert s.owned == ("support", "support_scratchpad", "support_fn")


@pytest.mark.parametrize("name", ["public", "scratchpad", "fn", "pg_x", "Upper", "a-b", "",
                                  "x" * 31, "alpha_fn", "beta_scratchpad", "information_schema"])
def test_names_that_would_collide_are_refused(name):
    with pytest.raises(ValueError, match="name"):
        check_name(name)


def test_no_sql_needs_postgres_16():
    """Hex integer literals (0x…) are Postgres 16 syntax; the server supports 15."""
    hex_literal = re.compile(r"\b0x[0-9a-fA-F]+\b")
    for path in CATALOG.glob("*.py"):
        for line in path.read_text().splitlines():
            if "execute" in line or "SELECT" in line:
                assert not hex_literal.search(line), f"{path.name}: {line.strip()}"


async def test_servers_of_one_name_share_what_the_first_built(sidecar):
    r = define_resource("things", columns=[("x", "bigint")], volatility="volatile",
                        select=lambda b: [])
    first = await Catalog.open(sidecar, database="test_names_share", owns_sidecar=False)
    second = await Catalog.open(sidecar, database="test_names_share", owns_sidecar=False)
    try:
        await first.install([r])
        built = await first.pool.fetchval('SELECT built_at FROM "_gs_audit".built')
        await second.install([r])
        assert await second.pool.fetchval('SELECT built_at FROM "_gs_audit".built') == built
        assert second.instance == first.instance + 1
        assert second.agent_user == first.agent_user == "glove_agent_test_names_share"
        columns = await first.pool.fetch(
            "SELECT table_schema, table_name FROM information_schema.columns "
            "WHERE column_name = 'x'")
        assert [tuple(c) for c in columns] == [("glove", "things")]
    finally:
        await first.close()
        await second.close()
