"""The configuration of HTTP APIs: ``[[openapi.apis]]`` tables as pydantic models.

``ApiConfig`` is one API: its document (``spec``, a path relative to the config
file or an http(s) URL), where it is served (``base_url``, else the document's),
its credentials (``headers``, and per role ``roles.<name>.headers``; ``spec_headers``
for the document's own fetch, else ``headers``), which of its
operations to map (``include``, ``exclude``, ``auto``), which operations other than
GET only read (``reads``), the tables assembled by hand
(``tables``), how it may be called (``timeout``, ``retries``, ``rate``), and the limits
its document is read within (``allow_refs``, ``load_timeout``, ``max_document_bytes``).

Rules:

- Every model forbids unknown keys: a misspelt option is an error at start.
- ``${VAR}`` in a header value is read from the environment when a request is
  made, never earlier, and a header's value is never shown: ``Header`` keeps the
  template, and ``repr`` shows its name only. A variable that is not set is an
  error at start, naming the variable. Each value read is remembered as a secret
  (``glove_scratchpad.redaction``), taken out of whatever an API answers.
- A role's calls are its own (``credential_of``) when it has headers of its own:
  lasting calls are kept per credential, never read by another role.
- A namespace is a lower-case SQL identifier that cannot make a name start with
  ``pg_``; a hand table's name is one too.
- A ``[[openapi.apis.tables]]`` entry that names no operation (``amends``) amends
  the automatic table of its name: its ``rows``, ``rows_schema``, ``params``,
  ``paging``, ``columns``, ``item_key``, ``volatility`` and ``ttl`` apply to it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, PositiveInt, field_validator

from glove_scratchpad.redaction import remember_header

from .._resource import MAX_RETRIES, Volatility
from ._fetch import LOAD_TIMEOUT, MAX_DOCUMENT_BYTES

__all__ = ["ApiConfig", "ColumnConfig", "Headers", "PagingConfig", "RoleConfig", "TableConfig",
           "expand"]

# 16 MiB: a page of a hundred large objects is a few hundred KB; a body past this is a
# mistake or an attack, and reading it whole would hold it (and its rows) in memory.
MAX_RESPONSE_BYTES = 16 * 2**20
_NAMESPACE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_TABLE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
PagingStyle = Literal["link", "header", "cursor", "page", "offset", "none"]
# The Postgres types a column override may name, and their canonical spelling.
COLUMN_TYPES = {"text": "text", "bigint": "bigint", "integer": "integer", "int": "integer",
                "smallint": "smallint", "double precision": "double precision",
                "real": "real", "numeric": "numeric", "boolean": "boolean", "bool": "boolean",
                "date": "date", "timestamptz": "timestamp with time zone",
                "timestamp with time zone": "timestamp with time zone", "uuid": "uuid",
                "jsonb": "jsonb"}


def expand(template: str, environ: Mapping[str, str] | None = None) -> str:
    """A header template with each ``${VAR}`` read from the environment."""
    env = os.environ if environ is None else environ

    def value(found: re.Match[str]) -> str:
        name = found[1]
        if name not in env:
            raise ValueError(f"the environment variable {name} is not set")
        return env[name]

    return _VARIABLE.sub(value, template)


class Headers(dict[str, str]):
    """Header templates by name; ``repr`` shows the names, never a value."""

    def __repr__(self) -> str:
        return "Headers(" + ", ".join(sorted(self)) + ")"

    def resolved(self) -> dict[str, str]:
        """The headers with their ``${VAR}`` read now (each value a secret to redact)."""
        out = {name: expand(value) for name, value in self.items()}
        for value in out.values():
            remember_header(value)
        return out


def _headers(value: Any) -> Headers:
    if not isinstance(value, Mapping):
        raise ValueError("headers is a table of header names and values")
    out = Headers({str(k): str(v) for k, v in value.items()})
    for template in out.values():
        # A variable that is not set is an error now, not at a call; the value is a
        # secret from now on, redacted from whatever an API answers.
        remember_header(expand(template))
    return out


class RoleConfig(BaseModel):
    """``[openapi.apis.roles.<name>]``: one role's credentials, like a user mapping."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    headers: Headers = Field(default_factory=Headers)

    @field_validator("headers", mode="before")
    @classmethod
    def _templates(cls, value: Any) -> Headers:
        return _headers(value)


class PagingConfig(BaseModel):
    """How a table's list is paged, where the document's parameter names do not say."""

    model_config = ConfigDict(extra="forbid")

    style: PagingStyle
    param: str | None = Field(None, description="cursor: the cursor parameter; page: the page "
                              "number's; offset: the offset's")
    size: str | None = Field(None, description="The page-size parameter (per_page, limit)")
    field: str | None = Field(None, description="cursor: where the next cursor (or next URL) "
                              "is in the body, a dotted path")
    header: str | None = Field(None, description="header: the response header holding the "
                               "next page's URL, or its cursor (Next-Page)")


class ColumnConfig(BaseModel):
    """``columns = { name = { … } }``: one column as it is, where the document is wrong."""

    model_config = ConfigDict(extra="forbid")

    nullable: bool | None = Field(None, description="true: the API may give null or leave "
                                  "the field out, whatever the document says")
    type: str | None = Field(None, description="The column's Postgres type: text, bigint, "
                             "double precision, boolean, date, timestamptz, uuid, jsonb, …")
    description: str | None = None

    @field_validator("type")
    @classmethod
    def _known_type(cls, value: str | None) -> str | None:
        if value is None:
            return None
        canonical = COLUMN_TYPES.get(" ".join(value.lower().split()))
        if canonical is None:
            raise ValueError(f"unknown column type {value!r}; use one of "
                             + ", ".join(sorted(set(COLUMN_TYPES))))
        return canonical


class TableConfig(BaseModel):
    """``[[openapi.apis.tables]]``: a table assembled by hand from operations, or, naming
    none, the amendment of the automatic table of its name."""

    model_config = ConfigDict(extra="forbid")

    name: str
    select: str | None = None  # "METHOD /path" as written in the document, or an operationId
    insert: str | None = None
    update: str | None = None
    delete: str | None = None
    rows: str | None = Field(None, description="Where the rows are in the select's response: "
                             "a field or a dotted path")
    params: dict[str, str] = Field(default_factory=dict, description="An API parameter given "
                                   "a column of its own: {parameter = 'column'}")
    paging: PagingConfig | None = None
    volatility: Volatility | None = None
    ttl: PositiveFloat | None = None
    # Where the document is wrong (docs/openapi.md, "Overrides for a wrong document").
    rows_schema: str | None = Field(None, description="The schema of one row, a JSON pointer "
                                    "into the document: '#/definitions/Contents'")
    columns: dict[str, ColumnConfig] = Field(default_factory=dict, description="Columns as "
                                             "they are: {name = {nullable, type, description}}")
    item_key: dict[str, str] = Field(default_factory=dict, description="The item's path "
                                     "parameter and the rows' field it is: {session = 'id'}")

    @property
    def amends(self) -> bool:
        """Whether the entry amends an automatic table (it names no operation)."""
        return not (self.select or self.insert or self.update or self.delete)

    @field_validator("rows_schema")
    @classmethod
    def _is_pointer(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("#/"):
            raise ValueError(f"rows_schema {value!r} is not a JSON pointer into the document "
                             "('#/definitions/Contents', '#/components/schemas/Item')")
        return value

    @field_validator("name")
    @classmethod
    def _is_identifier(cls, value: str) -> str:
        if not _TABLE.match(value) or value.startswith("pg_"):
            raise ValueError(f"table name {value!r} is not a lower-case SQL identifier")
        return value


class ApiConfig(BaseModel):
    """``[[openapi.apis]]``: one HTTP API described by an OpenAPI document."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    namespace: str
    spec: str = Field(description="A path (relative to the config file) or an http(s) URL; "
                      "OpenAPI 3.0, 3.1 or Swagger 2.0; JSON or YAML")
    base_url: str | None = None
    headers: Headers = Field(default_factory=Headers)
    spec_headers: Headers | None = Field(None, description="The headers the document's own "
                                         "fetch sends (default: headers)")
    include: list[str] = Field(default_factory=list, description="Tags, operationIds, "
                               "'METHOD /path' or path globs; none: every operation")
    exclude: list[str] = Field(default_factory=list)
    auto: bool = True
    # A SELECT sends GET, HEAD or OPTIONS only, unless the operation is declared a read
    # here: an operation that may change something is never sent by a read otherwise.
    reads: list[str] = Field(default_factory=list, description="Operations other than "
                             "GET that only read ('METHOD /path' or an operationId): a "
                             "POST search among them is a table a SELECT sends")
    timeout: PositiveFloat = 30.0
    retries: int = Field(2, ge=0, le=MAX_RETRIES, description="GETs made again on 429, 502, "
                         "503 and 504, honouring Retry-After")
    rate: tuple[PositiveInt, PositiveFloat] | None = Field(
        None, description="[calls, seconds]: the API's requests, shared by every table")
    roles: dict[str, RoleConfig] = Field(default_factory=dict)
    tables: list[TableConfig] = Field(default_factory=list)
    max_page_size: PositiveInt = Field(100, description="The page size asked for when no "
                                       "LIMIT says fewer")
    # The document is the upstream's: what it may refer to, and how long and large its
    # reading may be (docs/openapi.md, "Documents are untrusted").
    allow_refs: list[str] = Field(default_factory=list, description="URL prefixes (http(s) "
                                  "or file:) the document's $refs may reach besides its own "
                                  "origin (a URL) or folder (a file)")
    load_timeout: PositiveFloat = Field(LOAD_TIMEOUT, description="Seconds to fetch the "
                                        "document and every $ref it needs, all together")
    max_document_bytes: PositiveInt = Field(MAX_DOCUMENT_BYTES, description="The largest "
                                            "document (and referenced document) read")
    # The API's answers are the upstream's too: a body past this, as sent or once
    # decompressed, is 54000 (docs/openapi.md, "Answers are untrusted").
    max_response_bytes: PositiveInt = Field(MAX_RESPONSE_BYTES, description="The largest "
                                            "answer read, as sent and once decompressed")

    @field_validator("headers", "spec_headers", mode="before")
    @classmethod
    def _templates(cls, value: Any) -> Headers:
        return _headers(value)

    @field_validator("allow_refs")
    @classmethod
    def _are_urls(cls, value: list[str]) -> list[str]:
        for prefix in value:
            if not re.match(r"^(https?://[^/?#]+|file:///)", prefix):
                raise ValueError(f"allow_refs entry {prefix!r} is not an http(s):// URL with a "
                                 "host, nor a file:/// URL")
        return value

    @field_validator("namespace")
    @classmethod
    def _is_namespace(cls, value: str) -> str:
        if not _NAMESPACE.match(value) or value.startswith("pg"):
            raise ValueError(f"namespace {value!r} is not a lower-case SQL identifier of at "
                             "most 40 characters (not starting with pg)")
        return value

    def credential_of(self, user: str) -> str | None:
        """Whose credentials a user's requests carry: the user's role, when it has headers
        of its own; None when they are the API's, the same for every user (its calls are
        then shared by all)."""
        role = self.roles.get(user)
        return user if role is not None and role.headers else None

    def document_headers(self) -> dict[str, str]:
        """The headers the document's fetch sends (each value a secret to redact)."""
        return (self.headers if self.spec_headers is None else self.spec_headers).resolved()

    def headers_for(self, user: str) -> dict[str, str]:
        """The credentials a role's requests carry: its own, else the API's."""
        role = self.roles.get(user)
        return (role.headers if role is not None and role.headers else self.headers).resolved()
