"""Where a statement asks who it runs as: ``current_user``, ``session_user``,
``current_role`` and ``user``. No I/O.

The sidecar runs every statement as the server's least-privilege agent role, so
these SQL-standard functions would answer its name. The connecting role's name is
put in their places (``identity_edits``), as Postgres would answer them for it.
"""

from __future__ import annotations

from typing import Any

from pglast import ast
from pglast.enums import SQLValueFunctionOp
from pglast.visitors import Visitor

from glove_scratchpad.names import quote_literal

from .spans import Spans

__all__ = ["identity_edits", "identity_locations"]

_WHO = frozenset({SQLValueFunctionOp.SVFOP_CURRENT_USER, SQLValueFunctionOp.SVFOP_SESSION_USER,
                  SQLValueFunctionOp.SVFOP_CURRENT_ROLE, SQLValueFunctionOp.SVFOP_USER})
_WORDS = ("current_user", "session_user", "current_role", "user")


class _Found(Visitor):  # type: ignore[misc]
    def __init__(self) -> None:
        self.found: list[int] = []

    def visit_SQLValueFunction(self, _ancestors: Any, node: ast.SQLValueFunction) -> None:
        if SQLValueFunctionOp(node.op) in _WHO:
            self.found.append(node.location)


def identity_locations(sql: str, node: Any) -> tuple[int, ...]:
    """The locations of the statement's calls of the identity functions, in text order."""
    if not any(w in sql.lower() for w in _WORDS):  # most texts: no walk
        return ()
    seen = _Found()
    seen(node)
    return tuple(sorted(seen.found))


def identity_edits(sql: str, locations: tuple[int, ...], user: str
                   ) -> tuple[tuple[int, int, str], ...]:
    """Each identity function's span, and the role's name as a ``name`` literal."""
    if not locations:
        return ()
    spans = Spans(sql)
    literal = f"{quote_literal(user)}::name"
    return tuple((start, end, literal)
                 for start, end in (spans.name_span(loc) for loc in locations))
