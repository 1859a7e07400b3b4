"""Byte tables in both directions, plus the state machine and error rules."""

from __future__ import annotations

import struct
from dataclasses import FrozenInstanceError
from functools import partial

import pytest

from glove_scratchpad import wire
from glove_scratchpad.wire import (
    NEED_DATA,
    PROTOCOL_3_2,
    AuthenticationCleartextPassword,
    AuthenticationOk,
    AuthenticationSASL,
    AuthenticationSASLContinue,
    AuthenticationSASLFinal,
    BackendKeyData,
    Bind,
    ClientConnection,
    CommandComplete,
    DataRow,
    Describe,
    ErrorResponse,
    Execute,
    FieldDescription,
    GSSENCRequest,
    GSSENCResponse,
    LocalProtocolError,
    Message,
    Parse,
    PasswordMessage,
    Query,
    ReadyForQuery,
    RemoteProtocolError,
    RowDescription,
    SASLInitialResponse,
    SASLResponse,
    ServerConnection,
    SSLRequest,
    SSLResponse,
    StartupMessage,
    State,
    Sync,
    Terminate,
    effective_format,
    encode,
    error_response,
)

from .wire_tables import (
    BACKEND,
    BACKEND_AUTH,
    ERROR,
    FRONTEND,
    KEY32,
    PASSWORD,
    SELECT_1_RESPONSE,
    STARTUP,
    STARTUP_RESPONSE,
    STARTUP_SETTINGS,
    TEXT_COLUMNS_RESPONSE,
    frame,
)

STARTUP_BYTES = encode(StartupMessage(parameters={"user": "u"}))


# --- helpers: connections parked in the state a table entry is decoded in ------------


def server_in(state: State, expect: type[Message] | None = None) -> ServerConnection:
    conn = ServerConnection()
    if state is not State.STARTUP:
        conn.receive_data(STARTUP_BYTES)
        assert isinstance(conn.next_event(), StartupMessage)
    if state is State.NORMAL:
        conn.send(AuthenticationOk())
    if expect is not None:
        conn.expect_password(expect)
    assert conn.state is state
    return conn


def client_in(state: State) -> ClientConnection:
    conn = ClientConnection(validate_rows=True)
    conn.send(StartupMessage(parameters={"user": "u"}))
    if state is State.NORMAL:
        conn.receive_data(encode(AuthenticationOk()))
        assert conn.next_event() == AuthenticationOk()
    assert conn.state is state
    return conn


def cases():
    """(id, message, bytes, factory of a connection that decodes it)."""
    for msg, data in STARTUP:
        yield msg, data, lambda: server_in(State.STARTUP)
    for msg, data in PASSWORD:
        yield msg, data, partial(server_in, State.AUTHENTICATING, type(msg))
    for msg, data in FRONTEND:
        yield msg, data, lambda: server_in(State.NORMAL)
    for msg, data in BACKEND_AUTH:
        yield msg, data, lambda: client_in(State.AUTHENTICATING)
    for msg, data in BACKEND:
        yield msg, data, lambda: client_in(State.NORMAL)


CASES = list(cases())
IDS = [f"{i}-{type(m).__name__}" for i, (m, _, _) in enumerate(CASES)]


# --- byte tables, both directions ---------------------------------------------------


@pytest.mark.parametrize(("msg", "data", "make"), CASES, ids=IDS)
def test_encode(msg, data, make):
    assert encode(msg) == data


@pytest.mark.parametrize(("msg", "data", "make"), CASES, ids=IDS)
def test_decode_whole(msg, data, make):
    conn = make()
    conn.receive_data(data)
    event = conn.next_event()
    assert event == msg
    assert type(event) is type(msg)
    if isinstance(msg, DataRow):
        assert event.values == msg.values and event.raw_body == data[5:]
    if conn.state not in (State.CLOSED, State.SSL_REQUESTED, State.GSSENC_REQUESTED):
        assert conn.next_event() is NEED_DATA


@pytest.mark.parametrize(("msg", "data", "make"), CASES, ids=IDS)
def test_decode_byte_by_byte(msg, data, make):
    conn = make()
    for i in range(len(data) - 1):
        conn.receive_data(data[i : i + 1])
        assert conn.next_event() is NEED_DATA
    conn.receive_data(data[-1:])
    assert conn.next_event() == msg


@pytest.mark.parametrize(("msg", "data", "make"), CASES, ids=IDS)
def test_decode_with_trailing_bytes(msg, data, make):
    conn = make()
    first_packet = conn.state is State.STARTUP
    # The start of a plausible next message: it must stay in the buffer.
    if first_packet:
        trailer = b"\x00\x00\x00"
    elif isinstance(conn, ClientConnection):
        trailer = b"Z\x00\x00"
    else:
        trailer = b"p\x00\x00" if conn.state is State.AUTHENTICATING else b"Q\x00\x00"
    conn.receive_data(data + trailer)
    assert conn.next_event() == msg
    if not first_packet and conn.state is not State.CLOSED:
        assert conn.next_event() is NEED_DATA
    assert conn.trailing_data == trailer


def test_whole_result_set_in_one_read():
    conn = client_in(State.NORMAL)
    conn.receive_data(SELECT_1_RESPONSE)
    events = [conn.next_event() for _ in range(5)]
    assert events == [
        RowDescription((FieldDescription("?column?", type_oid=23, type_size=4),)),
        DataRow([b"1"]),
        CommandComplete("SELECT 1"),
        ReadyForQuery("I"),
        NEED_DATA,
    ]


def test_captured_startup_response():
    conn = ClientConnection(validate_rows=True)
    conn.send(StartupMessage(parameters={"user": "postgres", "database": "postgres"}))
    conn.receive_data(STARTUP_RESPONSE)
    events = []
    while (event := conn.next_event()) is not NEED_DATA:
        events.append(event)
    assert events[0] == AuthenticationOk() and conn.state is State.NORMAL
    assert {e.name: e.value for e in events[1:-2]} == STARTUP_SETTINGS
    assert events[-2] == BackendKeyData(11039, b"\xbcy\xb7\x1a")
    assert events[-1] == ReadyForQuery("I")
    assert b"".join(map(encode, events)) == STARTUP_RESPONSE  # and back, byte for byte


def test_captured_text_columns_with_null_and_empty():
    conn = client_in(State.NORMAL)
    conn.receive_data(TEXT_COLUMNS_RESPONSE)
    description, row = conn.next_event(), conn.next_event()
    assert [f.name for f in description.fields] == ["text", "text", "?column?"]
    assert {(f.type_oid, f.type_size, f.type_modifier) for f in description.fields} == {
        (25, -1, -1)
    }
    assert row.values == (None, b"", b"abc")
    assert encode(description) + encode(row) == TEXT_COLUMNS_RESPONSE[:-20]


def test_every_message_class_is_in_a_table():
    tabled = {type(m) for m, _, _ in CASES} | {SSLResponse, GSSENCResponse}
    classes = {
        obj
        for obj in vars(wire).values()
        if isinstance(obj, type) and issubclass(obj, Message) and obj is not Message
    }
    assert classes <= tabled, classes - tabled


# --- message helpers ----------------------------------------------------------------


def test_error_response_helper_and_properties():
    err = error_response("ERROR", "42P01", 'relation "nope" does not exist', position=15)
    assert err.fields == {
        "S": "ERROR",
        "V": "ERROR",
        "C": "42P01",
        "M": 'relation "nope" does not exist',
        "P": "15",
    }
    assert (err.severity, err.code, err.position, err.detail, err.hint) == (
        "ERROR",
        "42P01",
        15,
        None,
        None,
    )
    assert ERROR.message == 'relation "nope" does not exist' and ERROR.position == 15
    full = error_response("FATAL", "08P01", "bad", detail="d", hint="h", table_name="t")
    assert full.fields["D"] == "d" and full.fields["H"] == "h" and full.fields["t"] == "t"
    with pytest.raises(LocalProtocolError):
        error_response("ERROR", "XX000", "x", colour="red")


def test_effective_format_rule():
    assert [effective_format((), i) for i in range(3)] == [0, 0, 0]
    assert [effective_format((1,), i) for i in range(3)] == [1, 1, 1]
    assert [effective_format((0, 1, 0), i) for i in range(3)] == [0, 1, 0]
    bind = Bind(param_formats=(1,), params=(b"a", b"b"), result_formats=(0, 1))
    assert bind.param_format(1) == 1 and bind.result_format(1) == 1


def test_raw_data_row_relay_is_header_plus_body():
    body = b"\x00\x02\x00\x00\x00\x02hi\xff\xff\xff\xff"
    row = DataRow.raw(body)
    assert encode(row) == b"D\x00\x00\x00\x10" + body
    assert row == DataRow([b"hi", None]) and hash(row) == hash(DataRow([b"hi", None]))
    assert row.values == (b"hi", None)
    with pytest.raises(FrozenInstanceError):
        row.values = ()  # type: ignore[misc]


@pytest.mark.parametrize(
    ("body", "match"),
    [
        (b"\x00", "truncated column count"),
        (b"\x00\x01\x00\x00", "truncated column length"),
        (b"\x00\x01\x00\x00\x00\x05ab", "bad column length 5"),
        (b"\x00\x00x", "trailing"),
    ],
)
def test_raw_data_row_split_errors(body, match):
    row = DataRow.raw(body)
    assert repr(row) == f"DataRow.raw({body!r})"
    with pytest.raises(RemoteProtocolError, match=match):
        row.values  # noqa: B018


def test_direct_decoders():
    assert wire.decode_frontend(ord("Q"), b"SELECT 1\x00") == Query("SELECT 1")
    assert wire.decode_backend(ord("Z"), b"I") == ReadyForQuery("I")
    assert wire.decode_startup(b"\x04\xd2\x16\x2f") == SSLRequest()
    with pytest.raises(RemoteProtocolError, match="invalid frontend message type 'z'"):
        wire.decode_frontend(ord("z"), b"")
    assert repr(DataRow([b"1"])) == "DataRow((b'1',))" and repr(NEED_DATA) == "NEED_DATA"


def test_lazy_data_row_reports_garbage_only_when_split():
    conn = ClientConnection()  # validate_rows=False: relay without looking
    conn.send(StartupMessage(parameters={"user": "u"}))
    conn.receive_data(encode(AuthenticationOk()) + frame(b"D", b"\x00\x05\x00"))
    conn.next_event()
    row = conn.next_event()
    assert isinstance(row, DataRow)
    with pytest.raises(RemoteProtocolError):
        row.values  # noqa: B018


def test_validated_data_row_fails_on_arrival():
    conn = client_in(State.NORMAL)
    conn.receive_data(frame(b"D", b"\x00\x01\xff\xff\xff\xfe"))
    with pytest.raises(RemoteProtocolError, match="column length"):
        conn.next_event()


@pytest.mark.parametrize(
    "msg",
    [
        Query("a\0b"),
        Execute("", 2**31),
        Describe("X"),
        ReadyForQuery("Q"),
        BackendKeyData(1, b"abc"),
        ErrorResponse({"SC": "x"}),
        Parse("", "", (2**32,)),
        DataRow(["not bytes"]),  # type: ignore[list-item]
    ],
)
def test_unencodable_messages_raise_local_error(msg):
    with pytest.raises(LocalProtocolError):
        encode(msg)


# --- startup phase ------------------------------------------------------------------


def test_ssl_then_gssenc_then_startup_in_one_buffer():
    conn = ServerConnection()
    conn.receive_data(encode(SSLRequest()) + encode(GSSENCRequest()) + STARTUP_BYTES)
    assert conn.next_event() == SSLRequest()
    assert conn.state is State.SSL_REQUESTED
    with pytest.raises(LocalProtocolError):
        conn.next_event()  # must answer first
    assert conn.answer_ssl(False) == b"N"
    assert conn.next_event() == GSSENCRequest()
    assert conn.answer_gssenc(False) == b"N"
    assert conn.next_event() == StartupMessage(parameters={"user": "u"})
    assert conn.state is State.AUTHENTICATING and conn.protocol_version == 196608


def test_ssl_accepted_then_startup():
    conn = ServerConnection()
    conn.receive_data(encode(SSLRequest()))
    conn.next_event()
    assert conn.answer_ssl(True) == b"S"
    conn.receive_data(encode(StartupMessage(PROTOCOL_3_2, {"user": "u"})))  # decrypted by caller
    assert conn.next_event().protocol_version == PROTOCOL_3_2
    assert conn.protocol_version == PROTOCOL_3_2


def test_unencrypted_data_after_ssl_request_is_refused():
    conn = ServerConnection()
    conn.receive_data(encode(SSLRequest()) + STARTUP_BYTES)
    conn.next_event()
    with pytest.raises(RemoteProtocolError, match="unencrypted"):
        conn.answer_ssl(True)
    assert conn.state is State.FAILED


@pytest.mark.parametrize(
    "packets",
    [
        [SSLRequest(), SSLRequest()],
        [GSSENCRequest(), GSSENCRequest()],
    ],
)
def test_encryption_request_only_once(packets):
    conn = ServerConnection()
    conn.receive_data(b"".join(map(encode, packets)))
    conn.next_event()
    conn.send(SSLResponse(False) if isinstance(packets[0], SSLRequest) else GSSENCResponse(False))
    with pytest.raises(RemoteProtocolError):
        conn.next_event()


def test_cancel_request_closes():
    conn = ServerConnection()
    conn.receive_data(STARTUP[3][1])
    assert conn.next_event() == wire.CancelRequest(1234, KEY32)
    assert conn.state is State.CLOSED
    with pytest.raises(LocalProtocolError):
        conn.next_event()


@pytest.mark.parametrize(
    ("packet", "match"),
    [
        (b"\x00\x00\x00\x08\x00\x02\x00\x00", "unsupported frontend protocol 2.0"),
        (b"\x00\x00\x00\x08\x04\xd2\x16\x31", "unsupported frontend protocol 1234.5681"),
        (b"\x00\x00\x00\x03", "invalid length of startup packet"),
        (b"\x00\x00\x27\x15", "invalid length of startup packet"),  # 10005: too long
        (b"\x00\x00\x00\x0c\x04\xd2\x16\x2f\x00\x00\x00\x00", "encryption request"),
        (b"\x00\x00\x00\x0f\x04\xd2\x16\x2e\x00\x00\x00\x01\x01\x02\x03", "cancel key"),
        (b"\x00\x00\x00\x0d\x00\x03\x00\x00user\x00", "NUL"),  # no terminator
        (b"\x00\x00\x00\x0e\x00\x03\x00\x00u\x00v\x00\x00\x00", "trailing"),
        (b"\x00\x00\x00\x0c\x00\x03\x00\x00\xff\x00\x00\x00", "UTF-8"),
    ],
)
def test_bad_startup_packets(packet, match):
    conn = ServerConnection()
    conn.receive_data(packet)
    with pytest.raises(RemoteProtocolError, match=match) as info:
        conn.next_event()
    assert info.value.sqlstate == "08P01"


def test_client_ssl_negotiation():
    conn = ClientConnection()
    assert conn.send(SSLRequest()) == b"\x00\x00\x00\x08\x04\xd2\x16\x2f"
    assert conn.next_event() is NEED_DATA
    conn.receive_data(b"N")
    assert conn.next_event() == SSLResponse(False)
    conn.send(GSSENCRequest())
    conn.receive_data(b"G")
    assert conn.next_event() == GSSENCResponse(True)
    with pytest.raises(LocalProtocolError):
        conn.send(SSLRequest())  # not after encryption is set up


def test_client_refuses_unencrypted_bytes_after_ssl_yes():
    conn = ClientConnection()
    conn.send(SSLRequest())
    conn.receive_data(b"S" + encode(AuthenticationOk()))
    with pytest.raises(RemoteProtocolError, match="unencrypted"):
        conn.next_event()


# --- authentication -----------------------------------------------------------------


def test_sasl_exchange_decodes_p_by_context():
    conn = server_in(State.AUTHENTICATING)
    conn.send(AuthenticationSASL(("SCRAM-SHA-256",)))
    conn.receive_data(encode(SASLInitialResponse("SCRAM-SHA-256", b"n,,n=,r=x")))
    assert conn.next_event() == SASLInitialResponse("SCRAM-SHA-256", b"n,,n=,r=x")
    conn.send(AuthenticationSASLContinue(b"r=xy,s=c2FsdA==,i=4096"))
    conn.receive_data(encode(SASLResponse(b"c=biws,r=xy,p=cA==")))
    assert conn.next_event() == SASLResponse(b"c=biws,r=xy,p=cA==")
    data = conn.send_many(
        [
            AuthenticationSASLFinal(b"v=dg=="),
            AuthenticationOk(),
            wire.ParameterStatus("server_version", "16.2"),
            BackendKeyData(7, b"abcd"),
            ReadyForQuery("I"),
        ]
    )
    assert data.startswith(b"R\x00\x00\x00\x0e\x00\x00\x00\x0cv=dg==R\x00\x00\x00\x08")
    assert data.endswith(b"Z\x00\x00\x00\x05I")
    assert conn.state is State.NORMAL


def test_password_message_without_request_is_refused():
    conn = server_in(State.AUTHENTICATING)
    conn.receive_data(encode(PasswordMessage("x")))
    with pytest.raises(RemoteProtocolError, match="unexpected password"):
        conn.next_event()


def test_one_password_per_request():
    conn = server_in(State.AUTHENTICATING)
    conn.send(AuthenticationCleartextPassword())
    conn.receive_data(encode(PasswordMessage("a")) * 2)
    assert conn.next_event() == PasswordMessage("a")
    with pytest.raises(RemoteProtocolError):
        conn.next_event()


def test_query_during_authentication_is_refused_on_its_type_byte():
    conn = server_in(State.AUTHENTICATING)
    conn.receive_data(b"Q")
    with pytest.raises(RemoteProtocolError, match="unexpected message type 'Q'"):
        conn.next_event()


def test_terminate_during_authentication():
    conn = server_in(State.AUTHENTICATING)
    conn.receive_data(encode(Terminate()))
    assert conn.next_event() == Terminate() and conn.state is State.CLOSED


def test_expect_password_by_name():
    conn = server_in(State.AUTHENTICATING)
    conn.expect_password("SASLResponse")
    conn.receive_data(b"p\x00\x00\x00\x06hi")
    assert conn.next_event() == SASLResponse(b"hi")
    with pytest.raises(LocalProtocolError):
        conn.expect_password("Kerberos")


@pytest.mark.parametrize(
    ("state", "msg"),
    [
        (State.STARTUP, AuthenticationOk()),
        (State.AUTHENTICATING, DataRow([b"1"])),
        (State.AUTHENTICATING, ReadyForQuery()),
        (State.NORMAL, AuthenticationOk()),
        (State.NORMAL, Query("SELECT 1")),  # a frontend message
    ],
)
def test_server_refuses_to_send_out_of_phase(state, msg):
    conn = server_in(state)
    with pytest.raises(LocalProtocolError):
        conn.send(msg)
    assert conn.state is state


def test_client_refuses_to_send_out_of_phase():
    conn = ClientConnection()
    with pytest.raises(LocalProtocolError):
        conn.send(Query("SELECT 1"))
    conn.send(StartupMessage(parameters={"user": "u"}))
    with pytest.raises(LocalProtocolError):
        conn.send(Query("SELECT 1"))
    conn.receive_data(encode(AuthenticationOk()))
    conn.next_event()
    assert conn.send(Query("SELECT 1")) == b"Q\x00\x00\x00\x0dSELECT 1\x00"


# --- discard until Sync -------------------------------------------------------------


def test_error_recovery_discards_until_sync():
    conn = server_in(State.NORMAL)
    batch = [Parse("", "SELEC 1"), Bind(), Describe("P"), Execute(), Sync(), Query("SELECT 2")]
    conn.receive_data(b"".join(map(encode, batch)))
    assert conn.next_event() == Parse("", "SELEC 1")
    conn.send(error_response("ERROR", "42601", 'syntax error at or near "SELEC"'))
    conn.start_error_recovery()
    assert conn.in_error_recovery
    assert conn.next_event() == Sync()
    assert not conn.in_error_recovery
    assert conn.next_event() == Query("SELECT 2")


def test_error_recovery_waits_for_sync_across_reads():
    conn = server_in(State.NORMAL)
    conn.start_error_recovery()
    data = encode(Bind()) + encode(Execute()) + encode(Sync())
    for i in range(len(data) - 1):
        conn.receive_data(data[i : i + 1])
        assert conn.next_event() is NEED_DATA
    conn.receive_data(data[-1:])
    assert conn.next_event() == Sync()


def test_error_recovery_passes_terminate_and_still_checks_types():
    conn = server_in(State.NORMAL)
    conn.start_error_recovery()
    conn.receive_data(encode(Execute()) + encode(Terminate()))
    assert conn.next_event() == Terminate()
    conn = server_in(State.NORMAL)
    conn.start_error_recovery()
    conn.receive_data(encode(Execute()) + b"z\x00\x00\x00\x04")
    with pytest.raises(RemoteProtocolError, match="unexpected message type 'z'"):
        conn.next_event()


def test_error_recovery_only_in_normal_phase():
    with pytest.raises(LocalProtocolError):
        server_in(State.AUTHENTICATING).start_error_recovery()


# --- malformed frontend input -------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"Q\x00\x00\x00\x03", "invalid message length 3"),
        (b"S\x00\x00\x4e\x21", "invalid message length 20001"),  # Sync is small
        (b"Q\xff\xff\xff\xff", "invalid message length"),
        (b"Q\x00\x00\x00\x05x", "NUL"),
        (b"Q\x00\x00\x00\x06\xff\x00", "UTF-8"),
        (b"S\x00\x00\x00\x05\x00", "trailing"),
        (b"E\x00\x00\x00\x07p\x00\x00", "truncated"),
        (b"B\x00\x00\x00\x0e\x00\x00\x00\x00\x00\x01\xff\xff\xff\xfe", "value length -2"),
        (b"B\x00\x00\x00\x10\x00\x00\x00\x00\x00\x01\x00\x00\x00\x04\x00\x00", "truncated"),
        (
            b"B\x00\x00\x00\x1c\x00\x00\x00\x02\x00\x00\x00\x00\x00\x03"
            b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x00\x00",
            "2 parameter formats but 3 parameters",
        ),
        (b"D\x00\x00\x00\x06X\x00", "invalid kind"),
        (b"z", "unexpected message type 'z'"),
        (b"p\x00\x00\x00\x05\x00", "unexpected message type 'p'"),
        (b"P\x00\x00\x00\x0a\x00\x00\x00\x02\x00\x00", "truncated"),
    ],
)
def test_bad_frontend_messages(data, match):
    conn = server_in(State.NORMAL)
    conn.receive_data(data)
    with pytest.raises(RemoteProtocolError, match=match) as info:
        conn.next_event()
    assert info.value.sqlstate == "08P01"
    assert conn.state is State.FAILED
    with pytest.raises(RemoteProtocolError, match=match):
        conn.next_event()  # fail fast, forever
    conn.receive_data(encode(Sync()))
    with pytest.raises(RemoteProtocolError):
        conn.next_event()
    # The server may still report the violation, and nothing else.
    assert conn.send(error_response("FATAL", "08P01", "protocol violation")).startswith(b"E")
    with pytest.raises(LocalProtocolError):
        conn.send(ReadyForQuery())


def test_parameter_count_is_unsigned_like_postgres():
    params = tuple(b"x" for _ in range(40_000))
    conn = server_in(State.NORMAL)
    conn.receive_data(encode(Bind(params=params)))
    assert conn.next_event().params == params


# --- malformed backend input --------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"R\x00\x00\x00\x08\x00\x00\x00\x07", "unsupported authentication request 7"),
        (b"R\x00\x00\x00\x06\x00\x00", "unsupported authentication request None"),
        (b"K\x00\x00\x00\x0b\x00\x00\x00\x01abc", "secret key length"),
        (b"Z\x00\x00\x00\x05Q", "transaction status"),
        (b"E\x00\x00\x00\x06SX", "NUL"),
        (b"T\x00\x00\x00\x0b\x00\x01a\x00\x00\x00\x00", "truncated"),
        (b"v\x00\x00\x00\x0c\x00\x00\x00\x00\xff\xff\xff\xff", "negative count"),
        (b"y\x00\x00\x00\x04", "invalid backend message type 'y'"),
    ],
)
def test_bad_backend_messages(data, match):
    conn = client_in(State.NORMAL)
    conn.receive_data(data)
    with pytest.raises(RemoteProtocolError, match=match):
        conn.next_event()
    with pytest.raises(RemoteProtocolError):
        conn.next_event()


def test_backend_message_out_of_phase_is_refused():
    conn = client_in(State.AUTHENTICATING)
    conn.receive_data(encode(DataRow([b"1"])))
    with pytest.raises(RemoteProtocolError, match="not allowed in state AUTHENTICATING"):
        conn.next_event()


def test_client_gets_nothing_before_startup():
    conn = ClientConnection()
    assert conn.next_event() is NEED_DATA
    conn.receive_data(b"R")
    with pytest.raises(RemoteProtocolError):
        conn.next_event()


def test_length_words_are_big_endian_int32():
    # A guard on the table helper itself: the spec's framing.
    assert frame(b"Q", b"x\x00") == b"Q" + struct.pack(">i", 6) + b"x\x00"
