"""The door of ``glove-scratchpad mcp --http``: who may reach it, and as whom.

Rules:
- Where it listens: with no users configured, loopback only. ``check_listen``
  refuses any other address before anything starts, and a request from a peer
  that is not loopback is refused (403), as ``serve`` refuses such clients.
- Host and Origin are checked whatever the address (DNS rebinding): a Host
  header must name loopback (127.0.0.1, localhost, [::1]), the listening
  address, or one of ``mcp_allowed_hosts`` (421 otherwise); an Origin, when one
  is sent, must be one of those hosts over http or https, or one of
  ``mcp_allowed_origins`` (403 otherwise). The checks are the SDK's
  (``TransportSecuritySettings``), run before anything else.
- With users, every request signs in: ``Authorization: Bearer <mcp_token>``, or
  ``Basic`` with the user's name and password, checked against its SCRAM
  verifier (``auth.check_password``) in threads of the door's own, so a flood of
  guesses never takes the resolvers' threads or the event loop. Anything else is
  401, the same answer for an unknown user, a wrong password and a wrong token.
- The user signed in travels in the request's scope (``scope["user"]``, the
  SDK's ``AuthenticatedUser``): the MCP handlers read it (``user_of``), and the
  SDK keeps each MCP session to the user who opened it (another user's
  ``Mcp-Session-Id`` is 404, as an unknown one is).
- No credential is ever logged, echoed or kept: a basic sign-in that succeeded is
  remembered as a digest keyed by a per-process secret.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import hmac
import ipaddress
import logging
import secrets
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.authentication import AuthCredentials
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from .config import ANY_ADDRESS
from .net.auth import User, check_password

__all__ = ["LOOPBACK_HOSTS", "Door", "check_listen", "describe", "is_loopback",
           "transport_security", "user_of"]

log = logging.getLogger(__name__)

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
SIGN_IN_THREADS = 2  # password checks at once: each is a PBKDF2 of the verifier's iterations
KNOWN_SIGN_INS = 1024  # basic sign-ins remembered, so a client's next call skips the PBKDF2
REALM = "glove-scratchpad"
_SIGN_IN_HINT = ("Sign in with the header Authorization: Bearer <your user's mcp_token>, or "
                 "with HTTP basic: your user name and password (the [users.NAME] tables of "
                 "the server's config).")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is this machine's loopback."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_listen(host: str, users: Mapping[str, User]) -> None:
    """ValueError (one line) when listening on ``host`` would serve clients nobody signs in,
    or when two users share one token (neither could be told from the other)."""
    if not users and not is_loopback(host):
        raise ValueError(
            f"refusing to serve MCP over HTTP on {host or 'every address'} without users: "
            "anyone who reaches the port could run execute_sql. Configure [users.NAME] tables "
            "(a password, and an mcp_token for bearer sign-in), or listen on 127.0.0.1")
    tokens = [u.mcp_token.get_secret_value() for u in users.values() if u.mcp_token]
    if len(set(tokens)) != len(tokens):
        raise ValueError("two [users.NAME] tables have the same mcp_token: give each user "
                         "a token of its own")


def _bracketed(host: str) -> str:
    """An IPv6 address as a Host header writes it."""
    return f"[{host}]" if host.count(":") > 1 and not host.startswith("[") else host


def _patterns(host: str) -> list[str]:
    """Host header patterns of one allowed host: as given with a port, else any port."""
    host = _bracketed(host.strip().lower())
    has_port = host.rpartition("]")[2].count(":") == 1 if host.startswith("[") else ":" in host
    return [host] if has_port else [host, f"{host}:*"]


def transport_security(host: str, hosts: Iterable[str] = (), origins: Iterable[str] = ()
                       ) -> TransportSecuritySettings:
    """The Host and Origin headers answered when listening on ``host``: loopback's, the
    listening address's, ``hosts`` (``mcp_allowed_hosts``) and ``origins``."""
    allowed = [*LOOPBACK_HOSTS]
    if host not in ANY_ADDRESS:
        allowed.append(host)
    allowed += hosts
    patterns = list(dict.fromkeys(p for h in allowed for p in _patterns(h)))
    origin_patterns = [f"{scheme}://{p}" for p in patterns for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=patterns,
        allowed_origins=list(dict.fromkeys([*origin_patterns, *origins])))


def describe(host: str, users: Mapping[str, User], security: TransportSecuritySettings
             ) -> str:
    """Who may call, in one line for the log: what the door enforces."""
    if users:
        tokens = sum(1 for u in users.values() if u.mcp_token)
        who = (f"users: {len(users)} configured ({tokens} with an mcp_token); each signs in "
               "with its bearer token or HTTP basic")
    else:
        who = "no users configured: loopback clients only, without signing in"
    hosts = ", ".join(h for h in security.allowed_hosts if not h.endswith(":*"))
    return f"{who}; Host headers answered: {hosts} (any port)"


def user_of(request: Any) -> str | None:
    """The user a request signed in as; None without users (or outside HTTP)."""
    scope = getattr(request, "scope", None)
    user = scope.get("user") if scope is not None else None
    return user.username if isinstance(user, AuthenticatedUser) else None


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


class Door:
    """ASGI middleware before the MCP app: Host and Origin, then sign-in (module docstring)."""

    def __init__(self, app: ASGIApp, *, users: Mapping[str, User],
                 security: TransportSecuritySettings) -> None:
        self.app = app
        self.users = dict(users)
        self._guard = TransportSecurityMiddleware(security)
        self._tokens = [(_digest(u.mcp_token.get_secret_value()), name)
                        for name, u in self.users.items() if u.mcp_token]
        self._secret = secrets.token_bytes(32)
        self._known: OrderedDict[bytes, str] = OrderedDict()
        self._threads: ThreadPoolExecutor | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # the lifespan
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        refused = await self._guard.validate_request(request)
        if refused is None and not self.users:
            client = scope.get("client")
            if client and not is_loopback(str(client[0])):
                refused = JSONResponse({"error": "forbidden", "error_description": (
                    "Without configured users, only loopback clients are served.")},
                    status_code=403)
        elif refused is None:
            header = request.headers.get("authorization")
            name = await self._sign_in(header)
            if name is None:
                if header:
                    client = scope.get("client")
                    log.info("MCP sign-in refused (%s) from %s", header.partition(" ")[0][:16],
                             client[0] if client else "?")
                refused = self._unauthorized()
            else:
                token = AccessToken(token="", client_id=name, scopes=[], subject=name)
                scope = {**scope, "user": AuthenticatedUser(token),
                         "auth": AuthCredentials()}
        if refused is not None:
            await refused(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def close(self) -> None:
        if self._threads is not None:
            self._threads.shutdown(wait=False, cancel_futures=True)

    async def _sign_in(self, header: str | None) -> str | None:
        scheme, _, credentials = (header or "").partition(" ")
        credentials = credentials.strip()
        if scheme.lower() == "bearer" and credentials:
            given = _digest(credentials)
            found = None
            for digest, name in self._tokens:  # every one compared: no early answer
                if hmac.compare_digest(digest, given):
                    found = name
            return found
        if scheme.lower() == "basic" and credentials:
            try:
                user, sep, password = base64.b64decode(credentials, validate=True
                                                       ).decode().partition(":")
            except (binascii.Error, UnicodeDecodeError):
                return None
            return await self._password(user, password) if sep else None
        return None

    async def _password(self, user: str, password: str) -> str | None:
        key = hmac.new(self._secret, f"{user}\0{password}".encode(), hashlib.sha256).digest()
        if key in self._known:
            self._known.move_to_end(key)
            return user
        known = self.users.get(user)
        if self._threads is None:
            self._threads = ThreadPoolExecutor(SIGN_IN_THREADS, thread_name_prefix="mcp-sign-in")
        loop = asyncio.get_running_loop()
        ok = await loop.run_in_executor(self._threads, check_password, user, password,
                                        known.password if known else None)
        if not ok:
            return None
        self._known[key] = user
        if len(self._known) > KNOWN_SIGN_INS:
            self._known.popitem(last=False)
        return user

    @staticmethod
    def _unauthorized() -> Response:
        response = JSONResponse({"error": "unauthorized", "error_description": _SIGN_IN_HINT},
                                status_code=401)
        response.headers.append("WWW-Authenticate", f'Bearer realm="{REALM}"')
        response.headers.append("WWW-Authenticate", f'Basic realm="{REALM}", charset="UTF-8"')
        return response
