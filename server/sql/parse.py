"""Parsing, cached by SQL text: one statement text in, its pglast trees out. No I/O.

Rules:
- A parse error is a 42601 with the position in the client's text.
- A text with several statements is cut into one ``ParsedStatement`` each, with
  its own text (positions relative to it) and where it starts in the whole.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pglast import ast, enums, parse_sql
from pglast.parser import ParseError

from glove_scratchpad import errors

from .statement_kinds import statement_name

__all__ = ["PARSE_CACHE_SIZE", "ParsedStatement", "command_kind", "is_script", "parse"]

PARSE_CACHE_SIZE = 4096  # distinct SQL texts whose parse trees are kept


@dataclass(frozen=True, slots=True)
class ParsedStatement:
    sql: str
    node: Any
    offset: int = 0  # where ``sql`` starts in the query string it came from

    @property
    def commits(self) -> bool:
        """Whether it is COMMIT (or END), which a cancel does not stop."""
        return (isinstance(self.node, ast.TransactionStmt)
                and self.node.kind == enums.TransactionStmtKind.TRANS_STMT_COMMIT)


@functools.lru_cache(maxsize=PARSE_CACHE_SIZE)
def parse(sql: str) -> tuple[ParsedStatement, ...]:
    """The statements of a SQL text, each with its own text (positions relative to it)."""
    try:
        raw = parse_sql(sql)
    except ParseError as exc:
        message, index = exc.args[0], exc.args[1] if len(exc.args) > 1 else None
        raise errors.SyntaxError(
            message,
            position=index + 1 if isinstance(index, int) else None,
            hint="Check the statement against PostgreSQL's grammar.",
        ) from None
    if len(raw) == 1:
        return (ParsedStatement(sql, raw[0].stmt),)
    out = []
    for stmt in raw:
        start = stmt.stmt_location or 0
        end = start + stmt.stmt_len if stmt.stmt_len else len(sql)
        chunk = sql[start:end]
        text = chunk.strip().rstrip(";")
        offset = start + len(chunk) - len(chunk.lstrip())
        out.append(ParsedStatement(text, parse_sql(text)[0].stmt, offset))
    return tuple(out)


def is_script(statements: Sequence[ParsedStatement]) -> bool:
    """BEGIN …; COMMIT/ROLLBACK: the one form several statements may take in one call."""
    k = enums.TransactionStmtKind
    first, last = statements[0].node, statements[-1].node
    return (
        isinstance(first, ast.TransactionStmt)
        and first.kind in (k.TRANS_STMT_BEGIN, k.TRANS_STMT_START)
        and isinstance(last, ast.TransactionStmt)
        and last.kind in (k.TRANS_STMT_COMMIT, k.TRANS_STMT_ROLLBACK)
    )


_TRANSACTION_TAGS = {"TRANS_STMT_BEGIN": "BEGIN", "TRANS_STMT_START": "BEGIN",
                     "TRANS_STMT_COMMIT": "COMMIT", "TRANS_STMT_ROLLBACK": "ROLLBACK",
                     "TRANS_STMT_SAVEPOINT": "SAVEPOINT", "TRANS_STMT_RELEASE": "RELEASE",
                     "TRANS_STMT_ROLLBACK_TO": "ROLLBACK"}


def command_kind(node: Any) -> str:
    """The statement's kind as its command tag names it: ``BEGIN``, ``COMMIT``, ``SET``,
    ``SHOW``, ``SELECT``, … (a bounded set: a metric's label)."""
    if isinstance(node, ast.TransactionStmt):
        return _TRANSACTION_TAGS.get(getattr(node.kind, "name", ""), "TRANSACTION")
    if isinstance(node, ast.VariableSetStmt):
        return "RESET" if node.kind is not None and node.kind.name.startswith("VAR_RESET") \
            else "SET"
    if isinstance(node, ast.VariableShowStmt):
        return "SHOW"
    return statement_name(node)
