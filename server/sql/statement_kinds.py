"""Statement kinds: which the gate lets through, and what the refusal of each other says.

Pure data and messages; the walker (``gate``) decides, this module names.

Rules:
- ``STATEMENT_KINDS`` are the pglast statement classes the gate accepts at the
  top of a statement (after its own checks of each): SELECT (VALUES, set
  operations), INSERT, UPDATE, DELETE, EXPLAIN (not ANALYZE, and of one of
  those four), the transaction statements (not two-phase commit),
  SET/RESET/SHOW, the cursor statements (DECLARE, FETCH and MOVE; CLOSE), and
  what connection pools send between clients: DISCARD, DEALLOCATE, CLOSE and
  UNLISTEN. The engine has a branch that runs each.
- Every other statement is refused by ``refuse_statement``, each kind with its
  own SQLSTATE, message and HINT: DDL, COPY to a file or program, DO, CALL, LOCK, LISTEN/NOTIFY,
  SQL-level PREPARE/EXECUTE, maintenance, roles and privileges,
  ALTER SYSTEM, MERGE. Nothing else nests inside an accepted statement except
  the four query kinds, so the same refusal serves a nested one.
- Messages name the statement as its SQL spells it (``statement_name``).
"""

from __future__ import annotations

from typing import Any, NoReturn

from pglast import ast, enums

from glove_scratchpad import errors

from .allowlist import DISCOVER, POLL_HINT

__all__ = [
    "DDL_PREFIXES",
    "MAINTENANCE_STATEMENTS",
    "PREPARED_HINT",
    "QUERY_KINDS",
    "ROLE_STATEMENTS",
    "STATEMENT_KINDS",
    "STATEMENT_NAMES",
    "refuse_statement",
    "statement_name",
]

# What reads or writes resources, at the top or nested (subqueries, CTE bodies, EXPLAIN).
QUERY_KINDS = (ast.SelectStmt, ast.InsertStmt, ast.UpdateStmt, ast.DeleteStmt)

STATEMENT_KINDS: tuple[type[ast.Node], ...] = (
    *QUERY_KINDS, ast.ExplainStmt, ast.TransactionStmt, ast.VariableSetStmt,
    ast.VariableShowStmt, ast.DiscardStmt, ast.DeallocateStmt, ast.ClosePortalStmt,
    ast.UnlistenStmt, ast.DeclareCursorStmt, ast.FetchStmt,
)

PREPARED_HINT = ("Use your driver's prepared statements (the extended protocol: Parse, then "
                 "Bind and Execute with $1, $2 …), which work here; or send the statement "
                 "itself with its values.")

_DDL_HINT = ("The tables here are the server's resources; use a CTE (WITH name AS (…)) or a "
             "subquery for intermediate results. " + DISCOVER)

STATEMENT_NAMES: dict[str, str] = {
    "CreateStmt": "CREATE TABLE", "IndexStmt": "CREATE INDEX", "ViewStmt": "CREATE VIEW",
    "CommentStmt": "COMMENT ON", "SecLabelStmt": "SECURITY LABEL", "TruncateStmt": "TRUNCATE",
    "RuleStmt": "CREATE RULE", "CreateTrigStmt": "CREATE TRIGGER",
    "CreateSeqStmt": "CREATE SEQUENCE", "AlterSeqStmt": "ALTER SEQUENCE",
    "CreatedbStmt": "CREATE DATABASE", "DropdbStmt": "DROP DATABASE",
    "CompositeTypeStmt": "CREATE TYPE", "CreateEnumStmt": "CREATE TYPE",
    "CreateRangeStmt": "CREATE TYPE", "CreatePLangStmt": "CREATE LANGUAGE",
    "CreateEventTrigStmt": "CREATE EVENT TRIGGER", "AlterEventTrigStmt": "ALTER EVENT TRIGGER",
    "CreateFdwStmt": "CREATE FOREIGN DATA WRAPPER", "AlterFdwStmt": "ALTER FOREIGN DATA WRAPPER",
    "CreateAmStmt": "CREATE ACCESS METHOD", "CreateStatsStmt": "CREATE STATISTICS",
    "AlterStatsStmt": "ALTER STATISTICS", "CreateTableSpaceStmt": "CREATE TABLESPACE",
    "DropTableSpaceStmt": "DROP TABLESPACE", "RenameStmt": "ALTER … RENAME",
    "AlterOwnerStmt": "ALTER … OWNER TO", "AlterObjectSchemaStmt": "ALTER … SET SCHEMA",
    "AlterObjectDependsStmt": "ALTER … DEPENDS ON", "ImportForeignSchemaStmt":
    "IMPORT FOREIGN SCHEMA", "ReplicaIdentityStmt": "ALTER TABLE … REPLICA IDENTITY",
    "AlterTSConfigurationStmt": "ALTER TEXT SEARCH CONFIGURATION",
    "AlterTSDictionaryStmt": "ALTER TEXT SEARCH DICTIONARY",
    "RefreshMatViewStmt": "REFRESH MATERIALIZED VIEW", "CopyStmt": "COPY", "DoStmt": "DO",
    "CallStmt": "CALL", "LockStmt": "LOCK", "ListenStmt": "LISTEN", "NotifyStmt": "NOTIFY",
    "ClusterStmt": "CLUSTER", "ReindexStmt": "REINDEX", "CheckPointStmt": "CHECKPOINT",
    "LoadStmt": "LOAD", "AlterSystemStmt": "ALTER SYSTEM", "GrantStmt": "GRANT",
    "GrantRoleStmt": "GRANT", "CreateRoleStmt": "CREATE ROLE", "AlterRoleStmt": "ALTER ROLE",
    "AlterRoleSetStmt": "ALTER ROLE … SET", "DropRoleStmt": "DROP ROLE",
    "ReassignOwnedStmt": "REASSIGN OWNED", "DropOwnedStmt": "DROP OWNED",
    "AlterDefaultPrivilegesStmt": "ALTER DEFAULT PRIVILEGES", "MergeStmt": "MERGE",
    "DeclareCursorStmt": "DECLARE CURSOR", "FetchStmt": "FETCH",
    "ConstraintsSetStmt": "SET CONSTRAINTS", "AlterDatabaseSetStmt": "ALTER DATABASE … SET",
    "AlterTableMoveAllStmt": "ALTER TABLE … SET TABLESPACE",
    "AlterTableSpaceOptionsStmt": "ALTER TABLESPACE", "DefineStmt": "CREATE",
}
# What the SQL names of statement classes start with: DDL, refused as such.
DDL_PREFIXES = ("Create", "Alter", "Drop", "Define", "Rename", "Comment", "SecLabel",
                "Truncate", "Index", "View", "Rule", "CompositeType", "ImportForeignSchema",
                "ReplicaIdentity", "RefreshMatView")
ROLE_STATEMENTS = frozenset({
    "GrantStmt", "GrantRoleStmt", "CreateRoleStmt", "AlterRoleStmt", "AlterRoleSetStmt",
    "DropRoleStmt", "ReassignOwnedStmt", "DropOwnedStmt", "AlterDefaultPrivilegesStmt",
})
MAINTENANCE_STATEMENTS = frozenset({"VacuumStmt", "ClusterStmt", "ReindexStmt", "CheckPointStmt",
                                    "LoadStmt"})


def _object_word(objtype: Any) -> str:
    return objtype.name.removeprefix("OBJECT_").replace("_", " ") if objtype is not None else ""


def statement_name(node: Any) -> str:
    """The statement as SQL names it: ``DROP TABLE``, ``CREATE MATERIALIZED VIEW``, ``VACUUM``."""
    kind = type(node).__name__
    if isinstance(node, ast.DropStmt):
        return f"DROP {_object_word(node.removeType)}"
    if isinstance(node, ast.AlterTableStmt):
        return f"ALTER {_object_word(node.objtype)}"
    if isinstance(node, ast.CreateTableAsStmt):
        return ("CREATE MATERIALIZED VIEW" if node.objtype == enums.ObjectType.OBJECT_MATVIEW
                else "CREATE TABLE AS")
    if isinstance(node, ast.CreateFunctionStmt):
        return "CREATE PROCEDURE" if node.is_procedure else "CREATE FUNCTION"
    if isinstance(node, ast.DefineStmt):
        return f"CREATE {_object_word(node.kind)}"
    if isinstance(node, ast.VacuumStmt):
        return "VACUUM" if node.is_vacuumcmd else "ANALYZE"
    if kind in STATEMENT_NAMES:
        return STATEMENT_NAMES[kind]
    words = "".join(" " + c if c.isupper() else c for c in kind.removesuffix("Stmt")).split()
    return " ".join(words).upper()


def refuse_statement(node: Any) -> NoReturn:
    """Refuse a statement whose kind is not one of ``STATEMENT_KINDS``."""
    kind = type(node).__name__
    name = statement_name(node)
    if isinstance(node, ast.PrepareStmt):
        raise errors.FeatureNotSupported(
            "SQL-level PREPARE is not supported: statements are not kept by name here",
            hint=PREPARED_HINT)
    if isinstance(node, ast.ExecuteStmt):
        raise errors.FeatureNotSupported(
            "SQL-level EXECUTE is not supported: no statement is prepared in SQL here",
            hint=PREPARED_HINT)
    if isinstance(node, ast.CopyStmt):  # only with a file or program: sql/copy.py
        raise errors.InsufficientPrivilege(
            "COPY to or from a file or program is not allowed",
            hint="Use COPY … TO STDOUT or FROM STDIN (psql's \\copy): the client "
            "holds the file.")
    if isinstance(node, ast.DoStmt | ast.CallStmt):
        raise errors.InsufficientPrivilege(
            f"{name} is not allowed: it runs procedural code the gate cannot check",
            hint="Write it as one SQL statement: CTEs, CASE and subqueries go a long way.")
    if isinstance(node, ast.ListenStmt | ast.NotifyStmt):
        raise errors.FeatureNotSupported("LISTEN and NOTIFY are not supported", hint=POLL_HINT)
    if isinstance(node, ast.LockStmt):
        raise errors.FeatureNotSupported(
            "LOCK is not supported: resources have no locks",
            hint="Drop the LOCK. Inside BEGIN … COMMIT writes are staged, and COMMIT fires "
            "them in order.")
    if isinstance(node, ast.MergeStmt):
        raise errors.FeatureNotSupported(
            "MERGE is not supported", hint="Use INSERT, UPDATE and DELETE on the resource.")
    if isinstance(node, ast.AlterSystemStmt):
        raise errors.InsufficientPrivilege(
            "ALTER SYSTEM is not allowed: the server's configuration is fixed",
            hint="SET a setting for this session instead, where it is allowed.")
    if kind in ROLE_STATEMENTS:
        raise errors.InsufficientPrivilege(
            f"{name} is not allowed: roles and privileges are fixed by the server",
            hint="Which resources you may read and write is set by the server. " + DISCOVER)
    if kind in MAINTENANCE_STATEMENTS:
        raise errors.InsufficientPrivilege(
            f"{name} is not allowed: the server maintains its own database",
            hint="Nothing to do: resources hold no rows between statements.")
    if kind.startswith(DDL_PREFIXES) or kind in ("CreatedbStmt", "DropdbStmt"):
        raise errors.InsufficientPrivilege(
            f"{name} is not allowed: the schema is defined by the server's resources",
            hint=_DDL_HINT)
    raise errors.InsufficientPrivilege(
        f"{name} is not allowed here",
        hint="This database answers SELECT, INSERT, UPDATE, DELETE, EXPLAIN, "
        "BEGIN/COMMIT/ROLLBACK, SET and SHOW. " + DISCOVER)
