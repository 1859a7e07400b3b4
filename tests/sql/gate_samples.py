"""Sample statements for the gate, one per accepted statement kind and one per refusal.

``ACCEPTED`` maps each of ``gate.STATEMENT_KINDS`` to one statement of that kind
that the gate lets through. The engine's tests can send each over the wire (in
a fresh session, with writes allowed) and assert that it reaches a branch that
runs it: no accepted kind may end in "… is not allowed here".

``REFUSED`` maps each refusal the gate makes (a statement kind, a clause, a
relation, a function family, a setting rule) to a statement that triggers it,
with the SQLSTATE it gets. The engine drops its own checks of these and can
assert, over the wire, that each still arrives with that SQLSTATE and a HINT.

``EXTRA_ACCEPTED`` are further accepted statements that reach the gate's other
accepting branches; ``LATER_ACCEPTED`` are accepted before their parameter values
are known (``values_later``). The resources these assume are those of
``tests/security/corpus.py`` (``github_pr``, ``web``, ``notion_page``, and
``scratchpad.staged``), and one served function, ``fn.echo``.
"""

from __future__ import annotations

from dataclasses import dataclass

from pglast import ast

from glove_scratchpad.catalog import FN_SCHEMA

from ..security.corpus import RESOURCES

PRIV = "42501"  # insufficient_privilege
UNSUPPORTED = "0A000"  # feature_not_supported
NO_TABLE = "42P01"  # undefined_table
NO_FUNCTION = "42883"  # undefined_function


def is_resource(schema: str | None, name: str) -> bool:
    return (schema or "public", name) in RESOURCES


def is_function(schema: str, name: str) -> bool:
    return (schema, name) == (FN_SCHEMA, "echo")


@dataclass(frozen=True)
class Refused:
    """A statement the gate refuses with ``code``, given the parameter values ``params``."""

    sql: str
    code: str
    params: tuple[str | bytes | None, ...] | None = None
    values_later: bool = False  # judged before the parameter values are known (Describe)


ACCEPTED: dict[type[ast.Node], str] = {
    ast.SelectStmt: "SELECT number, title FROM github_pr WHERE number = 1",
    ast.InsertStmt: "INSERT INTO github_pr (number, title) VALUES (1, 'x')",
    ast.UpdateStmt: "UPDATE github_pr SET title = 'y' WHERE number = 1",
    ast.DeleteStmt: "DELETE FROM github_pr WHERE number = 1",
    ast.ExplainStmt: "EXPLAIN SELECT title FROM github_pr WHERE number = 1",
    ast.TransactionStmt: "BEGIN",
    ast.VariableSetStmt: "SET statement_timeout = '5s'",
    ast.VariableShowStmt: "SHOW TimeZone",
    ast.DiscardStmt: "DISCARD ALL",
    ast.DeallocateStmt: "DEALLOCATE ALL",
    ast.ClosePortalStmt: "CLOSE ALL",
    ast.UnlistenStmt: "UNLISTEN *",
    ast.DeclareCursorStmt: "DECLARE c CURSOR WITH HOLD FOR SELECT title FROM github_pr "
                           "WHERE number = 1",
    ast.FetchStmt: "FETCH ALL FROM c",
}

EXTRA_ACCEPTED: list[str] = [
    "SELECT fn.echo(1)",
    "SELECT echo FROM fn.echo('x') echo",
    "SELECT information_schema._pg_expandarray(ARRAY[1, 2])",
    "SELECT * FROM github_pr TABLESAMPLE BERNOULLI (50) WHERE number = 1",
    "SELECT (aclexplode(relacl)).privilege_type FROM pg_class",
    "SET search_path = public, scratchpad",
    "SELECT set_config('search_path', 'public', false)",
    "SELECT set_config('TimeZone', 'UTC', true)",
    "SELECT set_config(NULL, 'x', false)",
    "SELECT current_setting('sort_mem')",
    "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
    "RESET ALL",
    "RESET search_path",
    "COMMIT",
    "SET TIME ZONE INTERVAL '-08:00' HOUR TO MINUTE",
    "SELECT set_config('standard_conforming_strings', true::text, false)",
    "SELECT s.setting FROM pg_settings s WHERE 'work_mem' = s.name LIMIT 1",
    "SELECT scratchpad.restage(17)",
    "SELECT scratchpad.restage($1::bigint) AS restaged",
    "SELECT scratchpad.restage(17, force => true)",
    "SELECT scratchpad.restage($1, force => $2::boolean)",
    "SELECT scratchpad.restage(17, false)",
    "SELECT scratchpad.refresh('web')",
    "SELECT scratchpad.approve(12, 'looks right')",
    "SELECT scratchpad.approve($1::bigint, $2)",
    "SELECT scratchpad.deny(12, NULL)",
    "SELECT scratchpad.deny(12)",
    "SELECT scratchpad.refresh($1)",
    "SELECT * FROM scratchpad.search('who starred this repo')",
    "SELECT s.name, r.keys FROM scratchpad.search($1, 3) s JOIN scratchpad.resources r "
    "USING (name)",
    "SELECT pg_backend_pid()",
    "SELECT pg_catalog.pg_cancel_backend(42) AS sent",
    "SELECT pg_cancel_backend($1::integer)",
    "COPY (SELECT number FROM github_pr WHERE number = 1) TO STDOUT (FORMAT csv, HEADER)",
    "COPY github_pr (number, title) TO STDOUT WITH BINARY",
    "COPY github_pr FROM STDIN (FORMAT csv, FORCE_NULL (title))",
]

# Accepted before their parameter values are known (``values_later``, at Describe); each
# is judged again with the values.
LATER_ACCEPTED: list[str] = [
    "SELECT current_setting($1)",
    "SELECT set_config($1, $2, false)",
    "SELECT set_config('search_path', $1::text, false)",
]

REFUSED: dict[str, Refused] = {
    # statement kinds (statement_kinds.refuse_statement)
    "PREPARE": Refused("PREPARE p (int) AS SELECT * FROM github_pr WHERE number = $1",
                       UNSUPPORTED),
    "EXECUTE": Refused("EXECUTE p (1)", UNSUPPORTED),
    "EXPLAIN EXECUTE": Refused("EXPLAIN EXECUTE p (1)", UNSUPPORTED),
    "COPY option": Refused("COPY github_pr TO STDOUT (FREEZE)", UNSUPPORTED),
    "COPY of a DELETE": Refused("COPY (DELETE FROM github_pr RETURNING *) TO STDOUT",
                                UNSUPPORTED),
    "COPY FROM not a resource": Refused("COPY pg_class FROM STDIN", PRIV),
    "COPY a file": Refused("COPY github_pr TO '/tmp/x'", PRIV),
    "DO": Refused("DO $$ BEGIN END $$", PRIV),
    "LISTEN": Refused("LISTEN channel", UNSUPPORTED),
    "NOTIFY": Refused("NOTIFY channel, 'x'", UNSUPPORTED),
    "LOCK": Refused("LOCK github_pr", UNSUPPORTED),
    "cursor over a catalog": Refused("DECLARE c CURSOR FOR SELECT * FROM pg_authid", PRIV),
    "WHERE CURRENT OF": Refused("DELETE FROM github_pr WHERE CURRENT OF c", UNSUPPORTED),
    "cursor over a write": Refused("DECLARE c CURSOR FOR WITH d AS (DELETE FROM github_pr "
                                   "WHERE number = 1 RETURNING *) SELECT * FROM d",
                                   UNSUPPORTED),
    "MERGE": Refused("MERGE INTO github_pr g USING web w ON true WHEN MATCHED THEN DELETE",
                     UNSUPPORTED),
    "MERGE in WITH": Refused("WITH m AS (MERGE INTO github_pr g USING web w ON true "
                             "WHEN MATCHED THEN DELETE RETURNING g.*) SELECT * FROM m",
                             UNSUPPORTED),
    "ALTER SYSTEM": Refused("ALTER SYSTEM SET work_mem = '1GB'", PRIV),
    "roles": Refused("GRANT SELECT ON github_pr TO PUBLIC", PRIV),
    "maintenance": Refused("VACUUM github_pr", PRIV),
    "DDL": Refused("DROP TABLE github_pr", PRIV),
    "other statement": Refused("SET CONSTRAINTS ALL DEFERRED", PRIV),
    # clauses of accepted kinds (gate)
    "PREPARE TRANSACTION": Refused("PREPARE TRANSACTION 'x'", UNSUPPORTED),
    "COMMIT PREPARED": Refused("COMMIT PREPARED 'x'", UNSUPPORTED),
    "SELECT INTO": Refused("SELECT * INTO t FROM github_pr WHERE number = 1", PRIV),
    "FOR UPDATE": Refused("SELECT * FROM github_pr WHERE number = 1 FOR UPDATE", UNSUPPORTED),
    "ON CONFLICT": Refused("INSERT INTO github_pr (number, title) VALUES (1, 'x') "
                           "ON CONFLICT DO NOTHING", UNSUPPORTED),
    "FOR SHARE nested": Refused(
        "SELECT * FROM (SELECT * FROM github_pr WHERE number = 1 FOR SHARE) s", UNSUPPORTED),
    "tablesample method": Refused("SELECT * FROM github_pr TABLESAMPLE evil (1)", NO_FUNCTION),
    # relations (gate, allowlist)
    "cross-database relation": Refused("SELECT * FROM db.public.github_pr", UNSUPPORTED),
    "catalog relation": Refused("SELECT * FROM pg_authid", PRIV),
    "qualified catalog relation": Refused("SELECT * FROM pg_catalog.pg_stat_activity", PRIV),
    "pg_ schema relation": Refused("SELECT * FROM pg_toast.pg_toast_1260", PRIV),
    "pg_settings": Refused("SELECT * FROM pg_settings", PRIV),
    "pg_settings, a qualified column": Refused(
        "SELECT pg_catalog.pg_settings.setting FROM pg_settings WHERE name = 'work_mem'", PRIV),
    "pg_settings, another relation's column": Refused(
        "SELECT x.setting FROM pg_settings WHERE name = 'work_mem'", PRIV),
    "pg_settings, ordered by an expression": Refused(
        "SELECT setting FROM pg_settings WHERE name = 'work_mem' ORDER BY setting::int", PRIV),
    "pg_settings, a LIMIT not literal": Refused(
        "SELECT setting FROM pg_settings WHERE name = 'work_mem' LIMIT $1", PRIV, ("1",)),
    "pg_settings, = ANY": Refused(
        "SELECT setting FROM pg_settings WHERE name = ANY ('{work_mem}')", PRIV),
    "pg_settings, another column": Refused(
        "SELECT name FROM pg_settings WHERE setting = 'x'", PRIV),
    "information_schema view": Refused("SELECT * FROM information_schema.user_mappings", PRIV),
    "undefined relation": Refused("SELECT * FROM nope", NO_TABLE),
    "system view without its schema": Refused("SELECT * FROM staged", NO_TABLE),
    "undefined qualified relation": Refused("SELECT * FROM public.nope", NO_TABLE),
    "write to a catalog": Refused("DELETE FROM pg_class", PRIV),
    "write to a non-resource": Refused("INSERT INTO nope VALUES (1)", NO_TABLE),
    "write to another database": Refused("DELETE FROM db.public.github_pr WHERE number = 1",
                                         UNSUPPORTED),
    # functions (gate, allowlist)
    "cross-database function": Refused("SELECT db.pg_catalog.lower('x')", UNSUPPORTED),
    "undefined function": Refused("SELECT nope()", NO_FUNCTION),
    "function in another schema": Refused("SELECT public.lower('x')", NO_FUNCTION),
    "served function unqualified": Refused("SELECT echo(1)", NO_FUNCTION),
    "served function undefined": Refused(f"SELECT {FN_SCHEMA}.nope(1)", NO_FUNCTION),
    "sequences": Refused("SELECT nextval('s')", UNSUPPORTED),
    "advisory locks": Refused("SELECT pg_advisory_lock(1)", UNSUPPORTED),
    "transaction ids": Refused("SELECT txid_current()", UNSUPPORTED),
    "large objects": Refused("SELECT lo_import('/etc/passwd')", UNSUPPORTED),
    "sleep": Refused("SELECT pg_sleep(1)", UNSUPPORTED),
    "SQL from text": Refused("SELECT query_to_xml('select 1', true, true, '')", PRIV),
    "other databases": Refused("SELECT dblink('host=x', 'select 1')", PRIV),
    "notify function": Refused("SELECT pg_notify('c', 'x')", UNSUPPORTED),
    "server files": Refused("SELECT pg_read_file('/etc/passwd')", PRIV),
    "administration": Refused("SELECT pg_terminate_backend(1)", PRIV),
    "attribute notation": Refused("SELECT w.set_config FROM web w WHERE query = 'x'", PRIV),
    "attribute notation pg_": Refused("SELECT (w).pg_nope FROM web w WHERE query = 'x'", PRIV),
    "restage not alone": Refused("SELECT scratchpad.restage(1) FROM web WHERE query = 'x'",
                                 UNSUPPORTED),
    "restage of an expression": Refused("SELECT scratchpad.restage(1 + 1)", UNSUPPORTED),
    "EXPLAIN restage": Refused("EXPLAIN SELECT scratchpad.restage(1)", UNSUPPORTED),
    "restage forced by a number": Refused("SELECT scratchpad.restage(1, force => 1)",
                                          UNSUPPORTED),
    "restage forced by another name": Refused("SELECT scratchpad.restage(1, nope => true)",
                                              UNSUPPORTED),
    "refresh of a number": Refused("SELECT scratchpad.refresh(1)", UNSUPPORTED),
    "approve with a number comment": Refused("SELECT scratchpad.approve(1, 2)", UNSUPPORTED),
    "deny of an expression": Refused("SELECT scratchpad.deny(1 + 1, 'x')", UNSUPPORTED),
    "pg_backend_pid with an argument": Refused("SELECT pg_backend_pid(1)", NO_FUNCTION),
    "pg_cancel_backend of text": Refused("SELECT pg_cancel_backend('x')", UNSUPPORTED),
    "pg_backend_pid not alone": Refused("SELECT pg_backend_pid() + 1", UNSUPPORTED),
    # settings (gate, setting_rules)
    "SET protected": Refused("SET work_mem = '1GB'", PRIV),
    "SET alias of protected": Refused("SET sort_mem = '1GB'", PRIV),
    "RESET protected": Refused("RESET role", PRIV),
    "SET one-way": Refused("SET search_path = pg_temp", PRIV),
    "SET TRANSACTION SNAPSHOT": Refused("SET TRANSACTION SNAPSHOT '00000003-1'", UNSUPPORTED),
    "SHOW ALL": Refused("SHOW ALL", PRIV),
    "SHOW secret": Refused("SHOW data_directory", PRIV),
    "current_setting secret": Refused("SELECT current_setting('config_file')", PRIV),
    "setting name not literal": Refused("SELECT set_config(lower('ROLE'), 'x', false)", PRIV),
    "set_config protected": Refused("SELECT set_config('role', 'postgres', false)", PRIV),
    "set_config one-way": Refused("SELECT set_config('search_path', 'pg_temp', false)", PRIV),
    "set_config one-way not literal": Refused(
        "SELECT set_config('search_path', current_user, false)", PRIV),
    "set_config one-way, a number": Refused("SELECT set_config('search_path', 1.5::text, false)",
                                            PRIV),
    "set_config statement_timeout": Refused(
        "SELECT set_config('statement_timeout', '0', false)", UNSUPPORTED),
    "set_config client_encoding": Refused("SELECT set_config('client_encoding', 'UTF8', false)",
                                          UNSUPPORTED),
    "set_config default_transaction_read_only": Refused(
        "SELECT set_config('default_transaction_read_only', 'on', false)", UNSUPPORTED),
    "set_config transaction_read_only": Refused(
        "SELECT set_config('transaction_read_only', 'on', true)", UNSUPPORTED),
    "set_config transaction_isolation": Refused(
        "SELECT set_config('transaction_isolation', 'serializable', true)", UNSUPPORTED),
    "set_config default_transaction_isolation": Refused(
        "SELECT set_config('default_transaction_isolation', 'serializable', false)",
        UNSUPPORTED),
    "set_config transaction_deferrable": Refused(
        "SELECT set_config('transaction_deferrable', 'on', true)", UNSUPPORTED),
    "set_config one-way value as a binary parameter": Refused(
        "SELECT set_config('search_path', $1, false)", PRIV, (b"pg_temp",)),
    "set_config session setting, value later": Refused(
        "SELECT set_config('statement_timeout', $1, false)", UNSUPPORTED, values_later=True),
    "set_config protected, value later": Refused(
        "SELECT set_config('work_mem', $1, false)", PRIV, values_later=True),
}
