"""The configured secrets, and the one function that takes them out of upstream text.

An API or a tool may answer with text that holds what the server sent it: an error
page that echoes the request's headers, a message that quotes the URL. That text
becomes an error's message, DETAIL or HINT, an audit or journal row, a log line.
Whatever the server derives from an upstream answer passes through
``redact_secrets`` where it enters the product, and the log's formatters pass
every line through it once more.

Rules:
- A secret is remembered when the configuration gives it (``remember_header``,
  ``remember_url``), never shown: a header's value after ``${VAR}`` substitution
  (and its credential alone, after a scheme such as ``Bearer``; a ``Basic`` one
  decoded too), the password of a URL (and the Basic header its userinfo becomes)
  and the values of its query parameters whose names say they hold a secret.
- Each is also remembered as a URL would carry it (percent-encoded), since an echo
  may quote a URL.
- A value shorter than ``MIN_SECRET`` characters is not remembered: replacing it
  would mangle ordinary text, and it protects nothing.
- The registry is the process's: one process serves one configuration, and
  redacting another's secrets too costs nothing.
"""

from __future__ import annotations

import base64
import binascii
import re
import threading
from typing import TypeVar
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from .errors import SqlError

__all__ = ["MASK", "MIN_SECRET", "SECRET_NAME", "redact_error", "redact_secrets", "remember",
           "remember_header", "remember_url"]

MASK = "***"
MIN_SECRET = 4  # characters: shorter values are not worth hiding (and would mangle text)
# A query parameter whose name says it holds a secret.
SECRET_NAME = re.compile(r"token|key|secret|sig|password|passwd|auth|credential|session",
                         re.IGNORECASE)

E = TypeVar("E", bound=BaseException)
_lock = threading.Lock()
_known: set[str] = set()
_pattern: re.Pattern[str] | None = None


def remember(*values: str | None) -> None:
    """Secrets to redact from now on (and their percent-encoded forms)."""
    global _pattern
    new = set()
    for value in values:
        if not value:
            continue
        for form in (value, quote(value, safe=""), quote(value)):
            if len(form) >= MIN_SECRET and form not in _known:
                new.add(form)
    if not new:
        return
    with _lock:
        _known.update(new)
        # Longest first: a secret that holds another is replaced whole.
        _pattern = re.compile("|".join(re.escape(s) for s in sorted(
            _known, key=len, reverse=True)))


def remember_header(value: str) -> None:
    """A credential header's value: whole, its credential after the scheme word, and a
    ``Basic`` credential's user and password decoded."""
    if value in _known:
        return  # every request's headers come here: the common case is one lookup
    remember(value)
    scheme, _, credential = value.strip().partition(" ")
    credential = credential.strip()
    if not credential:
        return
    remember(credential)
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(credential, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return
        remember(decoded, decoded.partition(":")[2])


def remember_url(url: str | None) -> None:
    """A URL's credentials: its userinfo (and the Basic header it becomes), and the values
    of its query parameters whose names say they are secrets."""
    if not url:
        return
    try:
        parts = urlsplit(url)
        user, password = parts.username, parts.password
    except ValueError:  # not a URL: nothing in it is known to be a credential
        return
    if password:
        plain = unquote(password)
        remember(password, plain)
        pair = f"{unquote(user or '')}:{plain}"
        remember(base64.b64encode(pair.encode()).decode())
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if SECRET_NAME.search(name):
            remember(value)


def redact_secrets(text: str) -> str:
    """``text`` with every remembered secret replaced by ``***``."""
    pattern = _pattern
    if pattern is None or not text:
        return text
    return pattern.sub(MASK, text)


def redact_error(exc: E) -> E:
    """A resolver's SQL error with every remembered secret taken out of its message,
    DETAIL and HINT (the same error when none was in them); any other exception as it
    is, its text redacted where it is worded (``redact_secrets``)."""
    if _pattern is None or not isinstance(exc, SqlError):
        return exc
    changes = {}
    for name in ("message", "detail", "hint"):
        text = getattr(exc, name)
        if text:
            clean = redact_secrets(text)
            if clean != text:
                changes[name] = clean
    return exc.replaced(**changes) if changes else exc  # type: ignore[return-value]
