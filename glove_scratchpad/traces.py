"""OpenTelemetry traces: a span per statement, a child span per tool call.

Rules:
- The OpenTelemetry API is a dependency; the SDK and the OTLP exporter are the
  ``otel`` extra (``pip install glove-scratchpad[otel]``). Off unless
  ``enable(endpoint)`` is called (``--otlp-endpoint``): each function here then
  returns at once.
- A statement's span is named by its kind (``SELECT``, ``COMMIT``, …) and carries
  ``db.system = postgresql``, the statement normalized by Postgres' own rules
  (constants become ``$n``: no value is ever an attribute), the user and the
  session. Its parent is the ``traceparent`` the client set (``SET
  glove.traceparent = '00-…'``), so the statement joins the agent's own trace.
- A tool call's span is its child: the resource, the verb, the arguments' names
  (never their values), the rows and the outcome. Each request the call makes is a
  child of that: an HTTP API's with its method and status, never its URL; an MCP
  server's (``mcp tools/call``) with its method and the tool's name, never the
  arguments.
- The client's traceparent may also ride in ``application_name`` (the convention of
  drivers that can set nothing else): a W3C traceparent as the whole value, or as
  its last word (Postgres cuts the value at 63 bytes: 8 are left before the
  traceparent's 55). ``glove.traceparent`` wins when both are set.
"""

from __future__ import annotations

import contextlib
import functools
import re
import time
from collections.abc import Iterator
from typing import Any

__all__ = ["TRACEPARENT", "call", "enable", "enabled", "finished", "mcp_request", "normalized",
           "request", "statement", "traceparent"]

TRACEPARENT = "glove.traceparent"  # the setting a client puts its W3C traceparent in

_tracer: Any = None
# version-traceid-parentid-flags, lowercase hex (W3C Trace Context, version 00's shape).
_TRACEPARENT = re.compile(r"(?:^|\s)([0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2})\s*$")


def enable(endpoint: str, service: str = "glove-scratchpad") -> None:
    """Export spans to the OTLP/HTTP ``endpoint`` (``…/v1/traces``), in batches."""
    global _tracer
    if _tracer is not None:
        return
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise ValueError(
            "--otlp-endpoint needs the OpenTelemetry SDK and exporter: pip install "
            f"'glove-scratchpad[otel]' ({exc.name} is missing)") from None
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    _tracer = provider.get_tracer("glove_scratchpad")


def enabled() -> bool:
    return _tracer is not None


def normalized(sql: str) -> str:
    """The text with every constant a ``$n`` (Postgres' own rules): no value is in it,
    so the log's statement ends carry it too."""
    return _normalized(sql)


@functools.lru_cache(maxsize=4096)
def _normalized(sql: str) -> str:
    """The text with every constant a ``$n``, once per text (a parse costs more than the
    rest of a span)."""
    from pglast.parser import normalize

    try:
        return str(normalize(sql))
    except Exception:  # a text that does not parse names no value either way
        return ""


def traceparent(settings: Any) -> str | None:
    """The parent a session's settings name: ``glove.traceparent``, else a traceparent
    that ends ``application_name``."""
    value = settings.get(TRACEPARENT)
    if value:
        return str(value)
    match = _TRACEPARENT.search(str(settings.get("application_name") or ""))
    return match.group(1) if match else None


@contextlib.contextmanager
def statement(kind: str, sql: str, user: str, session: int, traceparent: str | None
              ) -> Iterator[Any]:
    """The span of one statement, current while it runs (None when tracing is off)."""
    tracer = _tracer
    if tracer is None:
        yield None
        return
    from opentelemetry.propagate import extract
    from opentelemetry.trace import Status, StatusCode

    parent = extract({"traceparent": traceparent}) if traceparent else None
    # No exception is recorded: an error's message may hold a value. Its SQLSTATE is
    # the span's status.
    with tracer.start_as_current_span(kind, context=parent, kind=_client_kind(),
                                      record_exception=False, set_status_on_exception=False,
                                      attributes={
                                          "db.system": "postgresql",
                                          "db.statement": _normalized(sql),
                                          "db.operation": kind, "db.user": user,
                                          "glove.session": session}) as span:
        try:
            yield span
        except BaseException as exc:
            code = getattr(exc, "sqlstate", None) or type(exc).__name__
            span.set_attribute("db.response.status_code", code)
            span.set_status(Status(StatusCode.ERROR, code))
            raise


def _client_kind() -> Any:
    from opentelemetry.trace import SpanKind

    return SpanKind.SERVER


@contextlib.contextmanager
def call(resource: str, verb: str, arguments: Any) -> Iterator[Any]:
    """The span of one tool call, a child of the statement's (None when tracing is off)."""
    tracer = _tracer
    if tracer is None:
        yield None
        return
    names = sorted(str(k) for k in arguments) if isinstance(arguments, dict) else []
    with tracer.start_as_current_span(f"{resource} {verb}", record_exception=False,
                                      set_status_on_exception=False, attributes={
                                          "glove.resource": resource, "glove.verb": verb,
                                          "glove.arguments": names}) as span:
        yield span


def finished(span: Any, rows: int | None, status: str) -> None:
    """Record a call's rows and outcome on its span."""
    if span is None:
        return
    from opentelemetry.trace import Status, StatusCode

    if rows is not None:
        span.set_attribute("glove.rows", rows)
    span.set_attribute("glove.status", status)
    if status != "ok":
        span.set_status(Status(StatusCode.ERROR, status))


def request(what: str, seconds: float, status: str, code: int | None) -> None:
    """One request a tool call made (an HTTP API's: ``http GET``), as a child of the
    current span, ending now: its method and status, never its URL (which holds values)."""
    tracer = _tracer
    if tracer is None:
        return
    from opentelemetry.trace import Status, StatusCode

    end = time.time_ns()
    span = tracer.start_span(what, start_time=end - int(seconds * 1e9))
    method = what.split(" ", 1)[1] if " " in what else what
    span.set_attribute("http.request.method", method)
    span.set_attribute("glove.status", status)
    if code is not None:
        span.set_attribute("http.response.status_code", int(code))
    if status != "ok":
        span.set_status(Status(StatusCode.ERROR, status))
    span.end(end_time=end)


@contextlib.contextmanager
def mcp_request(method: str, tool: str) -> Iterator[None]:
    """One JSON-RPC request to an MCP server (``tools/call``), as a child of the current
    span while it runs: its method and the tool's name, never the arguments. A failure
    is the span's status, by the exception's type (its message may hold a value)."""
    tracer = _tracer
    if tracer is None:
        yield
        return
    from opentelemetry.trace import Status, StatusCode

    with tracer.start_as_current_span(f"mcp {method}", record_exception=False,
                                      set_status_on_exception=False, attributes={
                                          "rpc.system": "jsonrpc", "mcp.method.name": method,
                                          "gen_ai.tool.name": tool}) as span:
        try:
            yield
        except BaseException as exc:
            span.set_attribute("glove.status", type(exc).__name__)
            span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
            raise
        span.set_attribute("glove.status", "ok")
