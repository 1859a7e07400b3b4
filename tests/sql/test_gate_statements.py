"""The gate alone judges statement kinds: what it accepts is ``gate.STATEMENT_KINDS``,
and what it refuses gets a real SQLSTATE and a HINT naming the next step. Pure:
parse trees only, no server."""

from __future__ import annotations

import pytest
from pglast import ast, parse_sql

from glove_scratchpad import errors
from glove_scratchpad.server.sql import gate

from .gate_samples import ACCEPTED, is_function, is_resource


def judge(sql: str) -> errors.SqlError | None:
    """The gate's refusal of ``sql``, or None when it passes."""
    try:
        for raw in parse_sql(sql):
            gate.check(raw.stmt, is_resource=is_resource, is_function=is_function)
    except errors.SqlError as exc:
        return exc
    return None


def test_statement_kinds_are_public_and_exact() -> None:
    assert set(gate.STATEMENT_KINDS) == {
        ast.SelectStmt, ast.InsertStmt, ast.UpdateStmt, ast.DeleteStmt, ast.ExplainStmt,
        ast.TransactionStmt, ast.VariableSetStmt, ast.VariableShowStmt, ast.DiscardStmt,
        ast.DeallocateStmt, ast.ClosePortalStmt, ast.UnlistenStmt, ast.DeclareCursorStmt,
        ast.FetchStmt,
    }
    assert ast.PrepareStmt not in gate.STATEMENT_KINDS
    assert ast.ExecuteStmt not in gate.STATEMENT_KINDS
    assert "STATEMENT_KINDS" in gate.__all__


@pytest.mark.parametrize("kind", list(ACCEPTED), ids=lambda k: k.__name__)
def test_each_statement_kind_has_an_accepted_sample(kind: type[ast.Node]) -> None:
    sql = ACCEPTED[kind]
    assert type(parse_sql(sql)[0].stmt) is kind
    assert kind in gate.STATEMENT_KINDS
    assert judge(sql) is None


_STATEMENTS = sorted(
    (cls for name, cls in vars(ast).items()
     if name.endswith("Stmt") and isinstance(cls, type) and issubclass(cls, ast.Node)
     and cls is not ast.RawStmt),
    key=lambda cls: cls.__name__)


@pytest.mark.parametrize("kind", _STATEMENTS, ids=lambda k: k.__name__)
def test_every_other_statement_kind_is_refused(kind: type[ast.Node]) -> None:
    """Any statement node pglast can build, even empty, is accepted only by its kind."""
    if kind in gate.STATEMENT_KINDS:
        return
    with pytest.raises(errors.SqlError) as info:
        gate.check(kind(), is_resource=is_resource)
    exc = info.value
    assert exc.sqlstate in ("42501", "0A000"), exc.message
    assert type(exc) is errors.error_class(exc.sqlstate)
    # its HINT names the next step for statements of its family, not only that there is one
    assert _next_step(kind.__name__) in (exc.hint or ""), exc.hint


PREPARED = "prepared statements (the extended protocol"

# The next step a refused statement kind's HINT names, by its family; any other kind is
# DDL, whose next step is a CTE or a subquery for intermediate results.
_NEXT_STEPS: dict[str, tuple[str, ...]] = {
    "Which resources you may read and write is set by the server": (
        "AlterDefaultPrivilegesStmt", "AlterRoleSetStmt", "AlterRoleStmt", "CreateRoleStmt",
        "DropOwnedStmt", "DropRoleStmt", "GrantRoleStmt", "GrantStmt", "ReassignOwnedStmt"),
    "SET a setting for this session instead": ("AlterSystemStmt",),
    "Write it as one SQL statement: CTEs, CASE and subqueries": ("CallStmt", "DoStmt"),
    "Nothing to do: resources hold no rows between statements": (
        "CheckPointStmt", "ClusterStmt", "LoadStmt", "ReindexStmt", "VacuumStmt"),
    "answers SELECT, INSERT, UPDATE, DELETE, EXPLAIN, BEGIN/COMMIT/ROLLBACK, SET and SHOW": (
        "ConstraintsSetStmt", "PLAssignStmt", "ReturnStmt", "SetOperationStmt"),
    "COPY resource TO STDOUT, or COPY (SELECT …)": ("CopyStmt",),
    "Page with LIMIT and OFFSET in a plain SELECT": ("DeclareCursorStmt", "FetchStmt"),
    PREPARED: ("ExecuteStmt", "PrepareStmt"),
    "Poll a resource instead: run the SELECT again": ("ListenStmt", "NotifyStmt"),
    "Drop the LOCK": ("LockStmt",),
    "Use INSERT, UPDATE and DELETE on the resource": ("MergeStmt",),
}
_DDL_STEP = "use a CTE (WITH name AS (…)) or a subquery for intermediate results"


def _next_step(kind: str) -> str:
    return next((words for words, kinds in _NEXT_STEPS.items() if kind in kinds), _DDL_STEP)

# (statement, SQLSTATE, the start of its message, words its HINT must name)
REFUSALS = [
    ("PREPARE p (int) AS SELECT * FROM github_pr WHERE number = $1", "0A000",
     "SQL-level PREPARE is not supported", (PREPARED, "send the statement itself")),
    ("PREPARE p AS SELECT 1", "0A000", "SQL-level PREPARE is not supported", (PREPARED,)),
    ("EXECUTE p (1)", "0A000", "SQL-level EXECUTE is not supported", (PREPARED,)),
    ("EXECUTE p", "0A000", "SQL-level EXECUTE is not supported", (PREPARED,)),
    ("EXPLAIN EXECUTE p (1)", "0A000", "SQL-level EXECUTE is not supported", (PREPARED,)),
    ("PREPARE TRANSACTION 'x'", "0A000", "PREPARE TRANSACTION is not supported",
     ("COMMIT", "ROLLBACK")),
    ("SELECT * FROM github_pr WHERE number = 1 FOR UPDATE", "0A000",
     "SELECT … FOR UPDATE/SHARE is not supported", ("Drop the FOR UPDATE/SHARE", "staged")),
    ("SELECT * FROM github_pr g WHERE number = 1 FOR NO KEY UPDATE OF g NOWAIT", "0A000",
     "SELECT … FOR UPDATE/SHARE is not supported", ("Drop the FOR UPDATE/SHARE", "staged")),
    ("SELECT 1 WHERE EXISTS (SELECT 1 FROM github_pr WHERE number = 1 FOR KEY SHARE)", "0A000",
     "SELECT … FOR UPDATE/SHARE is not supported", ("Drop the FOR UPDATE/SHARE", "staged")),
    ("LISTEN jobs", "0A000", "LISTEN and NOTIFY are not supported", ("Poll a resource",
                                                                     "SELECT again")),
    ("NOTIFY jobs, 'x'", "0A000", "LISTEN and NOTIFY are not supported", ("Poll a resource",
                                                                          "SELECT again")),
    ("SELECT pg_notify('jobs', 'x')", "0A000", "function pg_notify() is not allowed",
     ("Poll a resource", "SELECT again")),
]


@pytest.mark.parametrize(("sql", "code", "message", "hint_words"), REFUSALS,
                         ids=[r[0][:50] for r in REFUSALS])
def test_refusal_has_its_sqlstate_and_a_next_step(sql: str, code: str, message: str,
                                                  hint_words: tuple[str, ...]) -> None:
    exc = judge(sql)
    assert exc is not None, sql
    assert (exc.sqlstate, exc.message[:len(message)]) == (code, message)
    assert type(exc) is errors.error_class(code)
    for words in hint_words:
        assert words in (exc.hint or ""), exc.hint


def test_prepare_is_refused_whatever_it_prepares() -> None:
    """Refused as PREPARE before its body is judged: a harmless body changes nothing."""
    for body in ("SELECT 1", "SELECT * FROM pg_authid", "DELETE FROM github_pr WHERE number = 1"):
        exc = judge(f"PREPARE p AS {body}")
        assert exc is not None and exc.sqlstate == "0A000", body
