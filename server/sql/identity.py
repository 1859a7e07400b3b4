"""Where a statement asks who it runs as: ``current_user``, ``session_user``,
``current_role`` and ``user``, and ``has_table_privilege``. No I/O.

The sidecar runs every statement as the server's least-privilege agent role, so
these would answer for it. The connecting role's name is put in the identity
functions' places (``identity_edits``), as Postgres would answer them for it; a
``has_table_privilege`` of constant arguments is found (``privilege_calls``) for the
engine to answer from what the role may read and write.
"""

from __future__ import annotations

from typing import Any

from pglast import ast, parser
from pglast.enums import SQLValueFunctionOp
from pglast.visitors import Visitor

from glove_scratchpad.names import quote_literal

from .spans import Spans

__all__ = ["PrivilegeCall", "identity_edits", "identity_locations", "privilege_calls"]

# (start, end) of the call in the text, the role it names (None: the session's), the
# table as written, and the privileges asked (upper case, as listed).
PrivilegeCall = tuple[int, int, str | None, str, tuple[str, ...]]

_WHO = frozenset({SQLValueFunctionOp.SVFOP_CURRENT_USER, SQLValueFunctionOp.SVFOP_SESSION_USER,
                  SQLValueFunctionOp.SVFOP_CURRENT_ROLE, SQLValueFunctionOp.SVFOP_USER})
_WORDS = ("current_user", "session_user", "current_role", "user")


class _Found(Visitor):
    def __init__(self) -> None:
        self.found: list[int] = []
        self.calls: list[tuple[int, list[Any]]] = []

    def visit_SQLValueFunction(self, _ancestors: Any, node: Any) -> None:
        if _asks_who(node):
            self.found.append(int(node.location))

    def visit_FuncCall(self, _ancestors: Any, node: Any) -> None:
        name = [getattr(n, "sval", None) for n in node.funcname or ()]
        if name in (["has_table_privilege"], ["pg_catalog", "has_table_privilege"]):
            self.calls.append((int(node.location), list(node.args or ())))


def _asks_who(node: Any) -> bool:
    """Whether a node is ``current_user``, ``session_user``, ``current_role`` or ``user``."""
    return isinstance(node, ast.SQLValueFunction) and node.op is not None and \
        SQLValueFunctionOp(int(node.op)) in _WHO


def _text(node: Any) -> str | None:
    """A string constant's value (None: anything else)."""
    if isinstance(node, ast.A_Const) and isinstance(node.val, ast.String):
        return str(node.val.sval)
    return None


def privilege_calls(sql: str, node: Any) -> tuple[PrivilegeCall, ...]:
    """The statement's ``has_table_privilege`` calls whose table and privilege are
    string constants, and whose role, if named, is a constant or ``current_user``."""
    if "has_table_privilege" not in sql.lower():
        return ()
    seen = _Found()
    seen(node)
    out = []
    tokens = parser.scan(sql)
    for location, args in seen.calls:
        role: str | None = None
        if len(args) == 3:
            first = args[0]
            if _asks_who(first):
                role = None
            elif (role := _text(first)) is None:
                continue
            args = args[1:]
        table, wanted = (_text(a) for a in args) if len(args) == 2 else (None, None)
        end = _closing(tokens, location)
        if table is None or wanted is None or end is None:
            continue
        asked = tuple(p.strip().upper().removesuffix(" WITH GRANT OPTION").strip()
                      for p in wanted.split(","))
        out.append((location, end, role, table, asked))
    return tuple(out)


def _closing(tokens: Any, location: int) -> int | None:
    """The end of the call that starts at ``location``: past its closing parenthesis."""
    depth = 0
    for tok in tokens:
        if tok.start < location:
            continue
        if tok.name == "ASCII_40":
            depth += 1
        elif tok.name == "ASCII_41":
            depth -= 1
            if depth == 0:
                return int(tok.end) + 1
    return None


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
