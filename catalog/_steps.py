"""A pipeline's steps, and its reply read frame by frame as its bytes come.

``SidecarConnection`` (``_client.py``) sends the steps; ``Reply`` reads what the
sidecar answers, the same way whether a task awaits it (``pipeline``) or the
socket's callback feeds it (``start``). Frames are read undecoded: a row's body is
kept as it came (``DataRow.raw``), and once a last step's rows pass ``STREAM_AT``
bytes they go on through a ``Stream``. Only descriptions, tags, errors and
ReadyForQuery are decoded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from glove_scratchpad import errors
from glove_scratchpad.stream import STREAM_AT, Stream
from glove_scratchpad.wire import DataRow, FieldDescription, Param, decode_backend

__all__ = ["READY", "ROW_DESCRIPTION", "Reply", "StatementKey", "Step", "StepResult"]

StatementKey = tuple[str, tuple[int, ...], tuple[Any, ...]]  # SQL, parameter types, settings


class Channel(Protocol):
    """What a reply needs of the connection it came on (``SidecarConnection``): its
    record of the statements the sidecar has prepared, a row description decoded once,
    and the socket a stream of rows goes on from."""

    _prepared: dict[StatementKey, str]
    _socket: Any

    def _describe_row(self, body: bytes) -> tuple[FieldDescription, ...]: ...


@dataclass(frozen=True, slots=True)
class Step:
    """One statement of a pipeline."""

    sql: str
    params: Sequence[Param] = ()
    result_formats: Sequence[int] = ()
    rows: bool = True  # Describe the portal and keep its rows
    own: bool = False  # the server's own SQL (not a client's): any command tag is fine


@dataclass(slots=True)
class StepResult:
    fields: tuple[FieldDescription, ...] = ()
    description: bytes = b""  # the RowDescription's body, as it came
    rows: list[DataRow] = field(default_factory=list)
    tag: str = ""
    stream: Stream | None = None  # its rows past STREAM_AT bytes: relayed, or capped


_DATA_ROW, ROW_DESCRIPTION, _COMMAND_COMPLETE = ord("D"), ord("T"), ord("C")
_ERROR, READY, _PARSE_COMPLETE = ord("E"), ord("Z"), ord("1")
_STEP_ENDS = frozenset({_COMMAND_COMPLETE, ord("I"), ord("s")})  # also EmptyQuery, Suspended


class Reply:
    """A pipeline's reply, read frame by frame as its bytes come.

    Frames are read undecoded: rows pass through as they are, acknowledgements are
    skipped, and only descriptions, tags, errors and ReadyForQuery are decoded."""

    __slots__ = ("_conn", "_current", "_index", "_parsed", "_prepared", "error", "held",
                 "make", "ready", "results", "status", "steps", "stream")

    def __init__(self, conn: Channel, steps: Sequence[Step], wrapped: bool,
                 parsed: Sequence[tuple[StatementKey, str]]) -> None:
        self._conn, self.steps, self._parsed = conn, steps, parsed
        self.results = [StepResult() for _ in steps]
        self._index = -1 if wrapped else 0  # -1: the BEGIN
        self._current = self.results[0] if self.results and not wrapped else None
        self._prepared = 0
        self.error: errors.SqlError | None = None
        self.ready = False
        self.status = b""  # ReadyForQuery's transaction status, once it came
        self.stream: Stream | None = None  # the last step's rows, relayed as they come
        self.make: Callable[[], Stream] | None = None  # makes it, once they pass STREAM_AT
        self.held = 0  # bytes of the rows' bodies kept, counted as they come

    def feed(self, frames: list[tuple[int, bytes]]) -> bool:
        """Read frames of the reply; whether its ReadyForQuery came."""
        current = self._current
        held = self.held
        for kind, body in frames:
            if kind == _DATA_ROW:
                if current is not None:
                    current.rows.append(DataRow.raw(body))
                    held += len(body)
            elif kind in _STEP_ENDS:
                if current is not None and kind == _COMMAND_COMPLETE:
                    current.tag = body[:-1].decode()
                self._index += 1
                index = self._index
                current = self.results[index] if 0 <= index < len(self.results) else None
            elif kind == ROW_DESCRIPTION:
                if current is not None:
                    current.fields = self._conn._describe_row(body)
                    current.description = body
            elif kind == _PARSE_COMPLETE:
                key, name = self._parsed[self._prepared]
                if name:
                    self._conn._prepared[key] = name  # it exists now, whatever fails later
                self._prepared += 1
            elif kind == _ERROR:
                if self.error is None:
                    msg = decode_backend(kind, body)
                    self.error = errors.SqlError.from_fields(msg.fields)  # type: ignore[attr-defined]
                    self.error.step = self._index  # type: ignore[attr-defined]
            elif kind == READY:
                self.ready, self.status = True, body
            # Anything else (BindComplete, CloseComplete, NoData, notices and parameter
            # statuses of our own BEGIN/ROLLBACK and settings) is nothing for the client.
        self._current = current
        stream = self.stream
        if stream is None and held >= STREAM_AT and self.make is not None:
            stream = self.stream = self.results[-1].stream = self.make()
        if stream is not None and (held >= STREAM_AT or stream.started or stream.over):
            last = self.results[-1]
            held = stream.take(last.rows, held, last.description, self._conn._socket)
        self.held = held
        return self.ready


