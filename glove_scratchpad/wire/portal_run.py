"""A portal's whole run read in one pass: Bind, Describe (of that portal) or not, Execute
and Sync, as a driver sends them for each execution of a prepared statement.

Rules:
- ``read_portal_run`` looks at buffered bytes and either finds exactly that shape at
  their head, every frame complete, or answers None. It never raises: another
  message, a named portal, an Execute with a row count, a frame not yet complete,
  a body that is not well formed: each is None, and the message-by-message path
  decodes (or refuses, with its error) the same bytes.
- The Bind is decoded as ``Bind.read`` decodes it; the other three frames are
  compared as bytes, since for the unnamed portal each has one spelling.
- Nothing is consumed here: the caller skips to ``end`` once it takes the run.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._codec import U32
from .buffer import MAX_MESSAGE_SIZE
from .frontend import Bind, read_bind

__all__ = ["PortalRun", "read_portal_run"]

_BIND = ord("B")
# Describe('P', ""), Execute("", 0) and Sync, each with its type byte and length word.
_DESCRIBE = b"D\x00\x00\x00\x06P\x00"
_EXECUTE_SYNC = b"E\x00\x00\x00\x09\x00\x00\x00\x00\x00S\x00\x00\x00\x04"


@dataclass(frozen=True, slots=True)
class PortalRun:
    """Bind, [Describe], Execute, Sync of the unnamed portal, read together."""

    bind: Bind
    describe: bool  # the client asked for the portal's RowDescription
    start: int  # the buffer offset of the Bind
    end: int  # the buffer offset just after the Sync


def read_portal_run(buf: bytes | bytearray, pos: int) -> PortalRun | None:
    """The portal run at ``buf[pos:]``, or None when the bytes there are anything else."""
    if len(buf) - pos < 5 or buf[pos] != _BIND:
        return None
    length = U32.unpack_from(buf, pos + 1)[0]
    if not 4 <= length <= MAX_MESSAGE_SIZE:
        return None
    at = pos + 1 + length
    describe = buf[at:at + len(_DESCRIBE)] == _DESCRIBE
    if describe:
        at += len(_DESCRIBE)
    end = at + len(_EXECUTE_SYNC)
    if buf[at:end] != _EXECUTE_SYNC:
        return None
    bind = read_bind(bytes(buf[pos + 5:pos + 1 + length]))
    if bind is None or bind.portal:
        return None
    return PortalRun(bind, describe, pos, end)
