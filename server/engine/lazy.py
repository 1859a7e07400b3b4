"""A read whose tool call is pulled as a portal fetches its rows (Execute with a row count).

The first Execute of a portal with a row count runs the statement with that count on
its ``Request`` (``fetch``). A read that may be answered in parts then makes its call
but pulls only the rows that Execute asks for; the ``Rest`` on its result pulls the
next ones at each later Execute. Any other read runs whole (``resolve.read``), and the
portal pages its rows.

Rules:
- In parts only when each row of the answer is one row of the call's own, whatever
  the rows around it: one resource, the only item of FROM, one call, neither kept nor
  under the session's own writes, and no aggregate, GROUP BY, ORDER BY, DISTINCT,
  window, LIMIT or OFFSET, set operation, WITH, locking clause, subquery or function
  call. Then the answers of its parts, one after another, are the answer of the whole.
- The call is made once, at the first Execute, through the guard like any call (its
  audit row says it began); its rows are pulled as Executes ask for them, each pull
  within the resolver timeout, as the guard reads an iterator. So a volatile call is
  made exactly once however the rows are fetched, and an API is asked for its pages as
  they are read.
- Each part runs the statement on the sidecar over the rows pulled for it; rows that
  the WHERE let through past an Execute's count wait for the next one.
- The row cap of one call and the row limit hold over the whole read, with the NOTICEs
  a whole read gives.
- ``close`` ends the call (its generator closed): the portal's end does it.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pglast import ast, enums
from pydantic import BaseModel

from glove_scratchpad import errors
from glove_scratchpad.background import hold
from glove_scratchpad.redaction import redact_error
from glove_scratchpad.resources import Bindings
from glove_scratchpad.wire import Param

from ..sql.analysis import Plan, Reference
from ..sql.nodes import walk
from . import resolve, sidecar
from .context import StatementContext
from .messages import resolver_failed
from .result import Notice, Result
from .shown import row_cut
from .timeouts import timed_out

if TYPE_CHECKING:
    from .statement import Statement

__all__ = ["Partial", "Rest", "read"]

# The clauses that make a row of the answer depend on other rows, or cut the answer.
_WHOLE = ("groupClause", "havingClause", "sortClause", "distinctClause", "windowClause",
          "limitCount", "limitOffset", "withClause", "lockingClause", "valuesLists",
          "intoClause", "larg", "rarg")
_CLOSING: set[asyncio.Task[Any]] = set()  # async generators being closed
# The most rows one part sends the sidecar: an Execute of more (or of all) runs several
# parts, so that no statement carries more rows as parameters than a whole read would
# before it spills them into a table (``Limits.spill_min_rows``).
_PART_ROWS = 10_000


@dataclass(slots=True)
class Partial(Result):
    """A read's first part: its result, and what pulls the rest (None: it is all here)."""

    rest: Rest | None = None


async def read(st: Statement, plan: Plan, params: list[Param], ctx: StatementContext,
               formats: Sequence[int] = ()) -> Result:
    """A SELECT: the first ``st.request.fetch`` rows of a read that may be answered in
    parts (a ``Partial``), else the whole read (``resolve.read``)."""
    ref = _single(st, plan) if st.request.fetch else None
    if ref is None:
        return await resolve.read(st, plan, params, ctx, formats)
    resolve.check_keys(plan.reads)
    calls = await resolve.bindings(st, ref, params, ctx)
    if len(calls) != 1:
        return await resolve.read(st, plan, params, ctx, formats)
    call = calls[0]
    resource = ref.resource
    ctx.planned += 1
    st.services.guard.check_budget(ctx.planned)
    shown = call.shown()
    ctx.touch(resource.name, "select", shown, called=True,
              key=call.touch_key(resource.name, "select"))
    out = await resolve.invoke(st, resource, "select",
                               (Bindings(call.values(), resource.name, call.where, call.limit),),
                               shown, ctx)
    rest = Rest(st, plan, ref, call.keys, params, ctx, tuple(formats), out)
    try:
        rows = await rest.fetch(st.request.fetch)
    except BaseException:
        rest.close()
        raise
    first = rest.first
    assert first is not None  # the first fetch ran the statement once at least
    result = Partial(command_tag=f"SELECT {len(rows)}", columns=first.columns,
                     fields=first.fields, data_rows=rows, notices=ctx.notices,
                     touched=list(ctx.touched.values()))
    if rest.done:
        rest.close()
    else:
        result.rest = rest
    rest.news()  # the first part's go with its result
    return result


def _single(st: Statement, plan: Plan) -> Reference | None:
    """The one reference of a read that may be answered in parts, else None."""
    node = plan.node
    if (not isinstance(node, ast.SelectStmt) or len(plan.reads) != 1 or plan.target
            or plan.rescans or plan.sets_config or st.explain is not None
            or (st.temp is not None and st.temp.names)
            or node.op not in (None, enums.SetOperation.SETOP_NONE)
            or any(getattr(node, name, None) for name in _WHOLE)
            or len(node.fromClause or ()) != 1
            or not isinstance((node.fromClause or (None,))[0], ast.RangeVar)):
        return None
    ref = plan.reads[0]
    if (ref.schema == st.services.schemas.system or st.overlay.touches(ref.resource.name)
            or st.services.kept.eligible(ref, st.view.database)):
        return None
    for part in (node.targetList, node.whereClause):
        if any(isinstance(n, ast.FuncCall | ast.SubLink | ast.RangeFunction)
               for n in walk(part)):
            return None
    return ref


class Rest:
    """The rows of a read not sent yet: those pulled and run already, and the call's
    iterator, pulled at each ``fetch``."""

    def __init__(self, st: Statement, plan: Plan, ref: Reference, keys: dict[str, Any],
                 params: list[Param], ctx: StatementContext, formats: tuple[int, ...],
                 out: Any) -> None:
        self.st, self.plan, self.ref, self.keys = st, plan, ref, keys
        self.params, self.ctx, self.formats = params, ctx, formats
        self.source, self.is_async = _source(out)
        self.waiting: list[Any] = []  # DataRows run already, past an Execute's count
        self.pulled = 0  # the call's rows pulled so far
        self.given = 0  # rows given to the client so far
        self.exhausted = self.source is None
        self.first: Result | None = None  # the first part's result: its columns
        self.limit = row_cut(st.services.limits, st.policy.row_limit)
        self.cap = st.services.limits.call_row_cap
        self.told = 0  # the statement's NOTICEs sent so far (``news``)
        self.abandoned = False  # closed: a pull still running in its thread closes it

    def news(self) -> list[Notice]:
        """The NOTICEs given since the last asked for (the first part's are its result's)."""
        notices = self.ctx.notices
        told, self.told = self.told, len(notices)
        return notices[told:]

    @property
    def done(self) -> bool:
        """Nothing is left to give."""
        return self.exhausted and not self.waiting

    async def fetch(self, count: int) -> list[Any]:
        """The next ``count`` rows of the answer (<= 0: all that are left); fewer only
        at its end. Under the statement timeout, as a statement's run is."""
        try:
            async with asyncio.timeout(self.st.timeout):
                return await self._fetch(count)
        except TimeoutError:
            raise timed_out() from None

    async def _fetch(self, count: int) -> list[Any]:
        if count <= 0:
            count = self.cap + 1
        # At the row limit, one answer row more says whether the limit cuts the answer.
        limited = self.limit is not None and self.given + count >= self.limit
        if self.limit is not None:
            count = min(count, self.limit - self.given)
        want = count + 1 if limited else count
        out = self.waiting[:want]
        del self.waiting[:want]
        while (len(out) < want and not self.exhausted) or self.first is None:
            raw = await self._pull(min(want - len(out), _PART_ROWS))
            rows = self.ref.resource.validate_rows(raw, self.keys, snapshot=False)
            part = await sidecar.run(self.st, self.plan, {self.ref.id: rows}, self.params,
                                     self.ctx, formats=self.formats,
                                     substitute=resolve.functions(self.st))
            if self.first is None:
                self.first = part
            taken = want - len(out)
            out += part.data_rows[:taken]
            self.waiting += part.data_rows[taken:]
        if limited:
            self._cut_at_limit(len(out) > count)
            del out[count:]
        self.given += len(out)
        for touched in self.ctx.touched.values():
            touched.rows = self.pulled
        return out

    def _cut_at_limit(self, cut: bool) -> None:
        """The row limit is reached: nothing more is pulled, and, when it ``cut`` the
        answer, the NOTICE of a whole read."""
        self.close()
        if cut:
            self.ctx.notice(Notice(
                f"result truncated to {self.limit} rows (the row limit)",
                hint="Add WHERE or LIMIT to read the rows you need, or ORDER BY to choose "
                "which come first."))

    async def _pull(self, want: int) -> list[Any]:
        """At most ``want`` more rows of the call; fewer only at its end (or its cap)."""
        if self.exhausted or want <= 0:
            return []
        want = min(want, self.cap - self.pulled)
        if want <= 0:  # the cap: a whole read cuts the call's rows there too
            extra = await self._take(1)
            if extra:
                name = self.ref.resource.name
                self.ctx.notice(Notice(
                    f'resource "{name}" gave more than {self.cap} rows in one call; the '
                    f"rest were cut", hint=f"Narrow the call with its keys and filters "
                    f"(\\d+ {name}), or add LIMIT."))
            self.close()
            self.exhausted = True
            return []
        rows = await self._take(want)
        self.pulled += len(rows)
        if len(rows) < want:
            self.exhausted = True
            self.close()
        return rows

    async def _take(self, want: int) -> list[Any]:
        """``want`` rows of the iterator, as the guard reads one: on the loop for an
        async one or an ``inline`` resource, else in a worker thread; within the resolver
        timeout; an error the tool's, redacted."""
        resource = self.ref.resource
        try:
            async with asyncio.timeout(self.st.services.limits.resolver_timeout):
                if self.is_async:
                    return await _take_async(self.source, want)
                if resource.on_loop("select"):
                    return _take_sync(self.source, want)
                return await asyncio.to_thread(self._take_in_thread, self.source, want)
        except TimeoutError:
            raise errors.ExternalRoutineError(
                f'resource "{resource.name}" select timed out after '
                f"{self.st.services.limits.resolver_timeout:g} s",
                hint="The tool did not answer in time; try again, or narrow the call's "
                "arguments.") from None
        except (errors.SqlError, asyncio.CancelledError):
            raise
        except Exception as exc:
            raise resolver_failed(resource, "select", redact_error(exc)) from None

    def _take_in_thread(self, source: Any, want: int) -> list[Any]:
        try:
            return _take_sync(source, want)
        finally:
            # Closed while this pull ran (a timeout, a cancel): the generator ends here.
            if self.abandoned and inspect.isgenerator(source):
                with contextlib.suppress(ValueError):
                    source.close()

    def close(self) -> None:
        """End the call: a generator is closed (an async one in a task of its own)."""
        source, self.source = self.source, None
        self.exhausted = True
        self.waiting.clear()
        if source is None:
            return
        if self.is_async:
            close = getattr(source, "aclose", None)
            if close is not None:
                hold(_quietly(close()), _CLOSING)
        elif inspect.isgenerator(source):
            self.abandoned = True  # before: a pull in its thread may end meanwhile
            with contextlib.suppress(ValueError):  # still running there: it closes it
                source.close()


def _source(out: Any) -> tuple[Any, bool]:
    """A resolver's answer as an iterator, and whether it is an async one."""
    if out is None:
        return None, False
    if isinstance(out, BaseModel | dict):
        return iter([out]), False
    if hasattr(out, "__aiter__"):
        return aiter(out), True
    if not hasattr(out, "__iter__"):
        raise errors.ExternalRoutineError(
            f"a select resolver returned {type(out).__name__}, not rows",
            hint="A select resolver returns a list, an iterator or generator, or an async "
            "one, of pydantic models or dicts.")
    return iter(out), False


def _take_sync(it: Any, want: int) -> list[Any]:
    rows: list[Any] = []
    for row in it:
        rows.append(row)
        if len(rows) >= want:
            break
    return rows


async def _take_async(it: Any, want: int) -> list[Any]:
    rows: list[Any] = []
    while len(rows) < want:
        try:
            rows.append(await anext(it))
        except StopAsyncIteration:
            break
    return rows


async def _quietly(work: Any) -> None:
    with contextlib.suppress(Exception):  # a generator's error at its close: not wanted
        await work

