"""h11-style connection objects: bytes in, events out; events in, bytes out.

Rules:
- No I/O here. ``receive_data(bytes)`` buffers, ``next_event()`` returns one
  decoded message or NEED_DATA, ``send(msg)`` returns the bytes to write.
  The caller owns the socket, TLS, timeouts and EOF.
- Every message passes through the tables of states.py, in both directions.
- A RemoteProtocolError fails the connection for good: every later
  ``next_event`` raises again. A LocalProtocolError changes nothing.
- ServerConnection is the backend (we serve clients); ClientConnection is the
  frontend (we talk to a sidecar Postgres and relay its rows undecoded).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from ._codec import Message, decode_with
from .backend import (
    DataRow,
    GSSENCResponse,
    NegotiateProtocolVersion,
    SSLResponse,
    decode_backend,
)
from .buffer import MAX_AUTH_MESSAGE_SIZE, MAX_MESSAGE_SIZE, SMALL_MESSAGE_SIZE, ReceiveBuffer
from .errors import LocalProtocolError, RemoteProtocolError
from .frontend import (
    FRONTEND_TYPES,
    PASSWORD_KINDS,
    StartupMessage,
    decode_frontend,
    decode_startup,
)
from .portal_run import PortalRun, read_portal_run
from .states import (
    BACKEND,
    ENCRYPTION_ANSWERS,
    ENCRYPTION_REQUESTS,
    FRONTEND,
    KEPT_WHILE_DISCARDING,
    PASSWORD_EXPECTED_AFTER,
    SIDE_EFFECTS,
    State,
    Table,
)


class _NeedData:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NEED_DATA"


NEED_DATA: Final = _NeedData()  # next_event(): feed more bytes first
Event = Message | _NeedData

# Per-type length caps for frontend messages, as in Postgres' SocketBackend:
# only messages that carry user data may be large; unknown types are refused.
_LARGE = MAX_MESSAGE_SIZE
NORMAL_LIMITS = {t: SMALL_MESSAGE_SIZE for t in FRONTEND_TYPES} | dict.fromkeys(b"QPBFd", _LARGE)
AUTH_LIMITS = {ord("p"): MAX_AUTH_MESSAGE_SIZE, ord("X"): SMALL_MESSAGE_SIZE}


_NORMAL, _FAILED, _CLOSED = State.NORMAL, State.FAILED, State.CLOSED


class _Connection:
    _ours: Table
    _theirs: Table

    def __init__(self) -> None:
        self._enter(State.STARTUP)
        self._buffer = ReceiveBuffer()
        self._error: RemoteProtocolError | None = None
        self._asked: set[type[Message]] = set()  # encryption requests seen
        self._encrypted = False
        self._expected: type[Message] | None = None  # what a 'p' message means now
        self.protocol_version: int | None = None  # requested, or as negotiated down

    @property
    def state(self) -> State:
        return self._state

    @property
    def trailing_data(self) -> bytes:
        """Bytes received but not yet turned into events."""
        return self._buffer.peek()

    @property
    def buffered(self) -> int:
        """How many received bytes are not yet turned into events."""
        return len(self._buffer)

    def receive_data(self, data: bytes) -> None:
        self._buffer.feed(data)

    def next_event(self) -> Event:
        if self._error is not None:
            raise RemoteProtocolError(str(self._error), self._error.sqlstate) from self._error
        if self._state is _CLOSED:
            raise LocalProtocolError("connection is closed")
        try:
            event = self._read_event()
            if event is not NEED_DATA:
                self._advance(self._theirs_now, event, RemoteProtocolError)  # type: ignore[arg-type]
        except RemoteProtocolError as exc:
            self._fail(exc)
            raise
        return event

    def send(self, msg: Message) -> bytes:
        """Bytes for ``msg``; raises LocalProtocolError if it is not allowed now."""
        data = msg.encode()  # first: a message that cannot be encoded changes nothing
        try:
            self._advance(self._ours_now, msg, LocalProtocolError)
        except RemoteProtocolError as exc:  # an accepting answer found stuffed bytes
            self._fail(exc)
            raise
        return data

    def send_many(self, msgs: Iterable[Message]) -> bytes:
        return b"".join([self.send(m) for m in msgs])

    def _read_event(self) -> Event:
        raise NotImplementedError

    def _enter(self, state: State) -> None:
        self._state = state
        self._ours_now = self._ours[state]  # the tables' rows for this state, cached
        self._theirs_now = self._theirs[state]

    def _fail(self, exc: RemoteProtocolError) -> None:
        self._error = exc
        self._enter(_FAILED)

    def _advance(self, allowed: dict[type[Message], State], msg: Message, error: type) -> None:
        kind = type(msg)
        new = allowed.get(kind)
        if new is None:
            raise error(f"{kind.__name__} is not allowed in state {self._state.name}")
        if kind in SIDE_EFFECTS:  # rare: keep the per-row path to two dict lookups
            self._side_effects(msg, error)
        if new is not self._state:
            self._enter(new)

    def _side_effects(self, msg: Message, error: type) -> None:
        if isinstance(msg, ENCRYPTION_REQUESTS):
            if type(msg) in self._asked or self._encrypted:
                raise error(f"{type(msg).__name__} repeated or after encryption was set up")
            self._asked.add(type(msg))
        elif isinstance(msg, ENCRYPTION_ANSWERS):
            if msg.accepted:
                if len(self._buffer):
                    raise RemoteProtocolError("received unencrypted data after encryption request")
                self._encrypted = True
        elif isinstance(msg, StartupMessage):
            self.protocol_version = msg.protocol_version
        elif isinstance(msg, NegotiateProtocolVersion):
            self.protocol_version = (3 << 16) | msg.newest_minor
        else:  # an authentication request: what the next 'p' message will be
            self._expected = PASSWORD_EXPECTED_AFTER[type(msg)]


class ServerConnection(_Connection):
    """We are the backend: frontend messages in, backend messages out."""

    _ours, _theirs = BACKEND, FRONTEND

    def __init__(self) -> None:
        super().__init__()
        self._discarding = False
        self._run: PortalRun | None = None  # ``portal_run``'s last answer, and where
        self._run_at = (-1, -1)

    def answer_ssl(self, accept: bool) -> bytes:
        """The byte that answers an SSLRequest; on b'S' the caller starts TLS."""
        return self.send(SSLResponse(accept))

    def answer_gssenc(self, accept: bool) -> bytes:
        """The byte that answers a GSSENCRequest; on b'G' the caller starts GSSAPI."""
        return self.send(GSSENCResponse(accept))

    def expect_password(self, kind: str | type[Message] | None) -> None:
        """Decode the next 'p' message as ``kind`` (e.g. "SASLInitialResponse").

        Sending an authentication request sets this already; this overrides it.
        """
        if isinstance(kind, str):
            if kind not in PASSWORD_KINDS:
                raise LocalProtocolError(f"unknown password message kind {kind!r}")
            kind = PASSWORD_KINDS[kind]
        self._expected = kind

    def portal_run(self) -> PortalRun | None:
        """Bind, [Describe], Execute and Sync of the unnamed portal, when the buffer
        starts with exactly those, complete (``portal_run.py``); nothing is consumed
        until ``take`` is called. None: read the messages one by one."""
        if self._state is not _NORMAL or self._discarding:
            return None
        buf, pos = self._buffer.view()
        at = (pos, self._buffer.feeds)
        if at != self._run_at:  # else the same bytes, read before: the same answer
            self._run, self._run_at = read_portal_run(buf, pos), at
        return self._run

    def take(self, run: PortalRun) -> None:
        """Consume the messages of ``run``, as if each had been read as an event: in
        the normal phase each leaves the state where it is. Only before the buffer is
        fed again (bytes received in between move its offsets)."""
        if self._buffer.view()[1] != run.start:
            raise LocalProtocolError("the portal run was read before the buffer last changed")
        self._buffer.skip_to(run.end)

    def start_error_recovery(self) -> None:
        """Drop frontend messages until Sync (returned) after an extended-query error."""
        if self._state is not State.NORMAL:
            raise LocalProtocolError(f"no error recovery in state {self._state.name}")
        self._discarding = True

    @property
    def in_error_recovery(self) -> bool:
        return self._discarding

    def _read_event(self) -> Event:
        state, buffer = self._state, self._buffer
        if state is _NORMAL:
            while (frame := buffer.next_message(NORMAL_LIMITS, None)) is not None:
                type_byte, body = frame
                if not self._discarding:
                    return decode_frontend(type_byte, body)
                if type_byte in KEPT_WHILE_DISCARDING:
                    self._discarding = False
                    return decode_frontend(type_byte, body)
            return NEED_DATA
        if state is State.STARTUP:
            packet = buffer.next_startup_packet()
            return NEED_DATA if packet is None else decode_startup(packet)
        if state is State.AUTHENTICATING:
            frame = buffer.next_message(AUTH_LIMITS, None)
            if frame is None:
                return NEED_DATA
            type_byte, body = frame
            if type_byte != ord("p"):
                return decode_frontend(type_byte, body)  # Terminate
            kind, self._expected = self._expected, None
            if kind is None:
                raise RemoteProtocolError("unexpected password message")
            return decode_with(kind, body)
        raise LocalProtocolError(f"cannot read events in state {state.name}; answer first")


class ClientConnection(_Connection):
    """We are the frontend: backend messages in, frontend messages out.

    DataRow events keep their raw body; ``validate_rows=True`` splits each
    one on arrival so a malformed row fails here rather than downstream.
    """

    _ours, _theirs = FRONTEND, BACKEND

    def __init__(self, validate_rows: bool = False) -> None:
        super().__init__()
        self._validate_rows = validate_rows

    def next_frame(self) -> tuple[int, bytes] | _NeedData:
        """The next backend message undecoded, as (type byte, body), or NEED_DATA.

        For a relay in the normal phase: rows and acknowledgements pass without
        being decoded; ``decode_backend(*frame)`` decodes the few that matter.
        """
        if self._state is not _NORMAL:
            raise LocalProtocolError(f"next_frame() is for the normal phase, not "
                                     f"{self._state.name}")
        frame = self._buffer.next_message()
        return NEED_DATA if frame is None else frame

    def raw_run(self, types: frozenset[int]) -> bytes:
        """The buffered backend messages at the head whose types are in ``types``, as
        they came (``Buffer.raw_run``): a COPY's data, relayed as it is."""
        if self._state is not _NORMAL:
            raise LocalProtocolError(f"raw_run() is for the normal phase, not "
                                     f"{self._state.name}")
        return self._buffer.raw_run(types)

    def frames_until(self, last: int) -> tuple[list[tuple[int, bytes]], bool]:
        """Every buffered backend message undecoded, up to the first of type ``last``
        (ReadyForQuery, say), and whether it came: ``next_frame`` for a whole reply."""
        if self._state is not _NORMAL:
            raise LocalProtocolError(f"frames_until() is for the normal phase, not "
                                     f"{self._state.name}")
        return self._buffer.messages_until(last)

    def _read_event(self) -> Event:
        state, buffer = self._state, self._buffer
        if state is _NORMAL or state is State.AUTHENTICATING:
            frame = buffer.next_message()
            if frame is None:
                return NEED_DATA
            event = decode_backend(*frame)
            if self._validate_rows and isinstance(event, DataRow):
                event.values  # noqa: B018  # split now; raises RemoteProtocolError
            return event
        if state is State.SSL_REQUESTED or state is State.GSSENC_REQUESTED:
            answer = buffer.next_byte()
            if answer is None:
                return NEED_DATA
            ssl = state is State.SSL_REQUESTED
            yes, cls = (ord("S"), SSLResponse) if ssl else (ord("G"), GSSENCResponse)
            if answer not in (yes, ord("N")):
                raise RemoteProtocolError(f"invalid answer {chr(answer)!r} to encryption request")
            return cls(answer == yes)
        if state is State.STARTUP:
            if len(buffer):
                raise RemoteProtocolError("received data before the startup packet was sent")
            return NEED_DATA
        raise LocalProtocolError(f"cannot read events in state {state.name}")
