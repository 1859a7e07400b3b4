"""Sans-I/O codec for the PostgreSQL v3 frontend/backend protocol (3.0 and 3.2).

Rules for the whole package:
- Pure bytes in, events out: never import asyncio, socket, pglast, pydantic
  or a database driver here. The asyncio server layer owns all I/O.
- Messages are frozen, slotted dataclasses named as in the PostgreSQL docs;
  ``encode(msg)`` gives exact wire bytes, ``decode_*`` the inverse.
- Malformed input raises RemoteProtocolError (SQLSTATE 08P01), API misuse
  LocalProtocolError; no other exception escapes decoding.

Modules: frontend / backend (messages), buffer (framing and limits), states
(the state machine as data), connection (ServerConnection, ClientConnection).
"""

from ._codec import Message
from .backend import (
    FIELD_CODES,
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
    FieldDescription,
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
    decode_backend,
    error_response,
)
from .buffer import (
    MAX_AUTH_MESSAGE_SIZE,
    MAX_MESSAGE_SIZE,
    MAX_STARTUP_PACKET_LENGTH,
    SMALL_MESSAGE_SIZE,
    ReceiveBuffer,
)
from .connection import NEED_DATA, ClientConnection, Event, ServerConnection
from .errors import LocalProtocolError, ProtocolError, RemoteProtocolError
from .frontend import (
    PROTOCOL_3_0,
    PROTOCOL_3_2,
    Bind,
    BindTemplate,
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
    Param,
    Parse,
    PasswordMessage,
    Query,
    SASLInitialResponse,
    SASLResponse,
    SSLRequest,
    StartupMessage,
    Sync,
    Terminate,
    decode_frontend,
    decode_startup,
    effective_format,
)
from .portal_run import PortalRun, read_portal_run
from .states import State


def encode(msg: Message) -> bytes:
    """The exact wire bytes of any message (LocalProtocolError if unencodable)."""
    return msg.encode()


__all__ = [
    "FIELD_CODES",
    "MAX_AUTH_MESSAGE_SIZE",
    "MAX_MESSAGE_SIZE",
    "MAX_STARTUP_PACKET_LENGTH",
    "NEED_DATA",
    "PROTOCOL_3_0",
    "PROTOCOL_3_2",
    "SMALL_MESSAGE_SIZE",
    "AuthenticationCleartextPassword",
    "AuthenticationMD5Password",
    "AuthenticationOk",
    "AuthenticationSASL",
    "AuthenticationSASLContinue",
    "AuthenticationSASLFinal",
    "BackendKeyData",
    "Bind",
    "BindComplete",
    "BindTemplate",
    "CancelRequest",
    "ClientConnection",
    "Close",
    "CloseComplete",
    "CommandComplete",
    "CopyData",
    "CopyDone",
    "CopyFail",
    "DataRow",
    "Describe",
    "EmptyQueryResponse",
    "ErrorResponse",
    "Event",
    "Execute",
    "FieldDescription",
    "Flush",
    "FunctionCall",
    "GSSENCRequest",
    "GSSENCResponse",
    "LocalProtocolError",
    "Message",
    "NegotiateProtocolVersion",
    "NoData",
    "NoticeResponse",
    "NotificationResponse",
    "Param",
    "ParameterDescription",
    "ParameterStatus",
    "Parse",
    "ParseComplete",
    "PasswordMessage",
    "PortalRun",
    "PortalSuspended",
    "ProtocolError",
    "Query",
    "RawMessage",
    "ReadyForQuery",
    "ReceiveBuffer",
    "RemoteProtocolError",
    "RowDescription",
    "SASLInitialResponse",
    "SASLResponse",
    "SSLRequest",
    "SSLResponse",
    "ServerConnection",
    "StartupMessage",
    "State",
    "Sync",
    "Terminate",
    "decode_backend",
    "decode_frontend",
    "decode_startup",
    "effective_format",
    "encode",
    "error_response",
    "read_portal_run",
]
