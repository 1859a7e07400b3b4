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

from ._codec import Message
from .backend import (
    AuthenticationCleartextPassword,
    AuthenticationMD5Password,
    AuthenticationOk,
    AuthenticationSASL,
    AuthenticationSASLContinue,
    AuthenticationSASLFinal,
    BackendKeyData,
    BindComplete,
    CloseComplete,
    CommandComplete,
    DataRow,
    EmptyQueryResponse,
    ErrorResponse,
    GSSENCResponse,
    NegotiateProtocolVersion,
    NoData,
    NoticeResponse,
    NotificationResponse,
    ParameterDescription,
    ParameterStatus,
    ParseComplete,
    PortalSuspended,
    RawMessage,
    ReadyForQuery,
    RowDescription,
    SSLResponse,
)
from .frontend import (
    Bind,
    CancelRequest,
    Close,
    CopyData,
    CopyDone,
    CopyFail,
    Describe,
    Execute,
    Flush,
    FunctionCall,
    GSSENCRequest,
    Parse,
    PasswordMessage,
    Query,
    SASLInitialResponse,
    SASLResponse,
    SSLRequest,
    StartupMessage,
    Sync,
    Terminate,
)


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

_NORMAL_FRONTEND = (Query, Parse, Bind, Describe, Execute, Close, Flush, Sync)
_NORMAL_FRONTEND += (CopyData, CopyDone, CopyFail, FunctionCall, RawMessage)
_NORMAL_BACKEND = (ParameterStatus, BackendKeyData, ReadyForQuery, RowDescription, DataRow)
_NORMAL_BACKEND += (CommandComplete, EmptyQueryResponse, ErrorResponse, NoticeResponse)
_NORMAL_BACKEND += (ParseComplete, BindComplete, CloseComplete, NoData, PortalSuspended)
_NORMAL_BACKEND += (ParameterDescription, NotificationResponse, CopyData, CopyDone, RawMessage)
_AUTH_REQUESTS = (AuthenticationCleartextPassword, AuthenticationMD5Password)
_AUTH_REQUESTS += (AuthenticationSASL, AuthenticationSASLContinue, AuthenticationSASLFinal)

FRONTEND: Table = {
    S.STARTUP: {
        SSLRequest: S.SSL_REQUESTED,
        GSSENCRequest: S.GSSENC_REQUESTED,
        StartupMessage: S.AUTHENTICATING,
        CancelRequest: S.CLOSED,
    },
    S.SSL_REQUESTED: {},
    S.GSSENC_REQUESTED: {},
    S.AUTHENTICATING: {
        PasswordMessage: S.AUTHENTICATING,
        SASLInitialResponse: S.AUTHENTICATING,
        SASLResponse: S.AUTHENTICATING,
        Terminate: S.CLOSED,
    },
    S.NORMAL: {**dict.fromkeys(_NORMAL_FRONTEND, S.NORMAL), Terminate: S.CLOSED},
    S.CLOSED: {},
    S.FAILED: {Terminate: S.CLOSED},
}

BACKEND: Table = {
    S.STARTUP: {ErrorResponse: S.STARTUP},  # e.g. "too many connections"
    S.SSL_REQUESTED: {SSLResponse: S.STARTUP},
    S.GSSENC_REQUESTED: {GSSENCResponse: S.STARTUP},
    S.AUTHENTICATING: {
        **dict.fromkeys(_AUTH_REQUESTS, S.AUTHENTICATING),
        NegotiateProtocolVersion: S.AUTHENTICATING,
        ErrorResponse: S.AUTHENTICATING,
        NoticeResponse: S.AUTHENTICATING,
        AuthenticationOk: S.NORMAL,
    },
    S.NORMAL: dict.fromkeys(_NORMAL_BACKEND, S.NORMAL),
    S.CLOSED: {},
    S.FAILED: {ErrorResponse: S.FAILED},
}

# Which 'p' message an authentication request asks for (None: no 'p' now).
PASSWORD_EXPECTED_AFTER: dict[type[Message], type[Message] | None] = {
    AuthenticationCleartextPassword: PasswordMessage,
    AuthenticationMD5Password: PasswordMessage,
    AuthenticationSASL: SASLInitialResponse,
    AuthenticationSASLContinue: SASLResponse,
    AuthenticationSASLFinal: None,
    AuthenticationOk: None,
}

ENCRYPTION_REQUESTS = (SSLRequest, GSSENCRequest)
ENCRYPTION_ANSWERS = (SSLResponse, GSSENCResponse)
KEPT_WHILE_DISCARDING = frozenset((ord("S"), ord("X")))  # Sync ends it; Terminate
