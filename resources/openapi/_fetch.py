"""Reading one document within its limits: fetched (a file, or an http(s) URL with the
API's credentials for the document's own origin alone), its size and deadline bounded,
parsed as JSON or YAML, its nodes counted. An answer that is not a document says what
came. The rules are ``_spec``'s; this module is its reader."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import time
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qsl, unquote, urlencode, urljoin, urlsplit, urlunsplit

import httpx
import yaml

from glove_scratchpad.redaction import SECRET_NAME, redact_secrets

from .._resource import ResourceDefinitionError

T = TypeVar("T")


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
LOAD_TIMEOUT = 20.0  # seconds for the document and every reference it needs
MAX_DOCUMENT_BYTES = 100_000_000  # a document's size, and each referenced one's
# Nodes of a parsed document, its YAML aliases expanded (GitHub's REST API: 260,000),
# and how deep they nest (GitHub's: 21).
MAX_DOCUMENT_NODES = 10_000_000
MAX_DOCUMENT_DEPTH = 200
MAX_REDIRECTS = 5


class UpstreamError(ResourceDefinitionError):
    """What the upstream served, or failed to serve: a document that cannot be fetched,
    or parsed, or that breaks a limit. Not a mistake of the configuration."""


class DocumentRefused(UpstreamError):
    """A document, or a document it refers to, that breaks a limit; the message names it."""


@dataclass(frozen=True, slots=True)
class Limits:
    """What a document may refer to, and how long and large its reading may be."""

    allow_refs: tuple[str, ...] = ()  # URL prefixes references may reach besides its own
    load_timeout: float = LOAD_TIMEOUT
    max_document_bytes: int = MAX_DOCUMENT_BYTES


class Reading:
    """One document's reading: its limits, its deadline, and what it may refer to."""

    def __init__(self, uri: str, limits: Limits,
                 headers: Mapping[str, str] | None = None) -> None:
        self.uri = uri
        self.limits = limits
        self.headers = dict(headers or {})  # sent to the document's own origin only
        self.deadline = time.monotonic() + limits.load_timeout
        self.read: dict[str, Any] = {}  # each referenced document, read once

    def check(self, uri: str) -> None:
        """Refused unless the document may refer to ``uri``: nothing is read before."""
        target, base = urlsplit(uri), urlsplit(self.uri)
        if any(_under(target, urlsplit(prefix)) for prefix in self.limits.allow_refs):
            return
        if base.scheme in ("http", "https"):
            if target.scheme == base.scheme and _origin(target) == _origin(base):
                return
            where = f"its own origin ({base.scheme}://{base.netloc})"
        else:
            folder = Path(unquote(base.path)).parent
            local = target.scheme == "file" and target.netloc in ("", "localhost")
            if local and Path(unquote(target.path)).resolve().is_relative_to(folder.resolve()):
                return
            where = f"its own folder ({folder})"
        raise DocumentRefused(
            f"{self.uri} refers to {uri}, outside {where}: refused, and not read (allow_refs "
            "names the URLs a document may refer to besides)")

    def document(self, uri: str) -> Any:
        """A document by URI: a file:// path or an http(s) URL, within the limits."""
        parts = urlsplit(uri)
        if parts.scheme in ("http", "https"):
            return _parse(_run(self._fetch(uri)), _shown(uri))
        path = Path(unquote(parts.path)) if parts.scheme == "file" else Path(uri)
        return _parse(self._file(path), str(path))

    def _file(self, path: Path) -> str:
        size = self.limits.max_document_bytes
        try:
            if path.exists() and not path.resolve().is_file():  # /dev/zero, a FIFO
                raise DocumentRefused(f"{path} is not a regular file: refused, and not read")
            with path.open("rb") as f:
                data = f.read(size + 1)
        except OSError as exc:
            raise ResourceDefinitionError(f"could not read {path}: {exc}") from None
        if len(data) > size:
            raise DocumentRefused(f"{path} is longer than max_document_bytes ({size:,} bytes)")
        return data.decode("utf-8", errors="replace")

    def _timed_out(self, uri: str) -> DocumentRefused:
        return DocumentRefused(
            f"{uri} was not read within load_timeout ({self.limits.load_timeout:g} s, for the "
            "document and every reference it needs)")

    async def _fetch(self, uri: str) -> str:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise self._timed_out(uri)
        try:
            async with asyncio.timeout(remaining):
                return await self._get(uri, remaining)
        except TimeoutError:
            raise self._timed_out(uri) from None
        except httpx.HTTPError as exc:
            raise UpstreamError(f"could not fetch {_shown(uri)}: "
                                f"{redact_secrets(str(exc)) or type(exc).__name__}") from None

    async def _get(self, uri: str, remaining: float) -> str:
        size = self.limits.max_document_bytes
        too_long = DocumentRefused(f"{_shown(uri)} is longer than max_document_bytes "
                                   f"({size:,} bytes)")
        url = uri
        own = _origin(urlsplit(self.uri))
        async with httpx.AsyncClient(timeout=remaining) as client:
            for _ in range(MAX_REDIRECTS + 1):
                # The credentials are the API's: to its own origin only.
                headers = self.headers if _origin(urlsplit(url)) == own else {}
                async with client.stream("GET", url, headers=headers) as response:
                    if response.is_redirect and "location" in response.headers:
                        url = urljoin(str(response.url), response.headers["location"])
                        self.check(url)  # a redirect goes where a reference may go
                        continue
                    if not response.is_success:
                        raise self._not_a_document(uri, url, response)
                    if _length(response.headers.get("content-length")) > size:
                        raise too_long
                    body = bytearray()
                    async for chunk in response.aiter_bytes():
                        body += chunk
                        if len(body) > size:
                            raise too_long
                    text = _text(bytes(body), response.charset_encoding)
                    kind = response.headers.get("content-type", "").split(";")[0].strip()
                    if kind in ("text/html", "application/xhtml+xml") or (
                            not kind.endswith(("json", "yaml", "yml")) and
                            text.lstrip()[:1] == "<"):
                        raise self._not_a_document(uri, url, response)
                    return text
        raise UpstreamError(f"could not fetch {_shown(uri)}: more than {MAX_REDIRECTS} "
                            "redirects")

    def _not_a_document(self, uri: str, url: str, response: httpx.Response) -> UpstreamError:
        """What came instead of a document, said as it came: never a parse error of it."""
        kind = response.headers.get("content-type") or "no content type"
        what = "an HTML page" if "html" in kind else "no OpenAPI document"
        where = f" (redirected to {_shown(url)})" if url != uri else ""
        said = (f"{_shown(uri)} answered {response.status_code} "
                f"{response.reason_phrase or ''}".rstrip() + f" with {what} ({kind}){where}")
        if response.status_code in (401, 403) or "login" in url or what == "an HTML page":
            said += ("; if it needs credentials, set the API's headers (or spec_headers, "
                     "for the document alone)")
        return UpstreamError(said)


def _shown(url: str) -> str:
    """A URL as a message may show it: no password, and no value of a query parameter
    whose name says it is a secret (``token``, ``key``…); every known secret redacted."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return redact_secrets(url)
    user = f"{parts.username}:***@" if parts.password else \
        (f"{parts.username}@" if parts.username else "")
    netloc = user + (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
    query = [(k, "***" if SECRET_NAME.search(k) else v)
             for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    return redact_secrets(urlunsplit((parts.scheme, netloc, parts.path,
                                      urlencode(query, safe="/*"), "")))


def _length(header: str | None) -> int:
    """A Content-Length as a number (0 when it is none: the body is counted as read)."""
    try:
        return int(header or 0)
    except ValueError:
        return 0


def _text(body: bytes, charset: str | None) -> str:
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        return body.decode("utf-8", errors="replace")


def _origin(parts: Any) -> tuple[str, str | None, int | None]:
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, parts.hostname, parts.port or default


def _under(target: Any, prefix: Any) -> bool:
    """Whether a URL is ``prefix`` or below it (a folder of it, not a longer name)."""
    if target.scheme != prefix.scheme or (
            prefix.scheme != "file" and _origin(target) != _origin(prefix)):
        return False
    if prefix.scheme == "file":
        path, base = Path(unquote(target.path)).resolve(), Path(unquote(prefix.path)).resolve()
        return path.is_relative_to(base)
    base = prefix.path.rstrip("/")
    return target.path == prefix.path or target.path.startswith(base + "/")


def _run(coro: Coroutine[Any, Any, T]) -> T:
    """A coroutine run to its end from synchronous code (the bridge loads documents in a
    worker thread; a caller on an event loop's thread gets a thread of its own)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def _parse(text: str, where: str) -> Any:
    try:
        if text.lstrip().startswith(("{", "[")):
            return json.loads(text)  # a tree: each node once, nested as deep as json allows
        document = yaml.load(text, Loader=_LOADER)  # a safe loader: C or Python
    except (ValueError, yaml.YAMLError) as exc:
        raise UpstreamError(f"{where} is neither JSON nor YAML: {exc}") from None
    except RecursionError:
        raise DocumentRefused(f"{where} nests deeper than its parser goes") from None
    _measure(document, where)  # YAML's aliases may share nodes, or hold their own
    return document


def _children(node: Any) -> Sequence[Any]:
    if isinstance(node, dict):
        return list(node.values())
    return node if isinstance(node, list) else ()


def _measure(document: Any, where: str) -> None:
    """Refused when the document, its YAML aliases expanded, has more than
    ``MAX_DOCUMENT_NODES`` nodes or nests deeper than ``MAX_DOCUMENT_DEPTH``, or when an
    alias holds itself. Each node is visited once however many aliases share it."""
    sizes: dict[int, tuple[int, int]] = {}  # id -> (nodes expanded, depth)
    holding: set[int] = set()  # the nodes whose subtree is being measured
    stack: list[tuple[Any, bool]] = [(document, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            holding.discard(key)
            nodes, depth = 1, 0
            for child in _children(node):
                n, d = sizes.get(id(child), (1, 0))
                nodes, depth = nodes + n, max(depth, d)
            sizes[key] = (nodes, depth + 1)
            if nodes > MAX_DOCUMENT_NODES:
                raise DocumentRefused(
                    f"{where} has more than MAX_DOCUMENT_NODES ({MAX_DOCUMENT_NODES:,}) nodes "
                    "once its YAML aliases are expanded")
            if depth + 1 > MAX_DOCUMENT_DEPTH:
                raise DocumentRefused(f"{where} nests deeper than MAX_DOCUMENT_DEPTH "
                                      f"({MAX_DOCUMENT_DEPTH})")
            continue
        if key in sizes or not isinstance(node, dict | list):
            continue
        holding.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in holding:
                raise DocumentRefused(f"{where} has a YAML alias that holds itself")
            if isinstance(child, dict | list) and id(child) not in sizes:
                stack.append((child, False))
