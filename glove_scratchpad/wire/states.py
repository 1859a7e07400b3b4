"""The connection state machine, as data. Both connection classes use it.

Rules:
1. One state per connection, shared by both peers (the protocol is
   half-duplex enough that one state suffices): STARTUP -> AUTHENTICATING ->
   NORMAL -> CLOSED, plus FAILED after the peer broke the protocol.
2. Every message, sent or received, is looked up in the table of its
   direction (FRONTEND for what the client sends, BACKEND for what the
   server sends) under the current state; the entry is the next state.
   A missing entry is a LocalProtocolError when we send, a
   RemoteProtocolError when the peer sends.
3. STARTUP: the first packet has no type byte. SSLRequest / GSSENCRequest
   park the connection until the backend's one-byte answer (SSLResponse /
   GSSENCResponse), then STARTUP again. Each may be asked at most once, and
   neither after one was accepted (as in Postgres' ProcessStartupPacket).
   An accepting answer requires the receive buffer to be empty: bytes that
   arrived before the TLS / GSSAPI handshake were not encrypted and must
   not be trusted (CVE-2021-23214 / CVE-2021-23222).
4. AUTHENTICATING: the frontend's 'p' messages are decoded by context: the
   backend's last authentication request picks the kind
   (PASSWORD_EXPECTED_AFTER), one 'p' per request. AuthenticationOk -> NORMAL.
5. NORMAL: anything of the normal phase. After an error in extended query
   processing the server may discard frontend messages until Sync
   (KEPT_WHILE_DISCARDING are still delivered; Postgres also honours
   Terminate there).
6. CLOSED after Terminate or CancelRequest. FAILED only lets the backend
   send ErrorResponse (the FATAL report of the violation) and the frontend
   send Terminate.
"""

from __future__ import annotations

import enum

from . import backend as b
from . import frontend as f
from ._codec import Message


class State(enum.Enum):
    STARTUP = "STARTUP"  # waiting for the untyped first packet
    SSL_REQUESTED = "SSL_REQUESTED"  # backend owes a one-byte answer
    GSSENC_REQUESTED = "GSSENC_REQUESTED"  # likewise
    AUTHENTICATING = "AUTHENTICATING"
    NORMAL = "NORMAL"
    CLOSED = "CLOSED"
    FAILED = "FAILED"


Table = dict[State, dict[type[Message], State]]
S = State

_NORMAL_FRONTEND = (
    *(f.Query, f.Parse, f.Bind, f.Describe, f.Execute, f.Close, f.Flush, f.Sync),
    *(f.CopyData, f.CopyDone, f.CopyFail, f.FunctionCall, b.RawMessage),
)
_NORMAL_BACKEND = (
    *(b.ParameterStatus, b.BackendKeyData, b.ReadyForQuery, b.NotificationResponse),
    *(b.RowDescription, b.DataRow, b.CommandComplete, b.EmptyQueryResponse),
    *(b.ErrorResponse, b.NoticeResponse, b.ParameterDescription, b.NoData),
    *(b.ParseComplete, b.BindComplete, b.CloseComplete, b.PortalSuspended),
    *(f.CopyData, f.CopyDone, b.RawMessage),
)
_AUTH_REQUESTS = (
    *(b.AuthenticationCleartextPassword, b.AuthenticationMD5Password),
    *(b.AuthenticationSASL, b.AuthenticationSASLContinue, b.AuthenticationSASLFinal),
)

FRONTEND: Table = {
    S.STARTUP: {
        f.SSLRequest: S.SSL_REQUESTED,
        f.GSSENCRequest: S.GSSENC_REQUESTED,
        f.StartupMessage: S.AUTHENTICATING,
        f.CancelRequest: S.CLOSED,
    },
    S.SSL_REQUESTED: {},
    S.GSSENC_REQUESTED: {},
    S.AUTHENTICATING: {
        f.PasswordMessage: S.AUTHENTICATING,
        f.SASLInitialResponse: S.AUTHENTICATING,
        f.SASLResponse: S.AUTHENTICATING,
        f.Terminate: S.CLOSED,
    },
    S.NORMAL: {**dict.fromkeys(_NORMAL_FRONTEND, S.NORMAL), f.Terminate: S.CLOSED},
    S.CLOSED: {},
    S.FAILED: {f.Terminate: S.CLOSED},
}

BACKEND: Table = {
    S.STARTUP: {b.ErrorResponse: S.STARTUP},  # e.g. "too many connections"
    S.SSL_REQUESTED: {b.SSLResponse: S.STARTUP},
    S.GSSENC_REQUESTED: {b.GSSENCResponse: S.STARTUP},
    S.AUTHENTICATING: {
        **dict.fromkeys(_AUTH_REQUESTS, S.AUTHENTICATING),
        b.NegotiateProtocolVersion: S.AUTHENTICATING,
        b.ErrorResponse: S.AUTHENTICATING,
        b.NoticeResponse: S.AUTHENTICATING,
        b.AuthenticationOk: S.NORMAL,
    },
    S.NORMAL: dict.fromkeys(_NORMAL_BACKEND, S.NORMAL),
    S.CLOSED: {},
    S.FAILED: {b.ErrorResponse: S.FAILED},
}

# Which 'p' message an authentication request asks for (None: no 'p' now).
PASSWORD_EXPECTED_AFTER: dict[type[Message], type[Message] | None] = {
    b.AuthenticationCleartextPassword: f.PasswordMessage,
    b.AuthenticationMD5Password: f.PasswordMessage,
    b.AuthenticationSASL: f.SASLInitialResponse,
    b.AuthenticationSASLContinue: f.SASLResponse,
    b.AuthenticationSASLFinal: None,
    b.AuthenticationOk: None,
}

ENCRYPTION_REQUESTS = (f.SSLRequest, f.GSSENCRequest)
ENCRYPTION_ANSWERS = (b.SSLResponse, b.GSSENCResponse)
# Messages that change more than the state (rules 3 and 4; versions).
SIDE_EFFECTS = frozenset(
    (
        *(*ENCRYPTION_REQUESTS, *ENCRYPTION_ANSWERS, *PASSWORD_EXPECTED_AFTER),
        *(f.StartupMessage, b.NegotiateProtocolVersion),
    )
)
KEPT_WHILE_DISCARDING = frozenset(b"SX")  # type bytes: Sync (ends it), Terminate
