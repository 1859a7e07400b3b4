"""Our own bugs as a client meets them: the one policy for an internal error (XX000).

Every place of ``net`` that catches an exception it did not expect hands it here
(``internal_error``), and sends what it gets back: within a message or a statement,
as that message's error, and the connection goes on; outside one, as the FATAL
error the connection ends with (``connection``).

Rules:
- The traceback goes to the log, with what was being done; never to the client.
- The client gets XX000 with a generic message and a HINT: not the exception's
  text, its type, nor a path of the server's.
- Each is counted (``glove_internal_errors``), so an operator sees bugs that no
  client reports.
"""

from __future__ import annotations

import logging

from glove_scratchpad import errors, metrics

__all__ = ["HINT", "MESSAGE", "internal_error"]

log = logging.getLogger(__name__)

MESSAGE = "internal error"
HINT = ("This is a bug of the server's, not of the statement: try again; the server's log "
        "has the details for its operator.")


def internal_error(exc: BaseException, doing: str, *args: object) -> errors.InternalError:
    """``exc``, met while ``doing`` (a %-format of ``args``): logged with its traceback
    and counted; the error its client gets instead."""
    log.error("internal error " + doing, *args, exc_info=exc)
    metrics.internal_error()
    return errors.InternalError(MESSAGE, hint=HINT)
