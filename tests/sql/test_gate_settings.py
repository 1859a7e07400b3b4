"""``set_config(name, value, is_local)`` is judged exactly as ``SET name = value``, and
refused for the settings the session keeps itself; a setting's old alias is judged
as the setting it names. Pure: parse trees only, no server."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from pglast import parse_sql

from glove_scratchpad import errors
from glove_scratchpad.server.sql import gate

from .gate_samples import is_resource


def judge(sql: str, params: Sequence[str | bytes | None] | None = None) -> errors.SqlError | None:
    try:
        for raw in parse_sql(sql):
            gate.check(raw.stmt, is_resource=is_resource, params=params)
    except errors.SqlError as exc:
        return exc
    return None


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _verdict(exc: errors.SqlError | None) -> tuple[str, str] | None:
    return None if exc is None else (exc.sqlstate, exc.message)


# Kept by the session, not by the sidecar: set_config would change only the sidecar's copy.
SESSION_KEPT = {"statement_timeout", "client_encoding", "default_transaction_read_only",
                "transaction_read_only", "transaction_isolation",
                "default_transaction_isolation", "transaction_deferrable"}

# (setting, value): every pair is judged the same by SET and by set_config.
PAIRS = [
    ("search_path", "public"), ("search_path", "public, scratchpad"),
    ("search_path", '"$user", public'), ("search_path", "pg_catalog, public"),
    ("search_path", "public, pg_catalog"), ("search_path", "pg_temp"), ("search_path", "x"),
    ("Search_Path", "public, pg_temp"),
    ("default_transaction_read_only", "on"), ("default_transaction_read_only", "off"),
    ("transaction_read_only", "on"), ("transaction_read_only", "false"),
    ("standard_conforming_strings", "on"), ("standard_conforming_strings", "off"),
    ("client_encoding", "UTF8"), ("client_encoding", "LATIN1"),
    ("statement_timeout", "5s"), ("statement_timeout", "0"), ("STATEMENT_TIMEOUT", "1h"),
    ("transaction_isolation", "serializable"), ("default_transaction_isolation", "read committed"),
    ("transaction_deferrable", "on"),
    ("work_mem", "1GB"), ("WORK_MEM", "1GB"), ("sort_mem", "1GB"), ("vacuum_mem", "1GB"),
    ("maintenance_work_mem", "1GB"), ("role", "postgres"), ("session_authorization", "postgres"),
    ("row_security", "off"), ("log_statement", "all"), ("ssl_ecdh_curve", "prime256v1"),
    ("glove_scratchpad.evaluating", "on"),
    ("TimeZone", "UTC"), ("application_name", "agent"), ("DateStyle", "ISO"),
    ("lock_timeout", "0"), ("jit", "off"), ("extra_float_digits", "3"), ("myapp.tenant", "x"),
]


def test_set_config_is_judged_exactly_as_set() -> None:
    mismatches = []
    for name, value in PAIRS:
        set_exc = judge(f"SET {name} = {_quote(value)}")
        call = f"SELECT set_config({_quote(name)}, {_quote(value)}, false)"
        for sql in (call, call.replace("false)", "true)")):
            got = judge(sql)
            if name.lower() in SESSION_KEPT and set_exc is None:
                ok = got is not None and got.sqlstate == "0A000" and (
                    (got.hint or "").startswith("Use "))
            else:
                ok = _verdict(got) == _verdict(set_exc)
            if not ok:
                mismatches.append((name, value, sql, _verdict(set_exc), _verdict(got)))
    assert mismatches == []


@pytest.mark.parametrize("name", sorted(SESSION_KEPT))
def test_set_config_of_a_setting_the_session_keeps_names_the_set_to_use(name: str) -> None:
    value = "UTF8" if name == "client_encoding" else "on"
    assert judge(f"SET {name} = {_quote(value)}") is None  # SET reaches the session
    exc = judge(f"SELECT set_config('{name}', '{value}', true)")
    assert exc is not None
    assert exc.sqlstate == "0A000"
    assert exc.message.startswith(f'set_config() of "{name}" is not supported: ')
    assert (exc.hint or "").startswith("Use ")


def test_set_config_of_statement_timeout() -> None:
    for sql in ("SELECT set_config('statement_timeout', '0', false)",
                "SELECT set_config('statement_timeout', '5s', true)",
                "SELECT pg_catalog.set_config('Statement_Timeout', '1h', false)",
                "SELECT set_config(setting_name => 'statement_timeout', new_value => '0', "
                "is_local => false)",
                "SELECT * FROM web w, LATERAL (SELECT set_config('statement_timeout', w.body, "
                "false)) s WHERE query = 'x'"):
        exc = judge(sql)
        assert exc is not None, sql
        assert (exc.sqlstate, exc.message, exc.hint) == (
            "0A000",
            'set_config() of "statement_timeout" is not supported: the session enforces it, '
            "under the server's cap",
            "Use SET statement_timeout = …: it is kept by the session under the server's cap.",
        ), sql
    assert judge("SET statement_timeout = 0") is None  # the session applies min(cap, value)
    assert judge("SET LOCAL statement_timeout = '5s'") is None


@pytest.mark.parametrize(("sql", "params", "code"), [
    ("SELECT set_config($1, $2, false)", ["statement_timeout", "0"], "0A000"),
    ("SELECT set_config($1, $2, false)", ["client_encoding", "UTF8"], "0A000"),
    ("SELECT set_config($1, $2, false)", ["sort_mem", "1GB"], "42501"),
    ("SELECT set_config($1, $2, false)", ["application_name", "x"], None),
    ("SELECT set_config($1::text, $2, false)", ["search_path", "public"], None),
    ("SELECT set_config($1, $2, false)", ["search_path", "pg_temp"], "42501"),
    ("SELECT set_config($1, $2, false)", ["search_path", None], "42501"),
    ("SELECT set_config($1, $2, false)", ["search_path", b"public"], "42501"),
    ("SELECT set_config('search_path', $1, false)", None, "42501"),
    ("SELECT set_config($1, 'x', false)", None, "42501"),
    ("SELECT set_config('search_path', current_user, false)", None, "42501"),
    ("SELECT set_config('search_path', 'pub' || 'lic', false)", None, "42501"),
    ("SELECT set_config('application_name', current_user, false)", None, None),
    ("SELECT set_config(NULL, 'x', false)", None, None),
], ids=lambda v: str(v)[:40])
def test_set_config_arguments_are_known_through_literals_or_parameters(
        sql: str, params: list[str | bytes | None] | None, code: str | None) -> None:
    """A one-way setting's value, and every setting's name, must be known here."""
    exc = judge(sql, params)
    assert (exc.sqlstate if exc else None) == code, exc and exc.message


@pytest.mark.parametrize(("sql", "target"), [
    ("SET sort_mem = '10GB'", "work_mem"),
    ("SET SORT_MEM TO 1000000", "work_mem"),
    ("RESET sort_mem", "work_mem"),
    ("SET vacuum_mem = '10GB'", "maintenance_work_mem"),
    ("SELECT set_config('sort_mem', '10GB', false)", "work_mem"),
    ("SELECT set_config('Vacuum_Mem', '10GB', true)", "maintenance_work_mem"),
    ("SET ssl_ecdh_curve = 'prime256v1'", "ssl_groups"),
])
def test_an_old_alias_is_judged_as_the_setting_it_names(sql: str, target: str) -> None:
    """Postgres maps sort_mem to work_mem (guc.c): the alias must not be a way around it."""
    exc = judge(sql)
    assert exc is not None, sql
    assert exc.sqlstate == "42501"
    assert exc.message == f'permission denied to set parameter "{target}"'
