"""A cursor's reads: a query run whole, or its one call pulled a part at a time.

A ``Cursor`` (``cursors.py``) reads its rows from one of these, a DECLARE's and a
protocol portal's alike (Execute with a row count): ``source`` chooses which.

Rules:
- Lazy only where the query's answer over its rows a part at a time is its answer
  over all of them (``cursor_statements.row_wise``, pure) and the read is one
  reference through one call, to a resource of its own: not a system table,
  pg_cursors, a resource under the session's own writes or kept in a store, nor in
  an EXPLAIN or beside the session's temporary tables. Any other query runs whole
  at its first read, as a SELECT does.
- The call is made once, at the first read, through the guard like any call (its
  audit row says it began); its rows are pulled as reads ask for them
  (``pull.Opened``, ``guard.read_more``: the resource's thread slot, each pull within
  the resolver timeout). So a volatile call is made exactly once however the rows
  are read, and an API is asked for its pages as they are read.
- Each part runs the query on the sidecar over the rows pulled for it, never more
  than ``_PART_ROWS`` of them (no more parameters than a whole read sends before it
  spills its rows into a table).
- The row cap of one call holds over the whole read, and so does the row limit
  when one is given (a portal's read is one statement), with the NOTICEs a whole
  read gives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from glove_scratchpad import errors
from glove_scratchpad.redaction import redact_error
from glove_scratchpad.resources import Bindings
from glove_scratchpad.wire import Param

from ..sql.analysis import Plan, Reference
from ..sql.cursor_statements import row_wise
from . import resolve, sidecar
from .cursor_view import PG_CURSORS
from .guard import ResolverTimeout
from .messages import resolver_failed
from .pull import Opened
from .result import Notice, Result

if TYPE_CHECKING:
    from .statement import Statement

__all__ = ["Lazy", "Source", "Whole", "source"]

_PART_ROWS = 10_000


class Source:
    """A cursor's rows as they are read: ``more(st, n)`` gives about ``n`` more."""

    exhausted = False
    ctx: Statement

    async def more(self, st: Statement, n: int) -> tuple[list[Any], list[Notice]]:
        raise NotImplementedError

    def touched(self) -> list[Any]:
        """What its calls touched so far (``Result.touched``): a FETCH of an untrusted
        resource's rows taints the session as a SELECT of them does."""
        return list(self.ctx.touched.values())

    def end(self) -> None:
        """Nothing more is read (a generator it reads is closed, an async one in a task)."""
        self.exhausted = True

    async def close(self) -> None:
        """Nothing more is read: an async generator it reads is closed before it returns."""
        self.end()


@dataclass(eq=False)
class Whole(Source):
    """A query run whole at the first read, as a SELECT is."""

    plan: Plan
    params: list[Param]
    ctx: Statement
    formats: tuple[int, ...]

    async def more(self, st: Statement, n: int) -> tuple[list[Any], list[Notice]]:
        self.exhausted = True
        self.ctx.request = st.request
        try:
            result = await resolve.read(st, self.plan, self.params, self.ctx, self.formats)
        finally:
            if self.ctx.spilled:
                st.services.kept.discard(self.ctx.spilled)
        return result.data_rows, result.notices


@dataclass(eq=False)
class Lazy(Source):
    """One resource's one call, read a part at a time; each part run as the query."""

    plan: Plan
    params: list[Param]
    ctx: Statement
    formats: tuple[int, ...]
    call: Any  # the one call (``resolve.bindings``), worked out when it was opened
    limit: int | None  # the row limit in force over the whole answer
    opened: Opened | None = None
    pulled: int = 0  # the call's rows pulled so far
    given: int = 0  # the answer's rows given so far
    first: Result | None = None  # the first part's result: its columns

    async def more(self, st: Statement, n: int) -> tuple[list[Any], list[Notice]]:
        ctx = self.ctx
        ctx.request, told = st.request, len(ctx.notices)
        count = n if self.limit is None else min(n, self.limit - self.given)
        # At the row limit, one answer row more says whether the limit cuts the answer.
        limited = self.limit is not None and self.given + n >= self.limit
        want = count + 1 if limited else count
        ref = self.plan.reads[0]
        out: list[Any] = []
        while (len(out) < want and not self.exhausted) or self.first is None:
            raw = await self._pull(st, min(want - len(out), _PART_ROWS))
            rows = ref.resource.validate_rows(raw, self.call.keys, snapshot=False)
            part = await sidecar.run(st, self.plan, {ref.id: rows}, self.params, ctx,
                                     formats=self.formats,
                                     substitute=resolve.functions(st))
            self.first = self.first or part
            out += part.data_rows
        if limited:
            self.end()
            if len(out) > count:
                ctx.notice(Notice(
                    f"result truncated to {self.limit} rows (the row limit)",
                    hint="Add WHERE or LIMIT to read the rows you need, or ORDER BY to "
                    "choose which come first."))
            del out[count:]
        self.given += len(out)
        for touched in ctx.touched.values():
            touched.rows = self.pulled
        return out, ctx.notices[told:]

    async def _pull(self, st: Statement, want: int) -> list[Any]:
        """At most ``want`` more rows of the call; fewer only at its end (or its cap)."""
        if self.exhausted or want <= 0:
            return []
        if self.opened is None:
            self.opened = await self._open(st)
        cap = st.services.limits.call_row_cap
        want = min(want, cap - self.pulled)
        if want <= 0:  # the cap: a whole read cuts the call's rows there too
            if await self._take(st, 1):
                name = self.plan.reads[0].resource.name
                self.ctx.notice(Notice(
                    f'resource "{name}" gave more than {cap} rows in one call; the rest '
                    f"were cut", hint=f"Narrow the call with its keys and filters "
                    f"(\\d+ {name}), or add LIMIT."))
            self.end()
            return []
        rows = await self._take(st, want)
        self.pulled += len(rows)
        if len(rows) < want:
            self.end()
        return rows

    async def _take(self, st: Statement, want: int) -> list[Any]:
        """``want`` rows of the call's answer, read as the guard reads one; a timeout
        worded as a call's, a tool's error redacted."""
        resource = self.plan.reads[0].resource
        assert self.opened is not None
        try:
            return await self.opened.take(want)
        except ResolverTimeout:
            raise errors.ExternalRoutineError(
                f'resource "{resource.name}" select timed out after '
                f"{st.services.limits.resolver_timeout:g} s",
                hint="The tool did not answer in time; try again, or narrow the call's "
                "arguments.") from None
        except errors.SqlError:
            raise
        except Exception as exc:
            raise resolver_failed(resource, "select", redact_error(exc)) from None

    async def _open(self, st: Statement) -> Opened:
        """The call, made now: its answer is read as rows are asked for."""
        resource = self.plan.reads[0].resource
        call = self.call
        shown = call.shown()
        self.ctx.touch(resource.name, "select", shown, called=True,
                       key=call.touch_key(resource.name, "select"))
        out = await resolve.invoke(
            st, resource, "select",
            (Bindings(call.values(), resource.name, call.where, call.limit),), shown, self.ctx)
        return Opened(out, lambda work: st.services.guard.read_more(
            resource.name, resource.on_loop("select"), work))

    def end(self) -> None:
        self.exhausted = True
        if self.opened is not None:
            self.opened.end()

    async def close(self) -> None:
        self.exhausted = True
        if self.opened is not None:
            await self.opened.close()


def _one(st: Statement, plan: Plan) -> Reference | None:
    """The one reference of a read that may be pulled a part at a time, else None."""
    if (len(plan.reads) != 1 or len(plan.references) != 1 or plan.target or plan.rescans
            or plan.sets_config or st.explain is not None
            or (st.temp is not None and st.temp.names) or not row_wise(plan.node)):
        return None
    ref = plan.reads[0]
    if (ref.schema == st.services.schemas.system or ref.resource is PG_CURSORS
            or st.overlay.touches(ref.resource.name)
            or st.services.kept.eligible(ref, st.view.database)):
        return None
    return ref


async def source(st: Statement, plan: Plan, params: list[Param], ctx: Statement,
                 formats: tuple[int, ...], *, whole: bool = True, limit: int | None = None
                 ) -> Source | None:
    """What a cursor over ``plan`` reads: lazily where it may, else whole (None when not
    ``whole``: the caller reads it as it reads any SELECT); its keys checked and its
    call budgeted, nothing called yet. ``limit``: the row limit over its whole answer
    (a portal's, one statement's; a FETCH's rows are cut as each statement's are)."""
    ref = _one(st, plan)
    if ref is None and not whole:
        return None
    resolve.check_keys(plan.reads, others=plan.reads)
    if ref is not None:
        calls = await resolve.bindings(st, ref, params, ctx)
        if len(calls) == 1:
            ctx.planned += 1
            st.services.guard.check_budget(ctx.planned)
            return Lazy(plan, params, ctx, formats, calls[0], limit)
    return Whole(plan, params, ctx, formats) if whole else None
