"""Portals read in parts: Execute with a row count, PortalSuspended, the next Execute.

pgjdbc's fetch size, node-postgres' ``Cursor`` and asyncpg's cursors read a large
result this way. This module answers each Execute of a portal and keeps its portals;
``connection`` hands it the messages, and what a read pulls lazily is the engine's:
a cursor's (``engine/portal_parts.py``, ``portal_parts.read``), as a DECLARE's is read.

Rules:
- A portal runs its statement at its first Execute, which asks the session for that
  Execute's rows alone (``Request.fetch``). A read that may be answered in parts
  pulls its call's rows as later Executes ask for them (a ``Rest``); any other runs
  whole, and its rows are paged from memory (``Portal.fetch``).
- An Execute that fills its count ends with PortalSuspended, without looking ahead,
  as Postgres does; the next one goes on from there; the one that finds the end ends
  with CommandComplete, which counts the rows of that Execute alone.
- A portal lives until Close, a Bind or simple Query that replaces it (the unnamed
  one), the end of its transaction (Sync outside a transaction block), or the
  session's end: ``Portals`` ends its call then (its generator closed).
- A later Execute is cancelled (CancelRequest, the client gone) and timed as a
  statement is. Its error fails the transaction and ends the portal's call; outside a
  block the portal ends too, as with Postgres's implicit transaction. In a failed
  block, an Execute of a portal is 25P02; of a portal not there, 34000 (``portals``).
"""

from __future__ import annotations

from typing import Any

from glove_scratchpad import errors
from glove_scratchpad.wire import (
    CommandComplete,
    EmptyQueryResponse,
    ParameterStatus,
    PortalSuspended,
)

from ..engine.portal_parts import Rest
from . import portals as p
from .sink import nothing

__all__ = ["Portals", "execute"]


class Portals(dict[str, p.Portal]):
    """A connection's portals by name: one let go (replaced, removed, cleared) ends the
    call its rows are still pulled from."""

    def __setitem__(self, name: str, portal: p.Portal) -> None:
        old = self.get(name)
        super().__setitem__(name, portal)
        if old is not None and old is not portal:
            _end(old)

    def __delitem__(self, name: str) -> None:
        _end(self[name])
        super().__delitem__(name)

    def pop(self, name: str, default: Any = None) -> Any:
        portal = super().pop(name, default)
        if isinstance(portal, p.Portal):
            _end(portal)
        return portal

    def clear(self) -> None:
        for portal in self.values():
            _end(portal)
        super().clear()


def _end(portal: p.Portal) -> None:
    rest, portal.rest = portal.rest, None
    if rest is not None:
        rest.close()


async def execute(h: Any, portal: p.Portal, max_rows: int, pending: p.Pending) -> None:
    """Execute: ``portal``'s next ``max_rows`` rows (<= 0: all that are left), sent by
    ``h`` (the ``ClientHandler``), and the message that ends them."""
    stmt = portal.statement.stmt
    if stmt is None:
        h.send(EmptyQueryResponse())
        return
    if portal.result is None:
        if pending.request is None:
            pending.request = h.session.new_request()
        request = pending.request
        request.fetch = max(max_rows, 0)
        try:
            result = await h.run(stmt, portal.params, request, portal.formats,
                                 nothing if max_rows <= 0 else None)
        finally:
            request.fetch = 0
        portal.result = result
        p.forget(result.released, h.statements, h.portals)
        h.send_notices(result.notices)
        for name, value in result.parameters.items():
            h.send(ParameterStatus(name, value))
        portal.rest = getattr(result, "rest", None)
        if portal.rest is not None:  # its first part: ``max_rows`` rows
            await _part(h, portal, result.data_rows, max_rows)
            return
    elif h.tx_status() == "E":  # as Postgres: after the portal's name is found
        raise errors.InFailedSqlTransaction(
            "current transaction is aborted, commands ignored until end of transaction block",
            hint="ROLLBACK, then read the rows again.")
    elif portal.rest is not None:
        await _next(h, portal, portal.rest, max_rows)
        return
    rows, end = portal.fetch(max_rows)
    h.send_rows(rows)
    await h.maybe_flush()
    if end is not None:
        h.send(end)


async def _next(h: Any, portal: p.Portal, rest: Rest, max_rows: int) -> None:
    """A later Execute of a portal read in parts: its rows pulled now."""
    try:
        rows = await h.cancellable(rest.fetch(max_rows))
    except BaseException:
        _end(portal)
        portal.done = True
        name = next((n for n, held in h.portals.items() if held is portal), None)
        if name is not None and h.tx_status() == "I":  # no block: it ends with the error
            h.portals.pop(name)
        raise
    h.send_notices(rest.news())
    await _part(h, portal, rows, max_rows)


async def _part(h: Any, portal: p.Portal, rows: list[Any], max_rows: int) -> None:
    h.send_rows(rows)
    await h.maybe_flush()
    if max_rows > 0 and len(rows) == max_rows:
        h.send(PortalSuspended())
        return
    _end(portal)
    portal.done = True
    h.send(CommandComplete(f"SELECT {len(rows)}"))
