"""An OpenAPI document: loaded, its references followed, its operations read.

``Spec.load`` reads a document from a file (relative to the config file) or an
http(s) URL, in JSON or YAML: OpenAPI 3.0, 3.1 or Swagger 2.0. ``Spec.operations``
gives each operation in one shape whatever the version: its parameters (path,
query, header), its JSON request body, its 2xx JSON response, the headers that
response declares, and the security it requires.

Rules:

- References (``$ref``) are followed with the ``referencing`` library, local ones
  and those to other files or URLs (fetched when first needed, relative to the
  document that holds them, each once). A ``Schema`` keeps the resolver of the
  document it is in, so a reference inside another file is read from there.
- Swagger 2.0 is read as 3.0 would say it: a ``body`` parameter is the request
  body, a response's ``schema`` its JSON content, ``host`` + ``basePath`` its
  server, ``securityDefinitions`` its security schemes.
- Nothing here calls an API; a document fetched by URL is fetched once, at load,
  with the API's credentials (``headers`` or ``spec_headers``), sent to its own
  origin only. An answer that is no document (not 2xx, an HTML login page) is an
  ``UpstreamError`` saying the status, the content type and the URL without its
  secrets, never a parse error of that page. A Swagger 2.0 document without
  ``host`` is served where it was fetched from.
- A document is the upstream's, not the user's, and is read within limits
  (``Limits``); one that breaks a limit is ``DocumentRefused``, whose message names
  it, and nothing past the limit is read or fetched:
  - a document fetched over HTTP refers only to URLs of its own origin, a local one
    only to files under its own folder, unless ``allow_refs`` names more; never to
    another scheme;
  - the document and every reference it needs are fetched within one overall
    deadline (``load_timeout``), each at most ``max_document_bytes`` long;
  - a parsed document (its YAML aliases expanded) has at most ``MAX_DOCUMENT_NODES``
    nodes, nested at most ``MAX_DOCUMENT_DEPTH`` deep, and no alias holds itself.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import time
from collections.abc import Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qsl, unquote, urlencode, urljoin, urlsplit, urlunsplit

import httpx
import yaml
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT4, DRAFT202012

from glove_scratchpad.redaction import SECRET_NAME, redact_secrets

from .._resource import ResourceDefinitionError

__all__ = ["DocumentRefused", "Limits", "Operation", "Parameter", "Schema", "Spec",
           "UpstreamError"]

METHODS = ("get", "post", "put", "patch", "delete")
MAX_REF_DEPTH = 32  # $ref chains followed before a schema counts as unknown
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
LOAD_TIMEOUT = 20.0  # seconds for the document and every reference it needs
MAX_DOCUMENT_BYTES = 100_000_000  # a document's size, and each referenced one's
# Nodes of a parsed document, its YAML aliases expanded (GitHub's REST API: 260,000),
# and how deep they nest (GitHub's: 21).
MAX_DOCUMENT_NODES = 10_000_000
MAX_DOCUMENT_DEPTH = 200
MAX_REDIRECTS = 5
T = TypeVar("T")


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


class _Reading:
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
    user = (f"{parts.username}:***@" if parts.password else f"{parts.username}@"
            ) if parts.username else ""
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


@dataclass(frozen=True, slots=True, eq=False)
class Schema:
    """A schema of the document, with the resolver its references are read by."""

    contents: Mapping[str, Any]
    resolver: Any = field(repr=False)
    ref: str | None = None  # the reference it was reached by, if any: a type's identity

    def resolved(self) -> Schema:
        """This schema with its ``$ref`` chain followed (an unknown one: an empty schema)."""
        node, resolver, ref = self.contents, self.resolver, self.ref
        for _ in range(MAX_REF_DEPTH):
            target = node.get("$ref") if isinstance(node, Mapping) else None
            if not isinstance(target, str):
                break
            try:
                found = resolver.lookup(target)
            except Unresolvable as exc:
                refused = _refusal(exc)
                if refused is not None:  # a limit, never an empty schema said nothing of
                    raise refused from None
                return Schema({}, resolver, target)
            ref = str(found.resolver._base_uri) + target if target.startswith("#") else target
            extra = {k: v for k, v in node.items() if k != "$ref"}
            node, resolver = found.contents, found.resolver
            if extra and isinstance(node, Mapping):
                node = {**node, **extra}  # 3.1: siblings of $ref apply too
        return Schema(node if isinstance(node, Mapping) else {}, resolver, ref)

    def get(self, key: str, default: Any = None) -> Any:
        return self.contents.get(key, default)

    def sub(self, value: Any) -> Schema:
        """A schema inside this one, resolved."""
        return Schema(value if isinstance(value, Mapping) else {}, self.resolver).resolved()

    def nonnull(self) -> Schema:
        """The one option of an ``anyOf``/``oneOf`` with null (an optional value)."""
        for key in ("anyOf", "oneOf"):
            options = [o for o in self.get(key) or () if not (isinstance(o, Mapping)
                                                                and o.get("type") == "null")]
            if len(options) == 1 and not self.get("type"):
                inner = self.sub(options[0])
                return Schema({**inner.contents, "nullable": True}, inner.resolver, inner.ref)
        return self


@dataclass(frozen=True, slots=True)
class Parameter:
    """One parameter of an operation."""

    name: str
    location: str  # path, query, header or cookie
    required: bool
    schema: Schema
    description: str = ""

    @property
    def is_array(self) -> bool:
        return self.schema.get("type") == "array"


@dataclass(frozen=True, slots=True)
class Operation:
    """One operation of the document, in one shape for every OpenAPI version."""

    method: str  # GET, POST, PUT, PATCH, DELETE
    path: str
    operation_id: str | None
    tags: tuple[str, ...]
    summary: str
    parameters: tuple[Parameter, ...]
    body: Schema | None  # the JSON request body
    body_required: bool
    response: Schema | None  # the 2xx JSON response
    response_headers: frozenset[str]  # lower-case names the 2xx response declares
    security: tuple[Mapping[str, Any], ...]  # requirements; any one of them suffices

    @property
    def label(self) -> str:
        return f"{self.method} {self.path}"

    def parameter(self, name: str) -> Parameter | None:
        return next((p for p in self.parameters if p.name == name), None)

    @property
    def path_parameters(self) -> list[Parameter]:
        return [p for p in self.parameters if p.location == "path"]


class Spec:
    """A loaded OpenAPI document."""

    def __init__(self, document: Mapping[str, Any], uri: str,
                 limits: Limits | None = None) -> None:
        if not isinstance(document, Mapping):
            raise ResourceDefinitionError(f"{uri} is not an OpenAPI document")
        self.document = document
        self.uri = uri
        version = str(document.get("openapi") or document.get("swagger") or "")
        if version.startswith("2"):
            self.version = "2.0"
        elif version.startswith("3.1"):
            self.version = "3.1"
        elif version.startswith("3"):
            self.version = "3.0"
        else:
            raise ResourceDefinitionError(
                f"{uri} is not an OpenAPI 3.x or Swagger 2.0 document (no openapi or swagger "
                "version field)")
        specification = DRAFT202012 if self.version == "3.1" else DRAFT4

        reading = _Reading(uri, limits or Limits())

        def retrieve(found: str) -> Resource[Any]:
            if found not in reading.read:
                reading.check(found)
                reading.read[found] = reading.document(found)
            return specification.create_resource(reading.read[found])

        registry: Registry[Any] = Registry(retrieve=retrieve).with_resource(  # type: ignore[call-arg]
            uri, specification.create_resource(document))
        self.resolver = registry.resolver(base_uri=uri)
        self.reading = reading

    @classmethod
    def load(cls, source: str, base: Path, limits: Limits | None = None,
             headers: Mapping[str, str] | None = None) -> Spec:
        """The document at ``source``: an http(s) URL (fetched with ``headers``), or a path
        relative to ``base``. Its references are read within the same ``limits``, and the
        same deadline."""
        uri = source if urlsplit(source).scheme in ("http", "https") else \
            (base / source).resolve().as_uri()
        reading = _Reading(uri, limits or Limits(), headers)
        spec = cls(reading.document(uri), uri, limits)
        spec.reading.deadline = reading.deadline
        spec.reading.headers = reading.headers  # its references on its origin: the same
        return spec

    def schema(self, node: Any) -> Schema:
        return Schema(node if isinstance(node, Mapping) else {}, self.resolver).resolved()

    @property
    def title(self) -> str:
        return str((self.document.get("info") or {}).get("title") or "")

    def base_url(self) -> str | None:
        """Where the API is served, as the document says (the first server)."""
        if self.version == "2.0":
            host = self.document.get("host")
            fetched = urlsplit(self.uri)
            if not host:  # the API is served by the host that served the document
                return f"{fetched.scheme}://{fetched.netloc}" + str(self.document.get(
                    "basePath") or "").rstrip("/") if fetched.scheme != "file" else None
            scheme = (self.document.get("schemes") or ["https"])[0]
            return f"{scheme}://{host}{self.document.get('basePath') or ''}".rstrip("/")
        servers = self.document.get("servers") or []
        if not servers or not isinstance(servers[0], Mapping):
            # No servers: "/", relative to where the document was fetched from.
            parts = urlsplit(self.uri)
            return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") \
                else None
        url = str(servers[0].get("url") or "")
        for name, variable in (servers[0].get("variables") or {}).items():
            url = url.replace("{" + name + "}", str(variable.get("default", "")))
        if url.startswith("/") and urlsplit(self.uri).scheme in ("http", "https"):
            url = urljoin(self.uri, url)
        return url.rstrip("/") or None

    def security_schemes(self) -> dict[str, Mapping[str, Any]]:
        found = (self.document.get("securityDefinitions") if self.version == "2.0" else
                 (self.document.get("components") or {}).get("securitySchemes")) or {}
        return {name: self.schema(s).contents for name, s in found.items()}

    def operations(self) -> Iterator[Operation]:
        default_security = tuple(self.document.get("security") or ())
        for path, item in (self.document.get("paths") or {}).items():
            item = self.schema(item).contents
            shared = list(item.get("parameters") or ())
            for method in METHODS:
                op = item.get(method)
                if isinstance(op, Mapping):
                    yield self._operation(method, str(path), op, shared, default_security)

    def _operation(self, method: str, path: str, op: Mapping[str, Any], shared: list[Any],
                   default_security: tuple[Any, ...]) -> Operation:
        params: dict[tuple[str, str], Parameter] = {}
        body: Schema | None = None
        body_required = False
        for raw in [*shared, *(op.get("parameters") or ())]:
            p = self.schema(raw).contents
            where = str(p.get("in") or "")
            if where == "body":  # Swagger 2.0
                body, body_required = self.schema(p.get("schema")), bool(p.get("required"))
                continue
            if where not in ("path", "query", "header") or not p.get("name"):
                continue
            schema = p.get("schema") if "schema" in p else {
                k: v for k, v in p.items() if k in ("type", "format", "enum", "items", "default")}
            params[(str(p["name"]), where)] = Parameter(
                str(p["name"]), where, bool(p.get("required")) or where == "path",
                self.schema(schema).nonnull(), str(p.get("description") or "").strip())
        request = op.get("requestBody")
        if request is not None and self.version != "2.0":
            request = self.schema(request).contents
            content = _json_content(request.get("content"))
            if content is not None:
                body, body_required = self.schema(content.get("schema")), bool(
                    request.get("required"))
        response, headers = self._response(op)
        security = op.get("security")
        return Operation(
            method=method.upper(), path=path,
            operation_id=str(op["operationId"]) if op.get("operationId") else None,
            tags=tuple(str(t) for t in op.get("tags") or ()),
            summary=str(op.get("summary") or op.get("description") or "").strip(),
            parameters=tuple(params.values()), body=body, body_required=body_required,
            response=response, response_headers=headers,
            security=tuple(default_security if security is None else security))

    def _response(self, op: Mapping[str, Any]) -> tuple[Schema | None, frozenset[str]]:
        """The first 2xx response's JSON schema, and the headers it declares."""
        responses = op.get("responses") or {}
        for code in sorted(str(c) for c in responses):
            if not code.startswith("2"):
                continue
            found = self.schema(responses.get(code) if code in responses else
                                responses.get(int(code)))
            headers = frozenset(str(h).lower() for h in found.get("headers") or ())
            if self.version == "2.0":
                schema = found.get("schema")
                return (self.schema(schema) if schema is not None else None), headers
            content = _json_content(found.get("content"))
            if content is not None and "schema" in content:
                return self.schema(content["schema"]), headers
            return None, headers
        return None, frozenset()


def _refusal(exc: BaseException) -> DocumentRefused | None:
    """The limit behind a reference that could not be resolved, if one was."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, DocumentRefused):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _json_content(content: Any) -> Mapping[str, Any] | None:
    """The JSON media type of a content map (application/json, or a +json one)."""
    if not isinstance(content, Mapping):
        return None
    for media, value in content.items():
        kind = str(media).split(";")[0].strip().lower()
        if (kind == "application/json" or kind.endswith("+json")) and isinstance(value, Mapping):
            return value
    return None
