"""The server's own functions, each a statement of its own (``allowlist.SYSTEM_FUNCTIONS``):
``SELECT scratchpad.restage(txid)``, ``refresh('table')``, ``approve(id, 'comment')`` and
``deny(id, 'reason')``, each run by the room whose job it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from glove_scratchpad import errors

from ..sql.system_calls import DECISION_FUNCTIONS
from . import approval_calls
from . import restage as restaging
from .cache import system_call_name, system_call_text
from .result import Result

if TYPE_CHECKING:
    from .statement import Statement

__all__ = ["approval_rows", "run_system_call"]


async def run_system_call(st: Statement, call: Any, params: list[Any]) -> Result:
    """One system call the gate let through alone."""
    name = system_call_name(call)
    if name == "refresh":
        return await _refresh(st, system_call_text(call, params))
    if name in DECISION_FUNCTIONS:
        return await approval_calls.decide(st, call, params)
    return await restaging.restage(st, call, params)


async def approval_rows(st: Statement) -> list[dict[str, Any]]:
    """``scratchpad.approvals`` as the statement's role sees it."""
    return await approval_calls.rows(st)


async def _refresh(st: Statement, name: str) -> Result:
    """``SELECT scratchpad.refresh('resource')``: a resource this session sees."""
    if st.lookup(None, name) is None:
        raise errors.UndefinedTable(
            f'resource "{name}" does not exist',
            hint=f"SELECT resource FROM {st.services.schemas.system}.cache lists the "
            "kept calls.")
    return await st.services.kept.refresh(name, st.services.invalidate)
