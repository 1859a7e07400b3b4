"""Who a statement runs as, answered for the connecting role rather than the
sidecar's agent role: the edits that put the role's name in place of
``current_user`` and its kin, and the role's own answer in place of a
``has_table_privilege`` on a resource.

Rules:
- ``SELECT`` on a resource is held when the role's view shows it and the tool reads;
  ``INSERT``, ``UPDATE`` and ``DELETE`` when the view shows it, the role may write,
  and the tool has that verb. Any other privilege on a resource is not held.
- A call about another role, or a table that is not one of the role's resources, is
  left to the sidecar (a table the view does not show does not exist there).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from glove_scratchpad.names import SERVED_SCHEMA

from ..sql.identity import identity_edits, identity_locations, privilege_calls

if TYPE_CHECKING:
    from ..sql.analysis import Plan
    from .statement import Statement

__all__ = ["asks_who", "who_edits"]

_WRITES = frozenset({"INSERT", "UPDATE", "DELETE"})


def asks_who(plan: Plan) -> bool:
    """Whether the statement's text asks who it runs as (its rewrite is the role's own)."""
    return bool(identity_locations(plan.sql, plan.node)
                or privilege_calls(plan.sql, plan.node))


def who_edits(st: Statement, plan: Plan) -> tuple[tuple[int, int, str], ...]:
    """The text's edits that answer for ``st.user``, in text order."""
    answered = []
    for start, end, role, table, asked in privilege_calls(plan.sql, plan.node):
        held = _held(st, role, table, asked)
        if held is not None:
            answered.append((start, end, "true" if held else "false"))
    named = [e for e in identity_edits(plan.sql, identity_locations(plan.sql, plan.node),
                                       st.user)
             if not any(s <= e[0] < t for s, t, _ in answered)]
    return tuple(sorted(answered + named))


def _held(st: Statement, role: str | None, table: str, asked: tuple[str, ...]
          ) -> bool | None:
    """Whether the role holds any of the privileges asked on a resource; None when
    the sidecar answers (another role, or not a resource of the role's view)."""
    if role is not None and role != st.user:
        return None
    schema, _, name = table.rpartition(".")
    schema, name = schema.strip('"'), name.strip('"')
    served = st.services.schemas.served
    if schema not in ("", served, SERVED_SCHEMA) or name not in st.view.visible:
        return None
    resource = st.services.resources.get(name)
    if resource is None:
        return None
    for privilege in asked:
        verb = privilege.lower()
        if privilege == "SELECT" and resource.resolver("select") is not None:
            return True
        if privilege in _WRITES and st.writes and resource.resolver(verb) is not None:
            return True
    return False
