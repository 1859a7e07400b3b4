"""The configured secrets (``redaction.py``): a header's credential and a URL's password and
secret query values, once remembered, are taken out of any text an upstream gives back,
in the forms an echo may quote them; a value too short to be a secret is left alone."""

from __future__ import annotations

import secrets

from glove_scratchpad import errors
from glove_scratchpad.redaction import (
    MASK,
    redact_error,
    redact_secrets,
    remember,
    remember_header,
    remember_url,
)


def test_a_headers_credential_is_taken_out_of_an_echo():
    token = f"tok-{secrets.token_hex(8)}"
    remember_header(f"Bearer {token}")
    echoed = f"401: header was 'Authorization: Bearer {token}'"
    assert redact_secrets(echoed) == f"401: header was 'Authorization: {MASK}'"


def test_a_urls_password_and_secret_query_values_are_taken_out_also_encoded():
    password, key = f"p/w{secrets.token_hex(4)}", f"k{secrets.token_hex(6)}"
    remember_url(f"https://me:{password.replace('/', '%2F')}@api.test/x?api_key={key}&page=2")
    text = f"GET https://api.test/x?api_key={key}&page=2 failed for {password}; " \
        f"login {password.replace('/', '%2F')}"
    redacted = redact_secrets(text)
    assert key not in redacted and password not in redacted
    assert "%2F" not in redacted.split("login ")[1]
    assert "page=2" in redacted  # what is not a secret stays


def test_a_short_value_is_not_remembered():
    remember("ab")
    assert redact_secrets("a table of ab and abc") == "a table of ab and abc"


def test_an_errors_message_detail_and_hint_are_redacted():
    token = f"sek-{secrets.token_hex(8)}"
    remember(token)
    exc = redact_error(errors.ExternalRoutineError(
        f"upstream said {token}", detail=f"sent {token}", hint=f"retry {token}"))
    assert token not in f"{exc.message} {exc.detail} {exc.hint}"
    assert exc.message == f"upstream said {MASK}"
