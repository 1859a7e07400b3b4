"""Bounds on the work one statement may cause, around every resolver call.

Rules:
- Every resolver call goes through ``Guard.call``: at most ``resource_concurrency``
  calls of one resource run at once, each attempt within ``resolver_timeout``
  seconds, and each attempt is recorded in the audit, whatever its outcome. A
  resolver that asks for its ``ctx`` may record what it did on the way (each HTTP
  request of an API's table) with ``ctx.report``, as rows of their own.
- A read's attempt is the call and the reading of its rows (``rows``: an iterator
  is pulled within the attempt, ``pull.py``), so its audit row and its metrics
  carry the outcome of the whole read: a generator that raises part-way, or a
  later page that fails or times out, is a failed attempt, and its rows are
  counted. A read with ``retries`` that fails so is made again from the start.
- A plain resolver runs in a worker thread (a pool of ``worker_threads``), under
  the same slot, timeout and cancellation as an async one, so a slow tool never
  holds up the event loop. A thread that outlives its timeout or cancel keeps its
  slot until it ends: a hung tool cannot take every worker. ``inline`` keeps a
  pure, fast resolver on the loop, where no slot or timeout can act on it.
- A resource's ``rate`` is a token bucket shared by every session: a call over it
  waits for its turn (the statement's timeout bounds the wait); it never fails.
- A read with ``retries`` is made again on ``TransientError`` or a timeout, after
  an exponential backoff with jitter (at least the ``retry_after`` asked for),
  while the statement's deadline allows. A write is never retried here.
- A resolver's error is where a tool's text enters: every configured secret is
  taken out of it (``glove_scratchpad.redaction``) before the audit records it or
  it goes further, for the call and for the lazy read of its rows alike.
- The number of calls a statement will make is checked against ``call_budget``
  before any is made, with the estimate in the error.
- Results are cut at ``row_limit`` rows (with a NOTICE) and refused beyond
  ``max_result_bytes``.
- A write that outlives ``resolver_timeout`` is 08007, not a failure: it started,
  and was abandoned, not undone, so it may have happened.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import inspect
import itertools
import logging
import random
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from glove_scratchpad import errors, metrics, traces
from glove_scratchpad.catalog import Audit
from glove_scratchpad.redaction import redact_error, redact_secrets
from glove_scratchpad.resources import CallContext, TransientError

__all__ = ["Guard", "Limits", "Rows", "TokenBucket"]

log = logging.getLogger(__name__)

RETRY_BASE = 0.1  # seconds: the first backoff; each retry doubles it
RETRY_CAP = 10.0  # seconds: no backoff is longer, however many retries
_WRITES = frozenset({"insert", "update", "delete"})  # verbs whose outcome a timeout leaves unknown

# A read's rows pulled from what its resolver returned, each pull run by the reader given.
Rows = Callable[[Any, Callable[[Any], Awaitable[Any]]], Awaitable[list[Any]]]


@dataclass(frozen=True, slots=True)
class Limits:
    """Server-wide bounds; a role's policy may lower the row limit and timeout."""

    row_limit: int | None = None
    max_result_bytes: int = 256 * 1024 * 1024  # what one result may relay
    call_budget: int = 1000  # resolver calls one statement may make
    resolver_timeout: float = 60.0  # seconds per resolver call
    resource_concurrency: int = 10  # calls of one resource running at once
    statement_timeout: float = 300.0  # seconds; a client's SET can only lower it
    call_row_cap: int = 1_000_000  # rows one call may give; more are cut, with a NOTICE
    # Plain resolvers running at once, over every resource: they wait on remote APIs,
    # so many may; a resource's own share is still resource_concurrency.
    worker_threads: int = 64
    # Kept calls (immutable, or stable with a ttl) materialized as sidecar tables: a call
    # of at least cache_min_rows rows (fewer travel with the statement as cheaply as a
    # table is read) and at most cache_max_rows; cache_bytes of them at most, least
    # recently used out.
    cache_min_rows: int = 500
    cache_max_rows: int = 2_000_000
    cache_bytes: int = 256 * 1024 * 1024
    # A call that is not kept but gave at least spill_min_rows rows reaches the sidecar by
    # binary COPY into a table of its statement's own, cheaper than rows sent with it.
    spill_min_rows: int = 10_000
    # Days the audit and the journal keep a row once it is final; None: for ever.
    retention_days: float | None = None
    # Seconds a session's fired write is laid over its reads of the resource at most,
    # until the tool's rows show it (overlay.py); a resource may set its own; 0: never.
    read_your_writes_s: float = 5.0
    # A statement that takes at least this many seconds is logged as slow (a WARNING
    # event of its own); None: none is.
    slow_statement_s: float | None = None
    log_statement_text: str = "normalized"  # or "none": the log's statement ends
    # The fair share of a sidecar pool (docs/operations.md, "The sidecar pool"): a user
    # holding sidecar_share of a pool's connections takes another only while
    # sidecar_reserve stay free for the other users.
    sidecar_share: float = 0.5
    sidecar_reserve: int = 2
    # Megabytes a session's temporary tables may hold (temp.py); a statement past it fails.
    temp_table_limit_mb: int = 256


class ResolverTimeout(TimeoutError):
    """An attempt that outlasted ``resolver_timeout`` (not a resolver's own TimeoutError)."""


class TokenBucket:
    """At most ``calls`` calls per ``seconds``: a burst of ``calls``, then one every
    ``seconds / calls``. Callers wait their turn, first come first served."""

    def __init__(self, calls: int, seconds: float) -> None:
        self.capacity = float(calls)
        self.interval = seconds / calls
        self.tokens = float(calls)
        self.stamp = time.monotonic()
        self._turn = asyncio.Lock()

    async def take(self) -> float:
        """Take a token, waiting for one if need be; returns the seconds waited."""
        waited = 0.0
        async with self._turn:
            while True:
                now = time.monotonic()
                self.tokens = min(self.capacity, self.tokens + (now - self.stamp) / self.interval)
                self.stamp = now
                if self.tokens >= 1:
                    self.tokens -= 1
                    return waited
                delay = (1 - self.tokens) * self.interval
                await asyncio.sleep(delay)
                waited += delay


class Guard:
    """Concurrency, threads, timeouts, rates, retries and audit around every resolver call."""

    def __init__(self, limits: Limits, audit: Audit) -> None:
        self.limits = limits
        self.audit = audit
        self._slots: dict[str, asyncio.Semaphore] = defaultdict(
            lambda: asyncio.Semaphore(limits.resource_concurrency))
        self._buckets: dict[str, TokenBucket] = {}
        self._threads = ThreadPoolExecutor(limits.worker_threads,
                                           thread_name_prefix="glove-resolver")

    async def call(self, resource: str, verb: str, fn: Callable[..., Any],
                   args: Sequence[Any] = (), *, arguments: Any, user: str, session: int,
                   statement: str, inline: bool = True, retries: int = 0,
                   rate: tuple[int, float] | None = None, deadline: float | None = None,
                   context: CallContext | None = None,
                   rows: tuple[Rows, bool] | None = None,
                   sending: Callable[[], None] | None = None) -> Any:
        """``fn(*args)``, its result awaited if it is awaitable; a plain ``fn`` runs in a
        worker thread unless ``inline``. ``rows``, for a read, pulls the result's rows in
        the same attempt (``pull.pull``: lazily, so that a LIMIT stops it), and whether a
        plain iterator is read on the loop (else in a worker thread, as a plain resolver
        runs), within the resolver timeout.

        ``deadline`` (``time.monotonic()``) is the statement's: no retry waits past
        it. ``context``, if given, is passed as ``ctx=`` with each attempt's deadline.
        ``sending``, if given, is told just before the first attempt, once the rate lets
        it go: a write outside BEGIN is cancelable until then (``commit.fire_one``).
        """
        attempts = retries + 1
        for attempt in itertools.count(1):
            if rate is not None:
                metrics.rate_wait(resource, await self._bucket(resource, rate).take())
            kwargs: dict[str, Any] = {}
            if context is not None:
                ends = time.monotonic() + self.limits.resolver_timeout
                kwargs["ctx"] = replace(
                    context, deadline=ends if deadline is None else min(ends, deadline),
                    report=functools.partial(self._report, resource, user, session,
                                             statement))
            if sending is not None and attempt == 1:
                sending()
            try:
                return await self._attempt(
                    resource, verb, fn, args, kwargs, inline,
                    (user, session, statement, arguments), rows)
            except (TimeoutError, TransientError) as exc:
                delay = _backoff(attempt, getattr(exc, "retry_after", None))
                if attempt >= attempts or (
                        deadline is not None and time.monotonic() + delay >= deadline):
                    raise self._final(resource, verb, exc, attempt) from (
                        None if isinstance(exc, ResolverTimeout) else exc)
                metrics.retry(resource, verb)
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def _report(self, resource: str, user: str, session: int, statement: str, what: str,
                arguments: Any, status: str, ms: float, rows: int | None,
                error: str | None) -> None:
        """What a call did on the way (an HTTP request), as an audit row of its own."""
        self.audit.record((time.time(), user, session, statement, resource, what, arguments,
                           status, ms, rows, error))
        if traces.enabled():
            code = arguments.get("status") if isinstance(arguments, dict) else None
            traces.request(what, ms / 1000, status, code)

    def _bucket(self, resource: str, rate: tuple[int, float]) -> TokenBucket:
        bucket = self._buckets.get(resource)
        if bucket is None:
            bucket = self._buckets[resource] = TokenBucket(*rate)
        return bucket

    def _final(self, resource: str, verb: str, exc: BaseException, attempts: int
               ) -> BaseException:
        """The error of a call that will not be tried again."""
        tries = f" ({attempts} attempts)" if attempts > 1 else ""
        if isinstance(exc, ResolverTimeout) and verb in _WRITES:
            return errors.TransactionResolutionUnknown(
                f'resource "{resource}" {verb} did not answer within '
                f"{self.limits.resolver_timeout:g} s, so the write may have happened",
                hint="It was abandoned while it ran, not undone: read the table to see "
                "whether it took effect before sending it again.", table_name=resource)
        if isinstance(exc, ResolverTimeout):
            return errors.ExternalRoutineError(
                f'resource "{resource}" {verb} timed out after '
                f"{self.limits.resolver_timeout:g} s{tries}",
                hint="The tool did not answer in time; try again, or narrow the call's "
                "arguments.")
        if attempts == 1:
            return exc  # the caller words a resolver's own error
        return errors.ExternalRoutineError(
            redact_secrets(f'resource "{resource}" failed in {verb}{tries}: '
                           f"{type(exc).__name__}: {exc}")[:1000],
            hint="The tool kept failing with an error it calls transient (a rate limit, an "
            "outage): wait, then try again.",
            table_name=resource)

    def _attempt(self, resource: str, verb: str, fn: Callable[..., Any],
                 args: Sequence[Any], kwargs: dict[str, Any], inline: bool,
                 who: tuple[str, int, str, Any], rows: tuple[Rows, bool] | None
                 ) -> Coroutine[Any, Any, Any]:
        """One attempt, in a span of its own when tracing is on (no coroutine of its own
        when it is off)."""
        if not traces.enabled():
            return self._recorded(resource, verb, fn, args, kwargs, inline, who, rows)
        return self._traced(resource, verb, fn, args, kwargs, inline, who, rows)

    async def _traced(self, resource: str, verb: str, fn: Callable[..., Any],
                      args: Sequence[Any], kwargs: dict[str, Any], inline: bool,
                      who: tuple[str, int, str, Any], rows: tuple[Rows, bool] | None) -> Any:
        with traces.call(resource, verb, who[3]) as span:
            return await self._recorded(resource, verb, fn, args, kwargs, inline, who, rows,
                                        span)

    async def _recorded(self, resource: str, verb: str, fn: Callable[..., Any],
                        args: Sequence[Any], kwargs: dict[str, Any], inline: bool,
                        who: tuple[str, int, str, Any], pulled: tuple[Rows, bool] | None,
                        span: Any = None) -> Any:
        """One attempt, recorded in the audit (and the metrics, and ``span``) whatever its
        outcome: a read's once its rows are pulled (``pulled``), or failed."""
        started = time.monotonic()
        status, error, rows = "ok", None, None
        try:
            if inline:
                out = fn(*args, **kwargs)
                if not isinstance(out, list) and inspect.isawaitable(out):
                    async with self._slots[resource]:
                        out = await self._bounded(out)
            else:
                out = await self._in_thread(resource, fn, args, kwargs)
            if pulled is not None:
                rows_of, on_loop = pulled
                out = await rows_of(out, functools.partial(self._read, resource, on_loop))
            if isinstance(out, list | tuple):
                rows = len(out)
            return out
        except ResolverTimeout:
            status, error = "timeout", f"timed out after {self.limits.resolver_timeout:g} s"
            _failed(resource, verb, status, "ResolverTimeout")
            raise
        except asyncio.CancelledError:
            status, error = "canceled", "canceled"
            raise
        except Exception as exc:
            # Where a tool's text enters: no configured secret goes further.
            clean = redact_error(exc)
            status, error = "error", redact_secrets(f"{type(exc).__name__}: {clean}")[:1000]
            _failed(resource, verb, status, type(exc).__name__)
            if clean is exc:
                raise
            raise clean from None
        finally:
            user, session, statement, arguments = who
            seconds = time.monotonic() - started
            # Raw values: the batch write turns them into timestamps and JSON.
            self.audit.record((
                time.time(), user, session, statement, resource, verb, arguments, status,
                seconds * 1000, rows, error,
            ))
            metrics.call(resource, verb, status, seconds, rows)
            traces.finished(span, rows, status)

    async def _in_thread(self, resource: str, fn: Callable[..., Any], args: Sequence[Any],
                         kwargs: dict[str, Any]) -> Any:
        """A plain resolver in a worker thread, holding the resource's slot until the
        thread is done (even when this call stopped waiting for it)."""
        slot = self._slots[resource]
        await slot.acquire()
        loop = asyncio.get_running_loop()
        try:
            work: Future[Any] = self._threads.submit(
                contextvars.copy_context().run, functools.partial(fn, *args, **kwargs))
        except BaseException:
            slot.release()
            raise
        work.add_done_callback(functools.partial(_release, loop, slot))
        out = await self._bounded(asyncio.wrap_future(work))
        if inspect.isawaitable(out):
            out = await self._bounded(out)  # a plain function that gave a coroutine
        return out

    async def _read(self, resource: str, inline: bool, work: Callable[[], Any] | Any) -> Any:
        """Reading the rows of an iterator a resolver returned, under the same rules as the
        call: a plain ``work()`` in a worker thread with the resource's slot (unless
        ``inline``), an awaitable as it is, each within the resolver timeout. It runs
        within the attempt (``_recorded``), which redacts its errors as the call's."""
        if not callable(work):
            return await self._bounded(work)
        if inline:
            return work()
        return await self._in_thread(resource, work, (), {})

    async def read_more(self, resource: str, inline: bool, work: Callable[[], Any] | Any
                        ) -> Any:
        """More rows of an iterator a call returned, read after the call (a cursor's
        FETCH): under the rules of ``_read``; its errors are the caller's to word."""
        return await self._read(resource, inline, work)

    async def _bounded(self, work: Any) -> Any:
        timer = asyncio.timeout(self.limits.resolver_timeout)
        try:
            async with timer:
                return await work
        except TimeoutError:
            if timer.expired():
                raise ResolverTimeout from None
            raise

    def check_budget(self, estimate: int, made: str = "") -> None:
        """54000 past the call budget: ``made`` says what the last one counted was, when
        it was not a resolver call planned (``"upstream requests"``)."""
        if estimate > self.limits.call_budget:
            counted = f"resolver calls and {made}" if made else "resolver calls"
            raise errors.ProgramLimitExceeded(
                f"this statement would make {estimate} {counted}; the budget is "
                f"{self.limits.call_budget} per statement",
                hint="Narrow the IN lists or subqueries that fan out, or split the work "
                "into several statements.")

    def close(self) -> None:
        """Stop taking work; threads still running finish on their own."""
        self._threads.shutdown(wait=False, cancel_futures=True)


def _failed(resource: str, verb: str, status: str, kind: str) -> None:
    """A tool call's failure as an event of the log: the error's kind, not its message
    (which may hold the call's values; the audit has it, for its user)."""
    log.info("tool call failed: %s %s (%s, %s)", resource, verb, status, kind,
                extra={"event": {"event": "tool_error", "resource": resource, "verb": verb,
                                 "status": status, "error": kind}})


def _backoff(attempt: int, retry_after: float | None) -> float:
    """Seconds before attempt ``attempt + 1``: exponential, half of it jitter."""
    ceiling = min(RETRY_CAP, RETRY_BASE * 2 ** (attempt - 1))
    delay = ceiling / 2 + random.uniform(0, ceiling / 2)
    return max(delay, retry_after or 0.0)


def _release(loop: asyncio.AbstractEventLoop, slot: asyncio.Semaphore, _: Future[Any]) -> None:
    with contextlib.suppress(RuntimeError):  # the loop is closed: nothing waits on it
        loop.call_soon_threadsafe(slot.release)
