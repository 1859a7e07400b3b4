"""Requests to one HTTP API: credentials, timeouts, retries, a shared rate, errors.

Rules:

- One ``httpx.AsyncClient`` per API (one pool of connections), made on first use
  and closed with the API.
- A request carries its role's headers (``ApiConfig.headers_for``), and goes to
  the API's own origin only: a next page on another host is refused, since the
  credentials are the API's.
- A GET is made again on 429, 502, 503 and 504, ``retries`` times, after the
  ``Retry-After`` the API asked for (seconds or a date) or an exponential backoff,
  never past the call's deadline. A write is never made again by itself.
- A write whose request may have reached the API without its answer reaching us
  (``outcome_unknown``: a read timeout, a connection lost after sending, a
  gateway's 502 or 504) is 08007: it may have happened. One that failed before
  its first byte left (no connection, no pool slot) did not, and is an error as
  any other.
- The API's requests share one token bucket (``rate``), whatever table makes them.
- Errors: 401 is 28000 and 403 42501, each with a HINT naming the credentials
  entry; any other 4xx is 38000; a 5xx, once retries are spent, 58030. What the API
  said is the upstream's text: it is only ever the DETAIL, cut short and labelled
  ("the API said: …"), never the message or the HINT.
- Every upstream byte is budgeted: an answer is read within ``max_response_bytes``,
  as sent and once decompressed (54000 past it), and every request of a read, a
  next page or a retry too, counts against the statement's call budget
  (``ctx.charge``, which a write's context does not carry).
- A GET's redirects (3xx with a ``Location``) are followed, at most ``MAX_REDIRECTS``,
  each under ``base_url`` as any request is (one elsewhere is refused, not sent: the
  credentials are the API's); a write's never are.
- A request goes under ``base_url`` only: its URL, as httpx will send it (dot
  segments removed), is checked against the prefix, and that URL is the one the
  audit shows.
- Each request is reported to the call's context (the audit): its method, its URL
  without secrets, its status, milliseconds and bytes. No header value, and no
  query value whose name says it is a secret, appears in an error, a log or the
  audit. (httpx logs every request's whole URL at INFO, a next page's signature
  with it, and httpcore every header at DEBUG, credentials with them: their
  loggers are kept at WARNING, whatever the server's own level.) An API's own words
  (its error body, its status line's reason) are redacted (``said``): an error page
  that echoes the request's headers gives back ``***`` for every configured secret.
"""

from __future__ import annotations

import asyncio
import email.utils
import http
import json
import logging
import random
import re
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

import httpx

from glove_scratchpad import errors
from glove_scratchpad.redaction import redact_secrets, remember_url

from ._config import ApiConfig

__all__ = ["Api", "outcome_unknown", "redact"]

log = logging.getLogger(__name__)
for _chatty in ("httpx", "httpcore"):
    logging.getLogger(_chatty).setLevel(logging.WARNING)

RETRIED = frozenset({429, 502, 503, 504})
MAX_REDIRECTS = 5  # a GET's redirects followed, each under base_url, as a browser's are
BACKOFF_BASE = 0.2  # seconds before the first retry with no Retry-After; doubled each time
BACKOFF_CAP = 10.0
MESSAGE_CHARS = 500  # of an API's error body, in an error's DETAIL
_READ_CHARS = 4 * MESSAGE_CHARS  # read of it before secrets are redacted, then cut
_SECRET = re.compile(r"token|key|secret|sig|password|passwd|auth|credential|session",
                     re.IGNORECASE)


# What httpx raises before a request's first byte is written, so the API cannot have
# seen it: no connection (refused, no route, the TLS handshake failed: ConnectError), none
# in time (ConnectTimeout), no free connection in the pool (PoolTimeout), a proxy that
# would not open the tunnel (ProxyError), a scheme httpx does not speak, and h11 refusing
# the request's head (LocalProtocolError: httpx sets Content-Length from the body it
# encodes itself, so h11 can only refuse the head, which it checks before any byte).
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.ProxyError,
             httpx.UnsupportedProtocol, httpx.LocalProtocolError)
# A gateway saying the API behind it did not answer in time (504), or answered with what
# it could not relay, a reset among them (502): the API may have had the whole request.
_GATEWAY_LOST = frozenset({502, 504})


def outcome_unknown(failure: BaseException | httpx.Response) -> bool:
    """Whether a request that ended so may have been acted on with no answer to tell: any
    failure of httpx but those before the first byte left (``_NOT_SENT``), and a gateway's
    502 or 504. Among them: ReadTimeout and ReadError (the request was sent whole),
    RemoteProtocolError (the connection closed before an answer: a reused connection the
    API had closed looks the same as a crash of the API mid-request), WriteTimeout and
    WriteError (some bytes left; a proxy may have buffered them and sent them on), and
    DecodingError (the API answered, and its answer could not be read). A write that
    ended so is in doubt, never sent again by itself; a read, merely failed."""
    if isinstance(failure, httpx.Response):
        return failure.status_code in _GATEWAY_LOST
    return isinstance(failure, httpx.HTTPError) and not isinstance(failure, _NOT_SENT)


def redact(url: str) -> str:
    """A URL as it may be shown: no userinfo, and no value of a query parameter whose
    name says it holds a secret (token, key, signature…)."""
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    query = [(k, "***" if _SECRET.search(k) else v)
             for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    return redact_secrets(urlunsplit((parts.scheme, netloc, parts.path,
                                      urlencode(query, safe=",*"), "")))


class _Bucket:
    """At most ``calls`` requests per ``seconds``, first come first served."""

    def __init__(self, calls: int, seconds: float) -> None:
        self.capacity = float(calls)
        self.interval = seconds / calls
        self.tokens = float(calls)
        self.stamp = time.monotonic()
        self.turn = asyncio.Lock()

    async def take(self) -> None:
        async with self.turn:
            while True:
                now = time.monotonic()
                self.tokens = min(self.capacity, self.tokens + (now - self.stamp)
                                  / self.interval)
                self.stamp = now
                if self.tokens >= 1:
                    self.tokens -= 1
                    return
                await asyncio.sleep((1 - self.tokens) * self.interval)


def said(response: httpx.Response) -> str:
    """What an API said about an error, as it may be shown: every configured secret
    redacted (an error page may echo the request's headers), then cut short. All of an
    answer's text that reaches an error comes through here."""
    return redact_secrets(_message(response))[:MESSAGE_CHARS]


def _message(response: httpx.Response) -> str:
    """What an API said about an error: its JSON message, else its text, cut a little
    longer than shown (a secret cut in two would not be recognised)."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, Mapping):
        for key in ("message", "error_description", "detail", "error", "title", "errors"):
            value = body.get(key)
            if value:
                text = value if isinstance(value, str) else json.dumps(value)
                return text[:_READ_CHARS]
    return " ".join(response.text.split())[:_READ_CHARS]


def _phrase(response: httpx.Response) -> str:
    """The status's standard reason phrase: the one the API sent is its own text."""
    try:
        return http.HTTPStatus(response.status_code).phrase
    except ValueError:
        return "unknown status"


def _retry_after(response: httpx.Response, attempt: int) -> float:
    raw = response.headers.get("retry-after")
    if raw:
        try:
            return max(0.0, float(raw))
        except ValueError:
            when = email.utils.parsedate_to_datetime(raw)
            if when is not None:
                return max(0.0, when.timestamp() - time.time())
    ceiling = min(BACKOFF_CAP, BACKOFF_BASE * 2 ** attempt)
    return ceiling / 2 + random.uniform(0, ceiling / 2)


class Api:
    """One API's requests."""

    def __init__(self, config: ApiConfig, base_url: str) -> None:
        self.config = config
        self.base_url = base_url.rstrip("/")
        self.shown_url = redact(self.base_url)  # without its credentials, for a HINT
        for url in (base_url, config.base_url, config.spec):
            remember_url(url)
        self.origin = urlsplit(self.base_url)[:2]
        self.prefix = httpx.URL(self.base_url).raw_path.split(b"?", 1)[0].decode(
            "ascii", "replace").rstrip("/")  # every request's path is under it
        self.bucket = _Bucket(*config.rate) if config.rate else None
        self._client: httpx.AsyncClient | None = None

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.config.timeout,
                                             follow_redirects=False)
        return self._client

    def url(self, path: str) -> str:
        return self.base_url + path

    def entry(self, user: str) -> str:
        """The config entry a user's credentials come from, for a HINT."""
        ns = self.config.namespace
        if user and user in self.config.roles:
            return f"[openapi.apis.roles.{user}] headers of the API {ns!r}"
        return (f"the headers of [[openapi.apis]] namespace = {ns!r} (or "
                f"[openapi.apis.roles.{user or '<user>'}])")

    async def request(self, method: str, url: str, *, params: Any = None, body: Any = None,
                      headers: Mapping[str, str], ctx: Any, what: str,
                      write: bool = False) -> httpx.Response:
        """One request, retried as a GET may be, its redirects followed as a GET's are,
        each reported to ``ctx`` (the audit); the response, 2xx or not (``raise_for``).
        A ``write`` whose outcome is unknown is 08007 (``_sent``)."""
        response = await self._request(method, url, params=params, body=body,
                                       headers=headers, ctx=ctx, what=what, write=write)
        hops = 0
        while method in ("GET", "HEAD") and response.is_redirect and \
                "location" in response.headers:
            url = urljoin(str(response.url), response.headers["location"])
            if hops == MAX_REDIRECTS:
                raise errors.ExternalRoutineError(
                    f"{what}: the API redirected more than {MAX_REDIRECTS} times (the "
                    f"last to {redact(url)})",
                    hint="The API redirects in a loop, or too far: check base_url.")
            hops += 1
            response = await self._request(method, url, headers=headers, ctx=ctx,
                                           what=what, write=False, where="the redirect")
        return response

    async def _request(self, method: str, url: str, *, params: Any = None,
                       body: Any = None, headers: Mapping[str, str], ctx: Any, what: str,
                       write: bool, where: str = "the next page") -> httpx.Response:
        if urlsplit(url)[:2] != self.origin:
            raise errors.ExternalRoutineError(
                f"{what}: {where} is on another host ({redact(url)}); it is not "
                "followed, since the API's credentials go to its base_url only",
                hint="Set base_url to that host, or add LIMIT to read the first page only."
                if where == "the next page" else "Set base_url to that host, or read the "
                "redirect's URL itself.")
        request = self.client.build_request(method, url, params=params, json=body,
                                            headers=dict(headers))
        # The URL as it goes (httpx has removed dot segments by now): it is the one
        # checked, and the one the audit shows.
        sent = str(request.url)
        path = request.url.raw_path.split(b"?", 1)[0].decode("ascii", "replace")
        if self.prefix and path != self.prefix and not path.startswith(self.prefix + "/"):
            raise errors.ExternalRoutineError(
                f"{what}: the request would go to {redact(sent)}, outside the API's "
                f"base_url ({self.shown_url}); it is not sent",
                hint="The API's credentials go under its base_url only: check the values "
                "given to its path parameters, or the next page the API named.")
        retries = self.config.retries if method == "GET" else 0
        deadline = getattr(ctx, "deadline", None)
        charge = getattr(ctx, "charge", None)
        attempt = 0
        while True:
            if charge is not None:
                charge()  # a read's every request counts against the call budget
            if self.bucket is not None:
                await self.bucket.take()
            started = time.monotonic()
            try:
                response, got = await self._sent(request, write, ctx, what)
            except httpx.TimeoutException:
                self._report(ctx, method, sent, None, started, 0, "timeout")
                raise errors.ExternalRoutineError(
                    f"{what}: the API did not answer within {self.config.timeout:g} s",
                    hint="Try again, or raise timeout in the API's [[openapi.apis]] entry."
                ) from None
            except httpx.HTTPError as exc:
                self._report(ctx, method, sent, None, started, 0, "error")
                raise errors.IoError(
                    f"{what}: the API could not be reached: {type(exc).__name__}",
                    hint=f"Check base_url ({self.shown_url}) and the network.") from None
            except errors.ProgramLimitExceeded:
                self._report(ctx, method, sent, None, started, 0, "error")
                raise
            self._report(ctx, method, sent, response, started, got,
                         "ok" if response.is_success else "error")
            if response.status_code not in RETRIED or attempt >= retries:
                return response
            wait = _retry_after(response, attempt)
            if deadline is not None and time.monotonic() + wait >= deadline:
                return response
            attempt += 1
            await asyncio.sleep(wait)

    async def _read(self, response: httpx.Response, what: str
                    ) -> tuple[httpx.Response, int]:
        """A streamed answer read whole, within ``max_response_bytes`` as sent and once
        decompressed (a gzip bomb stops at the limit, never at its end): the same
        answer with its body decoded, and the bytes sent; 54000 past the limit."""
        limit = self.config.max_response_bytes
        declared = response.headers.get("content-length", "")
        chunks: list[bytes] = []
        size = int(declared) if declared.isdigit() else 0
        try:
            if size <= limit:
                size = 0
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    if size > limit or response.num_bytes_downloaded > limit:
                        break
                    chunks.append(chunk)
        finally:
            await response.aclose()
        if size > limit or response.num_bytes_downloaded > limit:
            raise errors.ProgramLimitExceeded(
                f"{what}: the API's answer is larger than max_response_bytes "
                f"({limit:,} bytes, as sent or decompressed); it was not read",
                hint="Ask for fewer rows (LIMIT, a narrower WHERE), or raise "
                "max_response_bytes in the API's [[openapi.apis]] entry.")
        framing = {"content-encoding", "content-length", "transfer-encoding"}
        return httpx.Response(
            response.status_code, request=response.request, content=b"".join(chunks),
            headers=[(k, v) for k, v in response.headers.multi_items()
                     if k.lower() not in framing],
            extensions={k: v for k, v in response.extensions.items()
                        if k in ("reason_phrase", "http_version")}
        ), response.num_bytes_downloaded

    async def _sent(self, request: httpx.Request, write: bool, ctx: Any, what: str
                    ) -> tuple[httpx.Response, int]:
        """The request sent and its answer read (``_read``), and the bytes sent. A write
        that may have reached the API with no answer to tell what it did
        (``outcome_unknown``) is 08007, reported to ``ctx``; any other failure is raised
        as httpx raised it."""
        started = time.monotonic()
        method, url = request.method, str(request.url)
        try:
            response, got = await self._read(await self.client.send(request, stream=True),
                                             what)
        except httpx.HTTPError as exc:
            if not (write and outcome_unknown(exc)):
                raise
            timeout = isinstance(exc, httpx.TimeoutException)
            self._report(ctx, method, url, None, started, 0,
                         "timeout" if timeout else "error")
            why = (f"the request was being sent when {self.config.timeout:g} s ran out"
                   if isinstance(exc, httpx.WriteTimeout) else
                   f"the request was sent and no answer came within {self.config.timeout:g} s"
                   if timeout else "the connection failed once the request had left "
                   f"({type(exc).__name__})")
        else:
            if not (write and outcome_unknown(response)):
                return response, got
            self._report(ctx, method, url, response, started, got, "error")
            why = (f"the request was sent and its gateway answered {response.status_code} "
                   f"{_phrase(response)}")
        raise errors.TransactionResolutionUnknown(
            f"{what}: {why}, so the write may have happened",
            hint="Its outcome is unknown: read the table to see whether it took effect "
            "before sending it again. If the API is often this slow, raise timeout in its "
            "[[openapi.apis]] entry.") from None

    def _report(self, ctx: Any, method: str, url: str, response: httpx.Response | None,
                started: float, size: int, status: str) -> None:
        report = getattr(ctx, "report", None)
        if report is None:
            return
        arguments = {"url": redact(url), "bytes": size,
                     "status": response.status_code if response is not None else None}
        report(f"http {method}", arguments, status, (time.monotonic() - started) * 1000,
               None, None if response is None or response.is_success
               else f"HTTP {response.status_code}")

    def raise_for(self, response: httpx.Response, what: str, user: str) -> None:
        """The error of a response that is not 2xx."""
        code = response.status_code
        if response.is_success:
            return
        text = said(response)
        # The API's words are the upstream's (redacted by ``said``): only in the DETAIL,
        # cut short and labelled, never in the message or the HINT a model reads as ours.
        detail = f"status {code}; the API said: {text}" if text else f"status {code}"
        if code == 401:
            raise errors.InvalidAuthorizationSpecification(
                f"{what}: the API refused the credentials (401)", detail=detail,
                hint=f"Set the credentials in {self.entry(user)}.")
        if code == 403:
            raise errors.InsufficientPrivilege(
                f"{what}: the API refused the request (403)", detail=detail,
                hint=f"The credentials in {self.entry(user)} do not allow it.")
        if code >= 500:
            raise errors.IoError(
                f"{what}: the API failed ({code} {_phrase(response)})", detail=detail,
                hint="The API is down or overloaded; try again later.")
        raise errors.ExternalRoutineError(
            f"{what}: the API refused the request ({code} {_phrase(response)})",
            detail=detail,
            hint="Check the values against the column descriptions (\\d+ the table).")

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
