"""A protocol portal's read in parts: an Execute with a row count over a SELECT, read
through a ``Cursor`` (``cursors.py``) so that its tool calls are made as its rows are read.

The connection asks a portal's first Execute for its rows alone (``Request.fetch``);
``read`` answers it, and what reads the rest at the portal's next Executes is the
result's ``Rest`` (``server/net/suspended.py`` keeps it with the portal).

Rules:
- A read that may be answered in parts (``cursor_reads.source``: one resource read
  through one call, row by row) keeps its call open and pulls only the rows each
  Execute needs; any other runs whole (``resolve.read``), and the portal pages it
  from memory.
- The parts are one statement: its row limit (the server's or the role's) holds over
  all of them, its timeout bounds each later Execute as it bounds a statement's run,
  and its NOTICEs go out once, with the part that gave them.
- A portal's cursor scans forward only and keeps only the rows ahead of it (NO
  SCROLL), never more than ``max_result_bytes`` for one Execute.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from glove_scratchpad.wire import Param

from ..sql.analysis import Plan
from ..sql.cursor_statements import FETCH_ALL, Declared
from . import cursor_reads, resolve
from .cursors import Cursor
from .result import Notice, Result
from .result_limits import row_cut
from .timeouts import timed_out

if TYPE_CHECKING:
    from .statement import Statement

__all__ = ["Partial", "Rest", "read"]


@dataclass(slots=True)
class Partial(Result):
    """A portal's first Execute of a read in parts: its rows, and what reads the rest
    (None: they are all here)."""

    rest: Rest | None = None


@dataclass(eq=False)
class Rest:
    """The rest of a portal's read in parts: the cursor its later Executes read, under
    the statement that opened it (its timeout, its NOTICEs)."""

    st: Statement
    cursor: Cursor
    told: int = 0  # the statement's NOTICEs sent so far (``news``)

    @property
    def done(self) -> bool:
        """Nothing is left to give."""
        c = self.cursor
        return c.at_end or (c.source.exhausted and c.count <= c.pos)

    async def fetch(self, count: int) -> list[Any]:
        """The next ``count`` rows (<= 0: all that are left); fewer only at the end.
        Under the statement timeout, as a statement's run is."""
        try:
            async with asyncio.timeout(self.st.timeout):
                return await self.cursor.next(self.st, count if count > 0 else FETCH_ALL)
        except TimeoutError:
            raise timed_out() from None

    def news(self) -> list[Notice]:
        """The NOTICEs given since the last asked for (the first part's are its result's)."""
        notices = self.cursor.source.ctx.notices
        told, self.told = self.told, len(notices)
        return notices[told:]

    def close(self) -> None:
        self.cursor.end()


async def read(st: Statement, plan: Plan, params: list[Param], ctx: Statement,
               formats: Sequence[int] = ()) -> Result:
    """A SELECT: the first ``st.request.fetch`` rows (a protocol portal's first Execute
    with a row count) of a read that may be answered in parts, a ``Partial``; else the
    whole read."""
    source = (await cursor_reads.source(
        st, plan, params, ctx, tuple(formats), whole=False,
        limit=row_cut(st.services.limits, st.policy.row_limit))
        if st.request.fetch else None)
    if source is None:
        return await resolve.read(st, plan, params, ctx, formats)
    assert isinstance(source, cursor_reads.Lazy)
    cursor = Cursor("", ctx.sql, Declared("", False, False, False, plan.node), (), [],
                    source, tx_declared=False)
    rest = Rest(st, cursor)
    try:
        rows = await cursor.next(st, st.request.fetch)
    except BaseException:
        rest.close()
        raise
    first = source.first
    assert first is not None  # the first read ran the statement once at least
    result = Partial(command_tag=f"SELECT {len(rows)}", columns=first.columns,
                     fields=first.fields, data_rows=rows, notices=ctx.notices,
                     touched=source.touched())
    if rest.done:
        rest.close()
    else:
        result.rest = rest
    rest.news()  # the first part's go with its result
    return result
