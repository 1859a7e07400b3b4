"""The transaction statements: BEGIN, COMMIT, ROLLBACK and savepoints, and what ends with them.

Rules:
- BEGIN opens the session's transaction (``transaction.py``); COMMIT fires what it
  staged (``commit.py``); ROLLBACK discards it.
- When a transaction ends, so do its cursors (``cursors.py``): COMMIT keeps the WITH
  HOLD ones, read to their end before the writes fire, as Postgres materializes them
  before it commits; any other end closes them. ROLLBACK TO a savepoint closes the
  cursors declared after it, as Postgres drops them; RELEASE keeps them.
- The settings a transaction's end or ROLLBACK TO restored are reported
  (ParameterStatus).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pglast import ast, enums

from glove_scratchpad import errors

from . import commit, settings
from .cursors import Cursors
from .result import Result
from .session_settings import changes
from .transaction import TxState

if TYPE_CHECKING:
    from .statement import Statement

__all__ = ["transaction"]

_SAVEPOINT_VERBS = {
    enums.TransactionStmtKind.TRANS_STMT_SAVEPOINT: "SAVEPOINT",
    enums.TransactionStmtKind.TRANS_STMT_RELEASE: "RELEASE SAVEPOINT",
    enums.TransactionStmtKind.TRANS_STMT_ROLLBACK_TO: "ROLLBACK TO SAVEPOINT",
}


async def transaction(st: Statement, node: ast.TransactionStmt, cursors: Cursors) -> Result:
    """A transaction statement, and the settings its end or ROLLBACK TO restored."""
    before = dict(st.settings)
    result = await _step(st, node, cursors)
    changed = changes(before, st.settings)
    if changed:
        result.parameters.update(await settings.reported(st, changed))
    return result


async def _step(st: Statement, node: ast.TransactionStmt, cursors: Cursors) -> Result:
    kind = node.kind
    assert kind is not None  # the parser sets every enum field
    k = enums.TransactionStmtKind
    tx = st.tx
    if kind in (k.TRANS_STMT_BEGIN, k.TRANS_STMT_START):
        return tx.begin(settings.read_only_option(
            node.options, st.settings.get("default_transaction_read_only") == "on"),
            settings.isolation_option(node.options))
    if kind == k.TRANS_STMT_COMMIT:
        if tx.state is TxState.OPEN:
            try:
                await cursors.materialize(st)  # the WITH HOLD ones, read to their end
            except errors.SqlError:
                tx.fail()
                raise
        taken = tx.take_for_commit()
        if isinstance(taken, Result):
            await cursors.transaction_ended(committed=taken.command_tag == "COMMIT")
            return taken
        await cursors.transaction_ended(committed=True)
        return await commit.commit(st, taken)
    if kind == k.TRANS_STMT_ROLLBACK:
        await cursors.transaction_ended(committed=False)
        return tx.rollback()
    if kind in _SAVEPOINT_VERBS:
        result = tx.savepoint(_SAVEPOINT_VERBS[kind], node.savepoint_name or "")
        if kind != k.TRANS_STMT_SAVEPOINT:  # ROLLBACK TO keeps the savepoint it names
            back = kind == k.TRANS_STMT_ROLLBACK_TO
            await cursors.savepoint_ended(st, len(tx.savepoints) - back, rolled_back=back)
        return result
    raise errors.InternalError(
        f"transaction statement {kind.name} passed the gate but has no branch that runs it",
        hint="Report this to the server's operator.")
