"""Byte tables: (message, exact wire bytes), written out by hand from the
"Message Formats" page of the PostgreSQL 18 docs, not produced by the encoder.
Entries marked "captured" were read off a real socket (libpq 18 talking to a
bare socket; PostgreSQL 18.6 answering a raw client); the SELECT 1 entries
match that capture too.

A few long ones use ``frame`` (type byte + Int32 length that counts itself +
body), which is the framing rule of the spec, not the codec under test.
"""

from __future__ import annotations

import struct

from glove_scratchpad.wire import (
    PROTOCOL_3_2,
    AuthenticationCleartextPassword,
    AuthenticationMD5Password,
    AuthenticationOk,
    AuthenticationSASL,
    AuthenticationSASLContinue,
    AuthenticationSASLFinal,
    BackendKeyData,
    Bind,
    BindComplete,
    CancelRequest,
    Close,
    CloseComplete,
    CommandComplete,
    CopyData,
    CopyDone,
    CopyFail,
    DataRow,
    Describe,
    EmptyQueryResponse,
    ErrorResponse,
    Execute,
    FieldDescription,
    Flush,
    FunctionCall,
    GSSENCRequest,
    NegotiateProtocolVersion,
    NoData,
    NoticeResponse,
    NotificationResponse,
    ParameterDescription,
    ParameterStatus,
    Parse,
    ParseComplete,
    PasswordMessage,
    PortalSuspended,
    Query,
    RawMessage,
    ReadyForQuery,
    RowDescription,
    SASLInitialResponse,
    SASLResponse,
    SSLRequest,
    StartupMessage,
    Sync,
    Terminate,
)


def frame(type_byte: bytes, body: bytes) -> bytes:
    return type_byte + struct.pack("!i", len(body) + 4) + body


KEY32 = bytes(range(32))  # a protocol 3.2 cancel key (Postgres 18 sends 32 bytes)

# Untyped first packets, decoded by a ServerConnection in STARTUP.
STARTUP = [
    (SSLRequest(), b"\x00\x00\x00\x08\x04\xd2\x16\x2f"),
    (GSSENCRequest(), b"\x00\x00\x00\x08\x04\xd2\x16\x30"),
    (
        CancelRequest(1234, b"\x01\x02\x03\x04"),
        b"\x00\x00\x00\x10\x04\xd2\x16\x2e\x00\x00\x04\xd2\x01\x02\x03\x04",
    ),
    (CancelRequest(1234, KEY32), b"\x00\x00\x00\x2c\x04\xd2\x16\x2e\x00\x00\x04\xd2" + KEY32),
    (
        StartupMessage(196608, {"user": "postgres", "database": "mydb"}),
        b"\x00\x00\x00\x25\x00\x03\x00\x00user\x00postgres\x00database\x00mydb\x00\x00",
    ),
    (  # captured: libpq 18 with application_name=psql, client_encoding=UTF8
        StartupMessage(
            196608,
            {
                "user": "postgres",
                "database": "postgres",
                "application_name": "psql",
                "client_encoding": "UTF8",
            },
        ),
        b"\x00\x00\x00\x54\x00\x03\x00\x00user\x00postgres\x00database\x00postgres\x00"
        b"application_name\x00psql\x00client_encoding\x00UTF8\x00\x00",
    ),
    (
        StartupMessage(PROTOCOL_3_2, {"user": "u", "_pq_.foo": "bar"}),
        b"\x00\x00\x00\x1d\x00\x03\x00\x02user\x00u\x00_pq_.foo\x00bar\x00\x00",
    ),
]

# 'p' messages, decoded by a ServerConnection told which kind to expect.
PASSWORD = [
    (PasswordMessage("secret"), b"p\x00\x00\x00\x0bsecret\x00"),
    (
        SASLInitialResponse("SCRAM-SHA-256", b"n,,n=,r=rOprNGfwEbeRWgbNEkqO"),
        b"p\x00\x00\x00\x32SCRAM-SHA-256\x00\x00\x00\x00\x1cn,,n=,r=rOprNGfwEbeRWgbNEkqO",
    ),
    (SASLInitialResponse("SCRAM-SHA-256"), b"p\x00\x00\x00\x16SCRAM-SHA-256\x00\xff\xff\xff\xff"),
    (SASLResponse(b"c=biws,r=abc,p=xyz"), b"p\x00\x00\x00\x16c=biws,r=abc,p=xyz"),
]

# Normal-phase frontend messages, decoded by a ServerConnection in NORMAL.
FRONTEND = [
    (Query("SELECT 1"), b"Q\x00\x00\x00\x0dSELECT 1\x00"),
    (Query(""), b"Q\x00\x00\x00\x05\x00"),
    (Query("SELECT 'é'"), b"Q\x00\x00\x00\x10SELECT '\xc3\xa9'\x00"),
    (Parse("", "SELECT $1", (23,)), b"P\x00\x00\x00\x15\x00SELECT $1\x00\x00\x01\x00\x00\x00\x17"),
    (Parse("s1", "SELECT 1"), b"P\x00\x00\x00\x12s1\x00SELECT 1\x00\x00\x00"),
    (Bind(), b"B\x00\x00\x00\x0c\x00\x00\x00\x00\x00\x00\x00\x00"),
    (
        Bind("p1", "s1", (1,), (b"\x00\x00\x00\x2a", None), (1,)),
        b"B\x00\x00\x00\x20p1\x00s1\x00\x00\x01\x00\x01\x00\x02"
        b"\x00\x00\x00\x04\x00\x00\x00\x2a\xff\xff\xff\xff\x00\x01\x00\x01",
    ),
    (Describe("S", "s1"), b"D\x00\x00\x00\x08Ss1\x00"),
    (Describe("P"), b"D\x00\x00\x00\x06P\x00"),
    (Close("S", "s1"), b"C\x00\x00\x00\x08Ss1\x00"),
    (Close("P"), b"C\x00\x00\x00\x06P\x00"),
    (Execute(), b"E\x00\x00\x00\x09\x00\x00\x00\x00\x00"),
    (Execute("p1", 100), b"E\x00\x00\x00\x0bp1\x00\x00\x00\x00\x64"),
    (Flush(), b"H\x00\x00\x00\x04"),
    (Sync(), b"S\x00\x00\x00\x04"),
    (Terminate(), b"X\x00\x00\x00\x04"),
    (CopyData(b"1\t2\n"), b"d\x00\x00\x00\x081\t2\n"),
    (CopyDone(), b"c\x00\x00\x00\x04"),
    (CopyFail("abort"), b"f\x00\x00\x00\x0aabort\x00"),
    (
        FunctionCall(1598, (0,), (b"x",), 0),
        b"F\x00\x00\x00\x15\x00\x00\x06\x3e\x00\x01\x00\x00\x00\x01\x00\x00\x00\x01x\x00\x00",
    ),
]

# Backend messages of the authentication phase (ClientConnection in AUTHENTICATING).
BACKEND_AUTH = [
    (AuthenticationOk(), b"R\x00\x00\x00\x08\x00\x00\x00\x00"),
    (AuthenticationCleartextPassword(), b"R\x00\x00\x00\x08\x00\x00\x00\x03"),
    (
        AuthenticationMD5Password(b"\x01\x02\x03\x04"),
        b"R\x00\x00\x00\x0c\x00\x00\x00\x05\x01\x02\x03\x04",
    ),
    (
        AuthenticationSASL(("SCRAM-SHA-256",)),
        b"R\x00\x00\x00\x17\x00\x00\x00\x0aSCRAM-SHA-256\x00\x00",
    ),
    (
        AuthenticationSASL(("SCRAM-SHA-256-PLUS", "SCRAM-SHA-256")),
        b"R\x00\x00\x00\x2a\x00\x00\x00\x0aSCRAM-SHA-256-PLUS\x00SCRAM-SHA-256\x00\x00",
    ),
    (
        AuthenticationSASLContinue(b"r=abc,s=c2FsdA==,i=4096"),
        b"R\x00\x00\x00\x1f\x00\x00\x00\x0br=abc,s=c2FsdA==,i=4096",
    ),
    (
        AuthenticationSASLFinal(b"v=c2lnbmF0dXJl"),
        b"R\x00\x00\x00\x16\x00\x00\x00\x0cv=c2lnbmF0dXJl",
    ),
    (
        NegotiateProtocolVersion(0, ("_pq_.foo",)),
        b"v\x00\x00\x00\x15\x00\x00\x00\x00\x00\x00\x00\x01_pq_.foo\x00",
    ),
]

ERROR_BODY = (  # captured from PostgreSQL 18.6: SELECT * FROM nope
    b'SERROR\x00VERROR\x00C42P01\x00Mrelation "nope" does not exist\x00P15\x00'
    b"Fparse_relation.c\x00L1498\x00RparserOpenTable\x00\x00"
)
ERROR = ErrorResponse(
    {
        "S": "ERROR",
        "V": "ERROR",
        "C": "42P01",
        "M": 'relation "nope" does not exist',
        "P": "15",
        "F": "parse_relation.c",
        "L": "1498",
        "R": "parserOpenTable",
    }
)

# Normal-phase backend messages (ClientConnection in NORMAL).
BACKEND = [
    (ParameterStatus("client_encoding", "UTF8"), b"S\x00\x00\x00\x19client_encoding\x00UTF8\x00"),
    (ParameterStatus("server_version", "16.2"), b"S\x00\x00\x00\x18server_version\x0016.2\x00"),
    (
        BackendKeyData(4242, b"\xde\xad\xbe\xef"),
        b"K\x00\x00\x00\x0c\x00\x00\x10\x92\xde\xad\xbe\xef",
    ),
    (BackendKeyData(4242, KEY32), b"K\x00\x00\x00\x28\x00\x00\x10\x92" + KEY32),
    (ReadyForQuery("I"), b"Z\x00\x00\x00\x05I"),
    (ReadyForQuery("T"), b"Z\x00\x00\x00\x05T"),
    (ReadyForQuery("E"), b"Z\x00\x00\x00\x05E"),
    (
        RowDescription((FieldDescription("?column?", 0, 0, 23, 4, -1, 0),)),
        b"T\x00\x00\x00\x21\x00\x01?column?\x00\x00\x00\x00\x00\x00\x00"
        b"\x00\x00\x00\x17\x00\x04\xff\xff\xff\xff\x00\x00",
    ),
    (
        RowDescription(
            (
                FieldDescription("id", 16384, 1, 23, 4, -1, 0),
                FieldDescription("name", 16384, 2, 25, -1, -1, 0),
            )
        ),
        b"T\x00\x00\x00\x32\x00\x02"
        b"id\x00\x00\x00\x40\x00\x00\x01\x00\x00\x00\x17\x00\x04\xff\xff\xff\xff\x00\x00"
        b"name\x00\x00\x00\x40\x00\x00\x02\x00\x00\x00\x19\xff\xff\xff\xff\xff\xff\x00\x00",
    ),
    (RowDescription(()), b"T\x00\x00\x00\x06\x00\x00"),
    (DataRow((b"1",)), b"D\x00\x00\x00\x0b\x00\x01\x00\x00\x00\x011"),
    (
        DataRow((b"", None, b"abc")),
        b"D\x00\x00\x00\x15\x00\x03\x00\x00\x00\x00\xff\xff\xff\xff\x00\x00\x00\x03abc",
    ),
    (DataRow(()), b"D\x00\x00\x00\x06\x00\x00"),
    (CommandComplete("SELECT 1"), b"C\x00\x00\x00\x0dSELECT 1\x00"),
    (CommandComplete("INSERT 0 3"), b"C\x00\x00\x00\x0fINSERT 0 3\x00"),
    (EmptyQueryResponse(), b"I\x00\x00\x00\x04"),
    (ERROR, frame(b"E", ERROR_BODY)),
    (
        NoticeResponse({"S": "NOTICE", "V": "NOTICE", "C": "00000", "M": "hi"}),
        b"N\x00\x00\x00\x20SNOTICE\x00VNOTICE\x00C00000\x00Mhi\x00\x00",
    ),
    (ParseComplete(), b"1\x00\x00\x00\x04"),
    (BindComplete(), b"2\x00\x00\x00\x04"),
    (CloseComplete(), b"3\x00\x00\x00\x04"),
    (NoData(), b"n\x00\x00\x00\x04"),
    (PortalSuspended(), b"s\x00\x00\x00\x04"),
    (ParameterDescription((23, 25)), b"t\x00\x00\x00\x0e\x00\x02\x00\x00\x00\x17\x00\x00\x00\x19"),
    (ParameterDescription((4_000_000_000,)), b"t\x00\x00\x00\x0a\x00\x01\xee\x6b\x28\x00"),
    (
        NotificationResponse(77, "chan", "hello"),
        b"A\x00\x00\x00\x13\x00\x00\x00\x4dchan\x00hello\x00",
    ),
    (CopyData(b"row\n"), b"d\x00\x00\x00\x08row\n"),
    (CopyDone(), b"c\x00\x00\x00\x04"),
    (RawMessage(b"G", b"\x00\x00\x00"), b"G\x00\x00\x00\x07\x00\x00\x00"),  # CopyInResponse
]

# Captured from PostgreSQL 18.6 (Unix socket, trust auth, protocol 3.0).
SELECT_1_RESPONSE = (
    b"T\x00\x00\x00!\x00\x01?column?\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x17\x00\x04"
    b"\xff\xff\xff\xff\x00\x00"
    b"D\x00\x00\x00\x0b\x00\x01\x00\x00\x00\x011"
    b"C\x00\x00\x00\rSELECT 1\x00"
    b"Z\x00\x00\x00\x05I"
)
STARTUP_RESPONSE = (  # everything after the StartupMessage, up to ReadyForQuery
    b"R\x00\x00\x00\x08\x00\x00\x00\x00"
    b"S\x00\x00\x00\x17in_hot_standby\x00off\x00"
    b"S\x00\x00\x00\x19integer_datetimes\x00on\x00"
    b"S\x00\x00\x00\x15TimeZone\x00Etc/UTC\x00"
    b"S\x00\x00\x00\x1bIntervalStyle\x00postgres\x00"
    b'S\x00\x00\x00 search_path\x00"$user", public\x00'
    b"S\x00\x00\x00\x14is_superuser\x00on\x00"
    b"S\x00\x00\x00\x16application_name\x00\x00"
    b"S\x00\x00\x00&default_transaction_read_only\x00off\x00"
    b"S\x00\x00\x00\x1ascram_iterations\x004096\x00"
    b"S\x00\x00\x00\x17DateStyle\x00ISO, MDY\x00"
    b"S\x00\x00\x00#standard_conforming_strings\x00on\x00"
    b"S\x00\x00\x00#session_authorization\x00postgres\x00"
    b"S\x00\x00\x00\x19client_encoding\x00UTF8\x00"
    b"S\x00\x00\x00\x18server_version\x0018.6\x00"
    b"S\x00\x00\x00\x19server_encoding\x00UTF8\x00"
    b"K\x00\x00\x00\x0c\x00\x00+\x1f\xbcy\xb7\x1a"
    b"Z\x00\x00\x00\x05I"
)
STARTUP_SETTINGS = {
    "in_hot_standby": "off",
    "integer_datetimes": "on",
    "TimeZone": "Etc/UTC",
    "IntervalStyle": "postgres",
    "search_path": '"$user", public',
    "is_superuser": "on",
    "application_name": "",
    "default_transaction_read_only": "off",
    "scram_iterations": "4096",
    "DateStyle": "ISO, MDY",
    "standard_conforming_strings": "on",
    "session_authorization": "postgres",
    "client_encoding": "UTF8",
    "server_version": "18.6",
    "server_encoding": "UTF8",
}
TEXT_COLUMNS_RESPONSE = (  # SELECT NULL::text, ''::text, 'abc'
    b"T\x00\x00\x00O\x00\x03"
    b"text\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x19\xff\xff\xff\xff\xff\xff\x00\x00"
    b"text\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x19\xff\xff\xff\xff\xff\xff\x00\x00"
    b"?column?\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x19\xff\xff\xff\xff\xff\xff\x00\x00"
    b"D\x00\x00\x00\x15\x00\x03\xff\xff\xff\xff\x00\x00\x00\x00\x00\x00\x00\x03abc"
    b"C\x00\x00\x00\rSELECT 1\x00"
    b"Z\x00\x00\x00\x05I"
)
