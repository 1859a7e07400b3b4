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

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT4, DRAFT202012

from .._resource import ResourceDefinitionError
from ._fetch import DocumentRefused, Limits, Reading, UpstreamError

__all__ = ["DocumentRefused", "Limits", "Operation", "Parameter", "Schema", "Spec",
           "UpstreamError"]

METHODS = ("get", "post", "put", "patch", "delete")
MAX_REF_DEPTH = 32  # $ref chains followed before a schema counts as unknown


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
    media: tuple[str, ...] = ()  # the media types the 2xx response declares, lower-case

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

        reading = Reading(uri, limits or Limits())

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
        reading = Reading(uri, limits or Limits(), headers)
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
            security=tuple(default_security if security is None else security),
            media=self._media(op))

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


    def _media(self, op: Mapping[str, Any]) -> tuple[str, ...]:
        """The media types of the first 2xx response (Swagger 2.0: ``produces``)."""
        if self.version == "2.0":
            found = op.get("produces") or self.document.get("produces") or ()
            return tuple(str(m).split(";")[0].strip().lower() for m in found)
        responses = op.get("responses") or {}
        for code in sorted(str(c) for c in responses):
            if code.startswith("2"):
                answer = self.schema(responses.get(code) if code in responses else
                                     responses.get(int(code)))
                return tuple(str(m).split(";")[0].strip().lower()
                             for m in answer.get("content") or ())
        return ()


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
