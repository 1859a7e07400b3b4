"""Layer 1, the gate: every attack refused with its SQLSTATE, whatever its spelling;
what clients send passes. Pure: parse trees only, no server."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from pglast import ast, parse_sql, parser
from pglast.parser import ParseError
from pglast.stream import RawStream

from glove_scratchpad import errors
from glove_scratchpad.catalog import schema_names
from glove_scratchpad.server.sql import allowlist, gate, temp_tables

from .corpus import ATTACKS, CLIENT_QUERIES, ORDINARY, RESOURCES


def is_resource(schema: str | None, name: str) -> bool:
    return (schema or "public", name) in RESOURCES


def check(sql: str, params: Sequence[str | bytes | None] | None = None, **kw: Any) -> None:
    for raw in parse_sql(sql):
        temp_tables.check(raw.stmt, is_resource=is_resource, params=params, **kw)


def refusal(sql: str, params: Sequence[str | bytes | None] | None = None) -> errors.SqlError:
    with pytest.raises(errors.SqlError) as info:
        check(sql, params)
    return info.value


# -- the corpus ------------------------------------------------------------------------


def test_the_attack_corpus_is_large_and_distinct() -> None:
    statements = [sql for sql, _ in ATTACKS]
    assert len(statements) >= 100
    assert len(set(statements)) == len(statements)
    assert {code for _, code in ATTACKS} == {"42501", "0A000", "42P01", "42883"}


@pytest.mark.parametrize(("sql", "code"), ATTACKS, ids=[sql[:60] for sql, _ in ATTACKS])
def test_attack_is_refused(sql: str, code: str) -> None:
    exc = refusal(sql)
    assert exc.sqlstate == code, exc.message
    assert type(exc) is errors.error_class(code)  # a registered class, never a bare code
    assert exc.message.strip()
    assert exc.hint and exc.hint.strip()


def _client_ids() -> list[str]:
    seen: dict[str, int] = {}
    ids = []
    for entry in CLIENT_QUERIES:
        seen[entry[0]] = seen.get(entry[0], 0) + 1
        ids.append(f"{entry[0]} {seen[entry[0]]}")
    return ids


@pytest.mark.parametrize("entry", CLIENT_QUERIES, ids=_client_ids())
def test_client_query_passes(entry: tuple[Any, ...]) -> None:
    _, sql, *params = entry
    check(sql, params[0] if params else None)


@pytest.mark.parametrize("sql", ORDINARY, ids=[sql[:60] for sql in ORDINARY])
def test_ordinary_statement_passes(sql: str) -> None:
    check(sql)


# -- rules, one at a time --------------------------------------------------------------


def test_unknown_relation_says_how_to_discover_resources() -> None:
    exc = refusal("SELECT * FROM nope")
    assert exc.sqlstate == "42P01"
    assert exc.message == 'relation "nope" does not exist'
    assert "information_schema.tables" in (exc.hint or "")


def test_refusals_point_at_the_name_as_postgres_does() -> None:
    assert refusal("SELECT * FROM nope").position == 15
    assert refusal("SELECT 'é', pg_read_file('x')").position == 13  # characters, not bytes
    assert refusal("SELECT x.pg_ls_dir FROM concat('/') x").position == 8
    assert refusal("DELETE FROM pg_class").position == 13


def test_resources_may_be_schema_qualified() -> None:
    check("SELECT * FROM public.github_pr WHERE number = 1")
    check("SELECT * FROM scratchpad.staged")
    assert refusal("SELECT * FROM staged").sqlstate == "42P01"  # not on the search path
    assert refusal("SELECT * FROM scratchpad.github_pr").sqlstate == "42P01"


def test_cte_scope_follows_postgres() -> None:
    # A plain WITH sees earlier siblings only; a later sibling's name is a real relation.
    check("WITH a AS (SELECT 1 AS x), b AS (SELECT * FROM a) SELECT * FROM b")
    later = "WITH a AS (SELECT * FROM b), b AS (SELECT 1) SELECT * FROM a"
    assert refusal(later).sqlstate == "42P01"
    check("WITH RECURSIVE a AS (SELECT * FROM b), b AS (SELECT 1) SELECT * FROM a")
    # A CTE is never schema-qualified, never a write target, and does not leak outward.
    qualified = "WITH pg_authid AS (SELECT 1) SELECT * FROM pg_catalog.pg_authid"
    assert refusal(qualified).sqlstate == "42501"
    assert refusal("WITH x AS (SELECT 1) DELETE FROM x").sqlstate == "42P01"
    assert refusal("SELECT * FROM (WITH s AS (SELECT 1) SELECT 1) q, s").sqlstate == "42P01"


def test_writes_reach_only_resources() -> None:
    check("INSERT INTO github_pr (number, title) VALUES (1, 'x')")
    for sql in ("INSERT INTO pg_class VALUES (1)", "UPDATE information_schema.tables SET x = 1",
                "DELETE FROM pg_toast.pg_toast_1", "INSERT INTO scratchpad.nope VALUES (1)"):
        assert refusal(sql).sqlstate in ("42501", "42P01")


def test_pg_settings_only_pinned_to_a_named_harmless_setting() -> None:
    check("SELECT setting FROM pg_catalog.pg_settings WHERE name='max_index_keys'")
    check("SELECT s.setting FROM pg_settings s WHERE 'work_mem' = s.name LIMIT 1")
    check("EXPLAIN SELECT setting FROM pg_settings WHERE name = 'work_mem'")
    for sql in (
        "SELECT setting FROM pg_settings WHERE name = $1",
        "SELECT setting FROM pg_settings WHERE name <> 'work_mem'",
        "SELECT setting FROM pg_settings WHERE name NOT IN ('work_mem')",
        "SELECT setting FROM pg_settings WHERE lower(name) = 'work_mem'",
        "SELECT setting FROM pg_settings, github_pr WHERE name = 'work_mem'",
        "SELECT setting FROM pg_settings WHERE name = 'work_mem' ORDER BY setting::int",
        "SELECT (SELECT setting FROM pg_settings WHERE name = 'work_mem')",
        "WITH s AS (SELECT 1) SELECT setting FROM pg_settings WHERE name = 'work_mem'",
        "SELECT setting FROM pg_settings WHERE name = 'work_mem' UNION SELECT 'x'",
    ):
        assert refusal(sql).sqlstate == "42501", sql


def test_setting_names_given_as_parameters_are_checked_against_their_values() -> None:
    check("SELECT current_setting($1)", ["default_table_access_method"])
    check("SELECT current_setting($1::varchar)", [None])
    assert refusal("SELECT current_setting($1)", ["data_directory"]).sqlstate == "42501"
    assert refusal("SELECT current_setting($1)").sqlstate == "42501"  # no value known
    assert refusal("SELECT current_setting($2)", ["work_mem"]).sqlstate == "42501"
    check("SELECT set_config($1, $2, false)", ["application_name", "x"])
    assert refusal("SELECT set_config($1, 'x', false)", ["role"]).sqlstate == "42501"
    assert refusal("SELECT set_config('search_path', $1, false)", ["pg_temp"]).sqlstate == "42501"
    check("SELECT set_config('search_path', $1, false)", ["public"])
    binary = refusal("SELECT current_setting($1)", [b"data_directory"])
    assert binary.sqlstate == "42501"


def test_one_way_settings() -> None:
    for sql in ("SET default_transaction_read_only = on", "SET transaction_read_only = 1",
                "SET standard_conforming_strings = true", "SET client_encoding TO 'utf-8'",
                "SET search_path = information_schema, scratchpad",
                "RESET search_path", "SET default_transaction_read_only TO DEFAULT"):
        check(sql)
    for sql in ("SET default_transaction_read_only = 'off'", "SET standard_conforming_strings = no",
                "SET client_encoding = 'LATIN1'", "SET search_path = public, pg_temp",
                "SET search_path = 'public, pg_catalog'"):
        assert refusal(sql).sqlstate == "42501", sql


def test_search_path_lists_the_servers_own_schemas() -> None:
    shop = schema_names("shop")
    check("SET search_path = shop, shop_scratchpad, public", schemas=shop)
    check("SELECT set_config('search_path', 'shop_scratchpad', false)", schemas=shop)
    for path in ("scratchpad", "glove", "shop_fn", "_gs_audit_shop"):
        with pytest.raises(errors.InsufficientPrivilege) as info:
            check(f"SET search_path = shop, {path}", schemas=shop)
        assert f'schema "{path}" may not be on search_path' in info.value.message
    check("SET search_path = glove, scratchpad")
    assert refusal("SET search_path = glove, shop_scratchpad").sqlstate == "42501"
    assert refusal("SET search_path = glove, fn").sqlstate == "42501"


def test_protected_settings_can_be_chosen() -> None:
    assert refusal("SET work_mem = '1GB'").sqlstate == "42501"
    check("SET work_mem = '1GB'", protected_settings=frozenset({"role"}))
    assert refusal("SET ROLE postgres").sqlstate == "42501"
    check("SHOW work_mem")
    with pytest.raises(errors.InsufficientPrivilege):
        check("SHOW work_mem", secret_settings=frozenset({"work_mem"}))


def test_allowlists_are_consistent() -> None:
    names = gate.FUNCTIONS | gate.CATALOG_RELATIONS
    assert all(n == n.lower() and re.fullmatch(r"[a-z0-9_]+", n) for n in names)
    refused = [n for n in gate.FUNCTIONS
               if any(r.matches(n) for r in allowlist.FUNCTION_REFUSALS)]
    assert refused == ["pg_advisory_unlock_all"]  # allowed: connection pools send it
    for name in ("pg_authid", "pg_shadow", "pg_settings", "pg_stat_activity", "pg_largeobject",
                 "pg_file_settings", "pg_hba_file_rules", "pg_user_mappings", "pg_statistic"):
        assert name not in gate.CATALOG_RELATIONS
    for name in ("pg_read_file", "pg_ls_dir", "pg_sleep", "nextval", "lo_import", "dblink",
                 "query_to_xml", "txid_current", "pg_advisory_lock", "pg_terminate_backend"):
        assert name not in gate.FUNCTIONS
    assert {"role", "session_authorization", "work_mem"} <= gate.PROTECTED_SETTINGS
    assert {"data_directory", "config_file", "hba_file"} <= gate.SECRET_SETTINGS


def test_refused_statement_kinds_name_themselves() -> None:
    assert refusal("DROP TABLE github_pr").message.startswith("DROP TABLE is not allowed")
    assert refusal("CREATE MATERIALIZED VIEW v AS SELECT 1").message.startswith(
        "CREATE MATERIALIZED VIEW")
    assert refusal("ANALYZE").message.startswith("ANALYZE is not allowed")
    assert refusal("VACUUM").message.startswith("VACUUM is not allowed")
    assert "COPY" in refusal("COPY github_pr TO STDOUT (FREEZE)").message


@pytest.mark.parametrize(("plain", "spelled"), [
    ("SELECT pg_read_file('/etc/passwd')",
     "SELECT/**/\"pg_read_file\"( U&'/etc/\\0070asswd' ) -- trailing comment\n"),
    ("SELECT * FROM pg_catalog.pg_authid",
     'SELECT * FROM "pg_catalog" . U&"\\0070g_authid"'),
    ("SELECT set_config('role', 'x', false)",
     "select SET_CONFIG($a$role$a$, E'\\x78', FALSE)"),
    ("SELECT current_setting('data_directory')",
     "SELECT current_setting(U&'d!0061ta_directory' UESCAPE '!')"),
])
def test_spelling_is_resolved_by_the_parser(plain: str, spelled: str) -> None:
    """Quoting, escapes, dollar quotes and comments leave no trace in the tree the gate reads."""
    assert _strip_locations(parse_sql(plain)[0].stmt) == _strip_locations(
        parse_sql(spelled)[0].stmt)
    assert refusal(spelled).sqlstate == refusal(plain).sqlstate


def _strip_locations(node: Any) -> Any:
    if isinstance(node, tuple | list):
        return tuple(_strip_locations(n) for n in node)
    if isinstance(node, ast.Node):
        slots: Any = node.__slots__  # type: ignore[attr-defined]
        return (type(node).__name__, tuple(
            (slot, _strip_locations(getattr(node, slot, None)))
            for slot in slots if slot not in ("location", "stmt_location")))
    return node


# -- mutants -------------------------------------------------------------------------

_QUERIES = (ast.SelectStmt, ast.InsertStmt, ast.UpdateStmt, ast.DeleteStmt)
_SEPARATORS = (" ", "  ", "\n", "\t", " /* x */ ", "/**/", " -- c\n", "\n\t ",
               " /* a /* nested */ b */ ")
_WRAPPERS = (
    "SELECT * FROM ({}) s",
    "WITH c AS ({}) SELECT * FROM c",
    "SELECT ({})",
    "SELECT 1 WHERE EXISTS ({})",
    "SELECT * FROM github_pr g, LATERAL ({}) l WHERE g.number = 1",
    "SELECT * FROM github_pr WHERE number IN ({})",
    "INSERT INTO github_pr SELECT * FROM ({}) s",
    "EXPLAIN {}",
)


def _literal_value(text: str) -> str | None:
    if text.startswith("'") and text.endswith("'"):
        return text[1:-1].replace("''", "'")
    m = re.fullmatch(r"(\$[A-Za-z_]*\$)(.*)\1", text, re.S)
    return m.group(2) if m else None


def _unicode_escaped(value: str, rng: random.Random) -> str:
    escaped = (f"\\{ord(c):04x}" if c in "\\'" or rng.random() < 0.5 else c for c in value)
    return "U&'" + "".join(escaped) + "'"


def _any_case(text: str, rng: random.Random) -> str:
    return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in text)


def _mutate(sql: str, rng: random.Random) -> str:
    """``sql`` spelled differently, token by token, with its meaning kept."""
    out, prev_end = [], 0
    for tok in parser.scan(sql):
        gap = sql[prev_end:tok.start]
        if gap and rng.random() < 0.5:
            gap = rng.choice(_SEPARATORS)
        elif not gap and tok.name.startswith("ASCII") and rng.random() < 0.25:
            gap = " "
        text = sql[tok.start:tok.end + 1]
        choice = rng.randrange(3)
        if tok.kind != "NO_KEYWORD":  # a keyword: any case
            text = _any_case(text, rng)
        elif tok.name == "IDENT" and not text.startswith('"') and choice:
            # Unquoted names fold to lower case: quoting the folded name keeps the meaning.
            text = '"' + text.lower() + '"' if choice == 1 else _any_case(text, rng)
        elif tok.name == "SCONST" and (value := _literal_value(text)) is not None and choice:
            if choice == 1 and "$q$" not in value:
                text = f"$q${value}$q$"
            elif choice == 2:
                text = _unicode_escaped(value, rng)
        out.append(gap + text)
        prev_end = tok.end + 1
    out.append(sql[prev_end:])
    return "".join(out)


def _parses(sql: str) -> list[Any] | None:
    try:
        return [raw.stmt for raw in parse_sql(sql)]
    except ParseError:
        return None


_IS_QUERY = {sql: isinstance(parse_sql(sql)[0].stmt, _QUERIES) for sql, _ in ATTACKS}
MUTANTS_PER_EXAMPLE = 6  # hypothesis's own cost per example dwarfs one parse and check


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(ATTACKS), st.integers(0, 2**32 - 1))
def test_mutants_of_attacks_are_still_refused(attack: tuple[str, str], seed: int) -> None:
    sql, code = attack
    rng = random.Random(seed)
    for _ in range(MUTANTS_PER_EXAMPLE):
        mutant = _mutate(sql, rng)
        if _IS_QUERY[sql]:  # only a query nests in another
            wrapper = rng.choice((None, *_WRAPPERS))
            mutant = wrapper.format(mutant) if wrapper else mutant
        note(mutant)
        stmts = _parses(mutant)
        if stmts is None:
            continue  # not SQL any more: Postgres would refuse it too
        with pytest.raises(errors.SqlError) as info:
            for stmt in stmts:
                temp_tables.check(stmt, is_resource=is_resource)
        assert info.value.sqlstate == code, (mutant, info.value)


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(ORDINARY), st.integers(0, 2**32 - 1))
def test_mutants_of_ordinary_statements_still_pass(sql: str, seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(MUTANTS_PER_EXAMPLE):
        mutant = _mutate(sql, rng)
        note(mutant)
        stmts = _parses(mutant)
        assert stmts is not None, mutant
        # The same statement, spelled otherwise, and the gate's verdict on it: it passes,
        # as the original does.
        assert [RawStream()(s) for s in stmts] == [RawStream()(s) for s in _parses(sql) or ()]
        assert _verdict(stmts) is None, (mutant, _verdict(stmts))


def _verdict(stmts: Sequence[Any]) -> str | None:
    """The gate's verdict on statements: None when it lets them all through, else the
    SQLSTATE and message of its refusal."""
    try:
        for stmt in stmts:
            temp_tables.check(stmt, is_resource=is_resource)
    except errors.SqlError as exc:
        return f"{exc.sqlstate}: {exc.message}"
    return None


@pytest.mark.parametrize("sql", [
    "CREATE TEMP TABLE github_pr (number int)",
    "CREATE TEMP TABLE web AS SELECT 1 AS query",
    "CREATE TEMPORARY TABLE pg_temp.notion_page (title text)",
    "SELECT 1 AS number INTO TEMP github_pr",
])
def test_a_temporary_table_may_not_take_a_resources_name(sql: str) -> None:
    exc = refusal(sql)
    assert exc.sqlstate == "42P07"
    assert exc.hint is not None and "resource" in exc.hint


def test_a_sessions_temporary_tables_are_read_and_written_as_resources_are() -> None:
    def mine(name: str) -> bool:
        return name == "picks"

    for sql in ("SELECT * FROM picks p JOIN github_pr g ON g.number = p.number",
                "INSERT INTO picks SELECT number FROM github_pr WHERE number = 1",
                "UPDATE picks SET number = 2", "DELETE FROM picks", "TRUNCATE picks",
                "DROP TABLE picks", "DROP TABLE IF EXISTS pg_temp.picks"):
        check(sql, is_temp=mine)
    for sql, code in (("SELECT * FROM picks", "42P01"), ("DROP TABLE picks", "42501"),
                      ("SELECT * FROM public.picks", "42P01")):
        assert refusal(sql).sqlstate == code
    with pytest.raises(errors.SqlError) as info:
        check("SELECT * FROM pg_temp.picks", is_temp=mine)  # the unqualified name only
    assert info.value.sqlstate == "42501"
