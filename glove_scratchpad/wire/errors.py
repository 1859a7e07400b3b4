"""The two exceptions of the wire layer.

Rules:
- ``LocalProtocolError``: *we* misused the API (sent a message in the wrong
  state, a string holding NUL, an integer out of range). Nothing was sent.
- ``RemoteProtocolError``: the *peer* sent bytes that break the protocol. It
  carries SQLSTATE 08P01 (protocol_violation), the code Postgres reports, so
  the server can answer with a FATAL ErrorResponse before closing. After one,
  the connection object is failed and raises again on every ``next_event``.
- No other exception (struct.error, IndexError, UnicodeDecodeError, ...) may
  escape from decoding: the decoders translate them.
"""

from __future__ import annotations

from glove_scratchpad.errors import ProtocolViolation

PROTOCOL_VIOLATION = ProtocolViolation.sqlstate


class ProtocolError(Exception):
    """Base class of both wire errors."""


class LocalProtocolError(ProtocolError):
    """We used the API wrongly; the peer saw nothing."""


class RemoteProtocolError(ProtocolError):
    """The peer sent bytes that violate the protocol."""

    def __init__(self, message: str, sqlstate: str = PROTOCOL_VIOLATION) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate
