"""Users and their SCRAM-SHA-256 verifiers.

Rules:
- Passwords are never stored: a user has a verifier in Postgres' own format,
  ``SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`` (base64), made
  by ``glove-scratchpad passwd``. SCRAM itself is done by scramp.
- An unknown user runs the same exchange against a verifier derived from a
  per-process secret, and fails the same way, with the same 28P01: a client
  cannot tell "no such user" from "wrong password".
- A user's settings become its session's ``Policy`` (``engine.policy``).
- HTTP basic (``glove-scratchpad mcp --http``) checks a password against the same
  verifier: its StoredKey is made again from the password with the verifier's salt
  and iterations (``check_password``). An unknown user costs the same and fails.
- A user's ``mcp_token`` (a bearer token for the MCP surface) is a secret: it may
  be read from the environment (``${VAR}``), and ``repr`` never shows it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import secrets
from typing import Any

import scramp
from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

__all__ = ["ScramExchange", "User", "check_password", "make_verifier", "parse_verifier"]

SCRAM = "SCRAM-SHA-256"
ITERATIONS = 4096  # Postgres' default scram_iterations
MIN_TOKEN = 16  # characters of an mcp_token: a guessable one would be a password without SCRAM
_VARIABLE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")
_FAKE_SECRET = secrets.token_bytes(32)  # per process: fake verifiers for unknown users


class User(BaseModel):
    """One ``[users.NAME]`` table of the config file."""

    # An error names the rule broken, never the value: a token is a secret.
    model_config = ConfigDict(hide_input_in_errors=True)

    password: str = Field(description="A SCRAM-SHA-256 verifier from `glove-scratchpad passwd`")
    writes: bool = False
    allow: list[str] = Field(default_factory=lambda: ["*"], description="Resource name globs")
    deny: list[str] = Field(default_factory=list, description="Resource name globs")
    row_limit: int | None = Field(None, description="At most this many rows per result")
    statement_timeout: float | None = Field(None, description="Seconds per statement")
    admin: bool = Field(False, description="Reads every session's calls in scratchpad.calls")
    mcp_token: SecretStr | None = Field(
        None, description="A bearer token that signs this user in to `glove-scratchpad mcp "
        "--http` (at least 16 characters); \"${VAR}\" reads it from the environment")

    @field_validator("password")
    @classmethod
    def _is_verifier(cls, value: str) -> str:
        parse_verifier(value)
        return value

    @field_validator("mcp_token", mode="before")
    @classmethod
    def _token(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        found = _VARIABLE.match(value)
        if found is not None:
            if found[1] not in os.environ:
                raise ValueError(f"the environment variable {found[1]} is not set")
            value = os.environ[found[1]]
        if len(value) < MIN_TOKEN:  # never shown: the message names the rule, not the value
            raise ValueError(f"mcp_token is shorter than {MIN_TOKEN} characters: make one "
                             "with `python -c 'import secrets; print(secrets.token_urlsafe())'`")
        return value


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def make_verifier(password: str, iterations: int = ITERATIONS) -> str:
    """A Postgres-format SCRAM-SHA-256 verifier for ``password``."""
    salt, stored, server, iterations = scramp.ScramMechanism(SCRAM).make_auth_info(
        password, iteration_count=iterations)
    return f"{SCRAM}${iterations}:{_b64(salt)}${_b64(stored)}:{_b64(server)}"


def parse_verifier(verifier: str) -> tuple[bytes, bytes, bytes, int]:
    """(salt, StoredKey, ServerKey, iterations); ValueError if it is not a verifier."""
    try:
        mech, rest = verifier.split("$", 1)
        head, keys = rest.split("$", 1)
        iterations, salt = head.split(":", 1)
        stored, server = keys.split(":", 1)
        if mech != SCRAM:
            raise ValueError
        return (base64.b64decode(salt, validate=True), base64.b64decode(stored, validate=True),
                base64.b64decode(server, validate=True), int(iterations))
    except ValueError:
        raise ValueError("not a SCRAM-SHA-256 verifier: make one with "
                         "`glove-scratchpad passwd`") from None


def _fake_verifier(user: str) -> tuple[bytes, bytes, bytes, int]:
    digest = hmac.new(_FAKE_SECRET, user.encode(), hashlib.sha256).digest()
    return digest[:16], hashlib.sha256(digest).digest(), hashlib.sha256(digest[::-1]).digest(), \
        ITERATIONS


def check_password(user: str, password: str, verifier: str | None) -> bool:
    """Whether ``password`` is the one ``verifier`` was made from (HTTP basic sign-in).

    The verifier keeps no password, only StoredKey = H(HMAC(Hi(password, salt, i),
    "Client Key")): it is made again from the password given, with the verifier's salt
    and iterations, and compared. ``verifier`` None (an unknown user) does the same work
    against a fake one, and fails.
    """
    salt, stored, _, iterations = parse_verifier(verifier) if verifier else _fake_verifier(user)
    try:
        _, key, _, _ = scramp.ScramMechanism(SCRAM).make_auth_info(
            password, iteration_count=iterations, salt=salt)
    except scramp.ScramException:  # a password SASLprep refuses, or too few iterations
        return False
    return hmac.compare_digest(key, stored) and verifier is not None


class ScramExchange:
    """The server side of one SCRAM-SHA-256 exchange (no channel binding)."""

    def __init__(self, user: str, verifier: str | None) -> None:
        info = parse_verifier(verifier) if verifier else _fake_verifier(user)
        self.known = verifier is not None
        self._server = scramp.ScramMechanism(SCRAM).make_server(lambda _name: info)

    def first(self, client_first: bytes) -> bytes:
        text = client_first.decode()
        # libpq leaves the SCRAM user name empty ("n=,"): Postgres takes the name from
        # the start-up packet. scramp refuses an empty name, so it is shown a
        # placeholder, and then given back the client's own bare message, which the
        # proofs of both sides are computed over.
        gs2_end = text.find(",", text.find(",") + 1) + 1
        bare = text[gs2_end:]
        if bare.startswith("n=,"):
            self._server.set_client_first(text[:gs2_end] + "n=*" + bare[2:])
            self._server.client_first_bare = bare
        else:
            self._server.set_client_first(text)
        return self._server.get_server_first().encode()

    def final(self, client_final: bytes) -> bytes | None:
        """The server-final message, or None when the proof is wrong."""
        try:
            self._server.set_client_final(client_final.decode())
        except scramp.ScramException:
            return None
        return self._server.get_server_final().encode() if self.known else None
