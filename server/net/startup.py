"""Start-up: a connection from its first byte to its first ReadyForQuery.

An SSLRequest is answered: TLS if the server has a certificate. A GSSENCRequest
is always refused. A CancelRequest is routed to the connection it names (through
the worker that owns it, with ``--workers``), and ends this one. A
StartupMessage is checked, authenticated and applied. Then come
ParameterStatus, BackendKeyData and ReadyForQuery, and ``start_up`` returns the
session.

Rules:
- The protocol is 3.0. A newer minor version, or ``_pq_.`` options, is
  negotiated down (NegotiateProtocolVersion). Any other major version is refused.
- The database named must be the one the server serves. The refusal says
  which database that is.
- Authentication (``describe_auth`` says it for the banner, from the same config):
  - With ``require_tls``, a client not on TLS is refused first.
  - With ``[users]`` configured, every client needs SCRAM-SHA-256 against its
    user's verifier, from any address. A wrong password and an unknown user
    fail the same way (28P01). The session's policy is the user's
    (``Policy.of``).
  - With no users, any user name may connect from loopback or a Unix socket,
    with no password, and the policy is the server's ``writes``. Other
    addresses are refused (28000).
- Start-up parameters change nothing that a SET could not (``STARTUP_SETTINGS``,
  given directly or as ``options=-c name=value``). One that fails is a
  WARNING, not a refusal.
- A connection signed in takes a session slot (``slots``): past ``max_connections``
  less those reserved for admins, it is refused (53300) before its session opens.
- A refusal is one FATAL ErrorResponse, and then the connection ends.
- This module reaches its connection through ``Channel`` and the server through
  ``ServerState``. It imports neither the connection nor the server.
"""

from __future__ import annotations

import ipaddress
import secrets
import ssl
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from glove_scratchpad import errors
from glove_scratchpad.wire import (
    AuthenticationOk,
    AuthenticationSASL,
    AuthenticationSASLContinue,
    AuthenticationSASLFinal,
    BackendKeyData,
    CancelRequest,
    ErrorResponse,
    GSSENCRequest,
    NegotiateProtocolVersion,
    NoticeResponse,
    ParameterStatus,
    ReadyForQuery,
    SASLInitialResponse,
    SASLResponse,
    ServerConnection,
    SSLRequest,
    StartupMessage,
)

from ..engine.policy import Policy
from ..engine.statement import Endpoint
from .auth import SCRAM, ScramExchange
from .copy import ClientCopy
from .state import BackendKey, ServerState

if TYPE_CHECKING:
    from ..config import ServerConfig
    from ..engine.session import Session

__all__ = ["STARTUP_SETTINGS", "Channel", "Started", "describe_auth", "parameter_status",
           "start_up", "startup_settings", "trusted_peer"]

PROTOCOL_MINOR = 0  # we speak 3.0; newer minor versions are negotiated down
# Start-up parameters a client may set, applied as if by SET (and nothing else).
STARTUP_SETTINGS = ("application_name", "DateStyle", "TimeZone", "IntervalStyle",
                    "extra_float_digits", "client_min_messages", "bytea_output",
                    "search_path", "statement_timeout")
# ParameterStatus values that describe this server rather than the sidecar.
_OURS = {"is_superuser": "off", "in_hot_standby": "off", "client_encoding": "UTF8"}
_REPORTED = ("application_name", "client_encoding", "DateStyle",
             "default_transaction_read_only", "in_hot_standby", "integer_datetimes",
             "IntervalStyle", "is_superuser", "server_encoding", "server_version",
             "session_authorization", "standard_conforming_strings", "TimeZone")


class Channel(Protocol):
    """What start-up needs of its connection."""

    conn: ServerConnection  # the codec, in its start-up phase
    peer: Any  # the transport's peername: (host, port, …), or None for a Unix socket
    local: Any  # the transport's sockname: this server's (host, port, …)

    async def read_event(self) -> Any: ...

    def write(self, data: bytes) -> None: ...

    def send(self, msg: Any) -> None: ...

    async def flush(self) -> None: ...

    async def start_tls(self, context: ssl.SSLContext) -> None: ...

    def uses_tls(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class Started:
    """A connection that finished its start-up."""

    session: Session
    key: BackendKey  # what its BackendKeyData said, and a CancelRequest must name


async def start_up(channel: Channel, state: ServerState) -> Started | None:
    """Run the start-up phase; None when the connection must end (refused, or a cancel)."""
    while True:
        msg = await channel.read_event()
        if isinstance(msg, SSLRequest):
            tls = state.tls_context
            channel.write(channel.conn.answer_ssl(tls is not None))
            if tls is not None:
                await channel.start_tls(tls)
        elif isinstance(msg, GSSENCRequest):
            channel.write(channel.conn.answer_gssenc(False))
        elif isinstance(msg, CancelRequest):
            await state.route_cancel((msg.process_id, msg.secret_key))
            return None
        elif isinstance(msg, StartupMessage):
            started = await _accept(channel, state, msg)
            await channel.flush()
            return started


async def _accept(channel: Channel, state: ServerState, msg: StartupMessage) -> Started | None:
    config = state.config
    major, minor = msg.protocol_version >> 16, msg.protocol_version & 0xFFFF
    params = dict(msg.parameters)
    if major != 3:
        _fatal(channel, errors.FeatureNotSupported(
            f"unsupported frontend protocol {major}.{minor}: server supports 3.0"))
        return None
    unknown = tuple(k for k in params if k.startswith("_pq_."))
    if minor > PROTOCOL_MINOR or unknown:
        channel.send(NegotiateProtocolVersion(PROTOCOL_MINOR, unknown))
    user = params.get("user", "")
    database = params.get("database") or user
    if not user:
        _fatal(channel, errors.InvalidAuthorizationSpecification(
            "no PostgreSQL user name specified in startup packet"))
        return None
    if database != config.database:
        _fatal(channel, errors.InvalidCatalogName(
            f'database "{database}" does not exist',
            hint=f"This server serves one database: connect to \"{config.database}\" "
            f"(for example: psql -h {config.host} -p {config.port} -d {config.database}).",
        ))
        return None
    policy = await _authenticate(channel, config, user)
    if policy is None:
        return None
    refused = state.slots.sign_in(policy.admin)
    if refused is not None:
        _fatal(channel, refused)
        return None
    try:
        return await _open(channel, state, user, policy, params)
    except BaseException:
        state.slots.sign_out()  # the connection that took it has no session to give it back
        raise


async def _open(channel: Channel, state: ServerState, user: str, policy: Policy,
                params: dict[str, str]) -> Started:
    """A signed-in connection's session, its settings applied and announced."""
    config = state.config
    channel.send(AuthenticationOk())
    session = await state.db.open_session(policy)
    session.user = user
    session.copy = ClientCopy(channel)  # a COPY's data travels on this connection
    local = channel.local
    session.endpoint = Endpoint(ssl=channel.uses_tls(),
                                port=local[1] if isinstance(local, tuple) else config.port,
                                max_connections=config.max_connections)
    applied = await _apply_settings(channel, session, params)
    status = parameter_status(state.sidecar_parameters, user, applied, session.writes)
    for name, value in status.items():
        channel.send(ParameterStatus(name, value))
    key = state.new_key(secrets.token_bytes(4))
    channel.send(BackendKeyData(*key))
    channel.send(ReadyForQuery("I"))
    return Started(session, key)


async def _authenticate(channel: Channel, config: ServerConfig, user: str) -> Policy | None:
    """SCRAM-SHA-256 against the configured users, or loopback trust when there are none."""
    if config.require_tls and not channel.uses_tls():
        _fatal(channel, errors.InvalidAuthorizationSpecification(
            "this server requires TLS", hint="Connect with sslmode=require (or verify-full)."))
        return None
    if not config.users:
        if trusted_peer(channel.peer):
            return Policy(writes=config.writes)
        _fatal(channel, errors.InvalidAuthorizationSpecification(
            f'no trust for user "{user}" from {channel.peer[0] if channel.peer else "?"}',
            hint="Without configured users, only loopback connections are accepted: set "
                 "GLOVE_SCRATCHPAD_USER and GLOVE_SCRATCHPAD_PASSWORD (or a [users] table "
                 "in the config file) to sign in from other addresses."))
        return None
    known = config.users.get(user)
    exchange = ScramExchange(user, known.password if known else None)
    failed = errors.InvalidPassword(f'password authentication failed for user "{user}"')
    channel.send(AuthenticationSASL((SCRAM,)))
    await channel.flush()
    first = await channel.read_event()
    if not isinstance(first, SASLInitialResponse) or first.mechanism != SCRAM:
        _fatal(channel, failed)
        return None
    try:
        channel.send(AuthenticationSASLContinue(exchange.first(first.data or b"")))
    except Exception:
        _fatal(channel, failed)
        return None
    await channel.flush()
    final = await channel.read_event()
    proof = exchange.final(final.data) if isinstance(final, SASLResponse) else None
    if proof is None or known is None:
        _fatal(channel, failed)
        return None
    channel.send(AuthenticationSASLFinal(proof))
    return Policy.of(known)


async def _apply_settings(channel: Channel, session: Session, params: dict[str, str]
                          ) -> dict[str, str]:
    """Each start-up setting as a SET; the ParameterStatus values they changed."""
    applied: dict[str, str] = {}
    for name, value in startup_settings(params).items():
        sql = f"SET {name} TO '" + value.replace("'", "''") + "'"
        try:
            result = await session.execute(sql)
        except errors.SqlError as exc:
            channel.send(NoticeResponse({"S": "WARNING", "V": "WARNING", "C": exc.sqlstate,
                                         "M": f"start-up parameter {name} ignored: "
                                              f"{exc.message}"}))
            continue
        applied.update(result.parameters)
    return applied


def startup_settings(params: dict[str, str]) -> dict[str, str]:
    """The settings a StartupMessage asks for, directly or in ``options`` (``-c name=value``
    or ``--name=value``), by their canonical names; every other parameter is ignored."""
    canonical = {name.lower(): name for name in STARTUP_SETTINGS}
    wanted: dict[str, str] = {}
    for name, value in params.items():
        if name.lower() in canonical:
            wanted[canonical[name.lower()]] = value
    tokens = params.get("options", "").replace("--", "-c ").split()
    for i, tok in enumerate(tokens):
        if tok == "-c" and i + 1 < len(tokens) and "=" in tokens[i + 1]:
            name, _, value = tokens[i + 1].partition("=")
            if name.lower() in canonical:
                wanted[canonical[name.lower()]] = value
    return wanted


def trusted_peer(peer: Any) -> bool:
    """Without configured users: loopback and Unix-socket peers only."""
    if not peer or not isinstance(peer, tuple):
        return True  # a Unix socket
    try:
        return ipaddress.ip_address(peer[0]).is_loopback
    except ValueError:
        return False


def parameter_status(sidecar: dict[str, str], user: str, applied: dict[str, str],
                     writes: bool) -> dict[str, str]:
    """The ParameterStatus values a new session starts with: the sidecar's, except
    those that describe this server, then the session's own and its start-up settings."""
    values = {k: v for k, v in sidecar.items() if k in _REPORTED}
    values.update(_OURS)
    values["session_authorization"] = user
    values["default_transaction_read_only"] = "off" if writes else "on"
    values.setdefault("application_name", "")
    values.update(applied)
    return values


def describe_auth(config: ServerConfig) -> str:
    """Who may connect, in one line for the banner: the policy ``_authenticate`` enforces."""
    if config.users:
        who = (f"users: {len(config.users)} configured; each signs in with its password "
               "(SCRAM-SHA-256), from any address")
    else:
        who = ("no users configured: any user name may connect from loopback "
               "without a password; other addresses are refused")
    if config.require_tls:
        return who + "; TLS required"
    return who + ("; TLS offered" if config.tls_cert and config.tls_key else "")


def _fatal(channel: Channel, err: errors.SqlError) -> None:
    fields = err.as_fields()
    fields["S"] = fields["V"] = "FATAL"
    channel.send(ErrorResponse(fields))
