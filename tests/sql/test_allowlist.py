"""The gate's allowlists (``sql/allowlist.py``), through the wire: a function or relation of
Postgres that reaches the server's files or credentials is refused with its own reason;
the catalog relations clients describe the schema with are read."""

from __future__ import annotations

from .fix_answers import answer, refusal


async def test_a_function_that_reads_the_servers_files_is_refused_with_its_reason(server):
    error = await refusal(server, "SELECT pg_read_file('/etc/passwd')")
    assert error.sqlstate == "42501"
    assert error.message_primary == (
        "function pg_read_file() is not allowed: it reads the server's files or configuration")


async def test_a_relation_of_credentials_is_refused_and_the_catalog_is_read(server):
    error = await refusal(server, "SELECT * FROM pg_authid")
    assert error.sqlstate == "42501"
    assert error.message_primary == (
        "permission denied for relation pg_authid: it holds role credentials")
    assert "information_schema" in (error.message_hint or "")
    assert await answer(server, "SELECT count(*) > 0 FROM pg_catalog.pg_class") == [(True,)]
