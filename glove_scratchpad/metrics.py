"""The server's Prometheus metrics: what it counts, by labels whose values are bounded.

Rules:
- Label values are bounded: statement kinds, SQLSTATE classes, resource names,
  verbs and outcomes; never SQL text, arguments or key values.
- Off unless ``enable()`` is called (``--metrics-port``): each function here then
  returns at once, so a server without metrics pays one attribute read per event.
- With ``--workers N`` every worker writes its values where the supervisor says
  (prometheus-client's multiprocess mode, ``PROMETHEUS_MULTIPROC_DIR``), and one
  scrape of the supervisor sees them all: gauges are summed over the live workers.
- The names follow Prometheus' conventions: ``glove_`` first, ``_total`` for
  counters (added by the client library), base units (seconds, bytes).
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["MULTIPROCESS_ENV", "approval_decided", "approvals_pending", "call", "connection",
           "enable", "enabled", "internal_error", "kept", "process_ended", "rate_wait",
           "registry", "retry", "sidecar_restart", "sidecar_round_trip", "statement",
           "transaction", "write"]

MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"
ROUND_TRIP_PURPOSES = ("describe", "run", "populate", "audit", "journal", "cache", "other")
# Statements take from a fraction of a millisecond (a cached read) to minutes (a slow
# tool): buckets from 0.5 ms to 2 min.
_SECONDS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
            10.0, 30.0, 60.0, 120.0)
# A person decides in seconds to hours: buckets from 1 s to 1 day.
_DECISION_SECONDS = (1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 900.0, 1800.0, 3600.0,
                     14400.0, 86400.0)


class _Metrics:
    """The metric objects, made when metrics are enabled (prometheus-client reads the
    multiprocess directory when a metric is made)."""

    def __init__(self) -> None:
        from prometheus_client import Counter, Gauge, Histogram

        live = {"multiprocess_mode": "livesum"}
        self.statements = Counter(
            "glove_statements", "Statements run, by kind (SELECT, INSERT, COMMIT, …) and "
            "outcome (the SQLSTATE class: 00 is success, 42 a statement error, 57 canceled)",
            ["kind", "outcome"])
        self.statement_seconds = Histogram(
            "glove_statement_duration_seconds", "Time from a statement's start to its answer",
            ["kind"], buckets=_SECONDS)
        self.calls = Counter(
            "glove_tool_calls", "Attempts of tool calls, by resource, verb and outcome (ok, "
            "error, timeout, canceled)", ["resource", "verb", "outcome"])
        self.call_seconds = Histogram(
            "glove_tool_call_duration_seconds", "Time of one attempt of a tool call",
            ["resource", "verb"], buckets=_SECONDS)
        self.call_rows = Counter(
            "glove_tool_call_rows", "Rows tool calls gave back", ["resource", "verb"])
        self.retries = Counter(
            "glove_tool_call_retries", "Attempts made again after a transient error or a "
            "timeout", ["resource", "verb"])
        self.rate_waits = Counter(
            "glove_rate_limit_wait_seconds", "Time calls waited for their resource's rate "
            "limit", ["resource"])
        self.connections = Gauge(
            "glove_connections", "Client connections open", **live)  # type: ignore[arg-type]
        self.sessions = Gauge(
            "glove_sessions", "Sessions started (connections past start-up)",
            **live)  # type: ignore[arg-type]
        self.transactions = Gauge(
            "glove_open_transactions", "Sessions inside BEGIN … COMMIT",
            **live)  # type: ignore[arg-type]
        self.writes = Counter(
            "glove_writes", "Writes, by resource and what became of them (staged, fired, "
            "failed, in doubt)", ["resource", "outcome"])
        self.kept = Counter(
            "glove_kept_calls", "Lookups of kept calls (hit, miss), and kept calls made and "
            "evicted",
            ["event"])
        self.kept_bytes = Gauge(
            "glove_kept_calls_bytes", "Bytes of the kept calls' tables in the sidecar",
            **live)  # type: ignore[arg-type]
        self.sidecar_restarts = Counter(
            "glove_sidecar_restarts", "Times the embedded sidecar was started again after "
            "its postmaster died")
        # Approvals (docs/approvals.md): a request waits for a person.
        # Counted in the sidecar, which every worker shares: each sets the same number.
        self.approvals_pending = Gauge(
            "glove_approvals_pending", "Approval requests waiting for a decision",
            multiprocess_mode="livemax")
        self.approval_decisions = Counter(
            "glove_approval_decisions", "Decisions on approval requests, by outcome "
            "(approved, denied)", ["outcome"])
        self.approval_seconds = Histogram(
            "glove_approval_decision_seconds", "Time from a request to its decision",
            buckets=_DECISION_SECONDS)
        self.sidecar_round_trips = Counter(
            "glove_sidecar_round_trips", "Round trips to the sidecar, by purpose: describe "
            "(a statement checked, calling nothing), run (a statement run), populate (a kept "
            "call's rows written), audit, journal, cache (the kept calls' tables), other",
            ["purpose"])
        # Counted on every exchange with the sidecar: the children looked up once.
        self.round_trips = {p: self.sidecar_round_trips.labels(p) for p in ROUND_TRIP_PURPOSES}
        self.internal_errors = Counter(
            "glove_internal_errors", "The server's own bugs met while serving a client: each "
            "answered XX000, its traceback in the log")


_metrics: _Metrics | None = None


def enable() -> None:
    """Make the metrics and start counting (once per process)."""
    global _metrics
    if _metrics is None:
        _metrics = _Metrics()


def enabled() -> bool:
    return _metrics is not None


def registry() -> Any:
    """What a scrape reads: this process's metrics, or, in multiprocess mode, every
    worker's (prometheus-client's ``MultiProcessCollector``)."""
    from prometheus_client import REGISTRY, CollectorRegistry, multiprocess

    if not os.environ.get(MULTIPROCESS_ENV):
        return REGISTRY
    collected = CollectorRegistry()
    multiprocess.MultiProcessCollector(collected)
    return collected


def process_ended(pid: int) -> None:
    """A worker is gone: its gauges no longer count (its counters still do)."""
    if os.environ.get(MULTIPROCESS_ENV):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)


def statement(kind: str, outcome: str, seconds: float) -> None:
    m = _metrics
    if m is not None:
        m.statements.labels(kind, outcome).inc()
        m.statement_seconds.labels(kind).observe(seconds)


def call(resource: str, verb: str, outcome: str, seconds: float, rows: int | None) -> None:
    m = _metrics
    if m is not None:
        m.calls.labels(resource, verb, outcome).inc()
        m.call_seconds.labels(resource, verb).observe(seconds)
        if rows:
            m.call_rows.labels(resource, verb).inc(rows)


def retry(resource: str, verb: str) -> None:
    m = _metrics
    if m is not None:
        m.retries.labels(resource, verb).inc()


def rate_wait(resource: str, seconds: float) -> None:
    m = _metrics
    if m is not None and seconds > 0:
        m.rate_waits.labels(resource).inc(seconds)


def connection(delta: int, *, session: bool = False) -> None:
    """A client connection opened (+1) or closed (-1); ``session``: one past start-up."""
    m = _metrics
    if m is not None:
        (m.sessions if session else m.connections).inc(delta)


def transaction(delta: int) -> None:
    """A session's transaction began (+1) or ended (-1)."""
    m = _metrics
    if m is not None:
        m.transactions.inc(delta)


def write(resource: str, outcome: str, n: int = 1) -> None:
    m = _metrics
    if m is not None and n:
        m.writes.labels(resource, outcome).inc(n)


def kept(event: str, n: int = 1, *, bytes_now: int | None = None) -> None:
    """A kept call's lookup (hit, miss) or eviction; ``bytes_now``: the tables' size."""
    m = _metrics
    if m is not None:
        if n:
            m.kept.labels(event).inc(n)
        if bytes_now is not None:
            m.kept_bytes.set(bytes_now)


def sidecar_restart() -> None:
    m = _metrics
    if m is not None:
        m.sidecar_restarts.inc()


def approvals_pending(n: int) -> None:
    """The approval requests pending now, as the store counts them."""
    m = _metrics
    if m is not None:
        m.approvals_pending.set(n)


def approval_decided(outcome: str, seconds: float) -> None:
    """A pending request decided (approved, denied) after ``seconds``."""
    m = _metrics
    if m is not None:
        m.approval_decisions.labels(outcome).inc()
        m.approval_seconds.observe(seconds)


def sidecar_round_trip(purpose: str) -> None:
    """One request sent to the sidecar and its whole reply read, for ``purpose``."""
    m = _metrics
    if m is not None:
        m.round_trips[purpose].inc()


def internal_error() -> None:
    """One of the server's own bugs met while serving a client (answered XX000)."""
    m = _metrics
    if m is not None:
        m.internal_errors.inc()
