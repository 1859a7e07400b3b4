"""The client's side of a COPY: what the engine relays goes out as it comes, and the
client's CopyData comes in (``catalog.CopyChannel``).

Rules:
- What the connection owes the client before the COPY (ParseComplete, an earlier
  statement's rows) is written first.
- During COPY FROM STDIN, Flush and Sync are ignored, as Postgres ignores them;
  any other message ends the COPY with 08P01, as in Postgres.
"""

from __future__ import annotations

from typing import Any

from glove_scratchpad import errors
from glove_scratchpad.wire import CopyData, CopyDone, CopyFail, Flush, Sync

__all__ = ["ClientCopy"]


class ClientCopy:
    """A connection's COPY channel; ``handler`` is its ``ClientHandler``."""

    __slots__ = ("handler",)

    def __init__(self, handler: Any) -> None:
        self.handler = handler

    async def begin(self) -> None:
        await self.handler.flush()

    def write(self, data: bytes) -> None:
        self.handler.write(data)

    async def drain(self) -> None:
        await self.handler.drain()

    async def read(self) -> bytes | str | None:
        while True:
            msg = await self.handler.read_event()
            kind = type(msg)
            if kind is CopyData:
                data: bytes = msg.data
                return data
            if kind is CopyDone:
                return None
            if kind is CopyFail:
                message: str = msg.message
                return message
            if kind is not Flush and kind is not Sync:
                raise errors.ProtocolViolation(
                    f"unexpected message type 0x{msg.type_byte[0]:02x} during COPY from stdin",
                    hint="Send CopyData, then CopyDone or CopyFail.")
