"""Where a document is wrong: what a ``[[openapi.apis.tables]]`` entry says of a table,
checked at start against the document, and the row field an item's parameter is. No I/O.

Rules:

- **rows_schema** (``row_schema``): the schema of one row, a JSON pointer into the
  document (``#/definitions/Contents``); it replaces the one the response declares,
  at ``rows`` if the entry says where the rows are.
- **The item's parameter is the row's field** (``item_field``): on a list-and-get
  table, the item path's parameter is the rows' field of its name, a field it ends
  with (``kernel_id`` is ``id``), or ``id`` where it names the thing the collection
  holds (``/sessions/{session}``); ``item_key = { session = "id" }`` declares it
  (``declared_field``).
- **columns** (``amend``): a column's ``nullable`` (true: the API may give null, or
  leave the field out), ``type`` and ``description``, on any table, hand or
  automatic.
- An entry that names no operation amends the automatic table of its name; its
  ``volatility`` and ``ttl`` apply to it as to a hand table.
- Every override is checked: a pointer to nothing, a column, parameter or field the
  table lacks, an entry amending no table, is a ``ResourceDefinitionError`` naming
  the API, the table and the override (and, for a name, the ones it may have meant).
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar
from urllib.parse import unquote

from .._resource import ResourceDefinitionError
from ._config import ApiConfig, TableConfig
from ._spec import Operation, Schema, Spec

__all__ = ["amend", "declared_field", "item_field", "row_schema"]

log = logging.getLogger(__name__)


class _Col(Protocol):
    name: str
    pg_type: str
    description: str
    nullable: bool
    prop: str | None
    param: str | None
    location: str | None
    required: bool


class _Plan(Protocol):
    name: str
    item_column: str | None
    volatility: str
    ttl: float | None

    @property
    def columns(self) -> Sequence[_Col]: ...

    @property
    def select(self) -> Operation | None: ...


C = TypeVar("C", bound=_Col)
P = TypeVar("P", bound=_Plan)


def row_schema(spec: Spec, entry: TableConfig | None, namespace: str) -> Schema | None:
    """The schema of one row an entry declares (``rows_schema``), found in the document."""
    if entry is None or entry.rows_schema is None:
        return None
    found = _pointed(spec, entry.rows_schema)
    if found is None:
        raise ResourceDefinitionError(
            f"API {namespace!r}, table {entry.name!r}: rows_schema = {entry.rows_schema!r} "
            "names nothing in the document (a JSON pointer to a schema: "
            "'#/definitions/<Name>' in Swagger 2.0, '#/components/schemas/<Name>' in "
            "OpenAPI 3)")
    return found


def _pointed(spec: Spec, pointer: str) -> Schema | None:
    """The schema a JSON pointer into the document names (``#/definitions/Contents``),
    its references followed; None when the document has nothing there."""
    node: Any = spec.document
    for part in pointer.removeprefix("#").strip("/").split("/"):
        key = unquote(part).replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    return spec.schema(node) if isinstance(node, Mapping) else None


def item_field(columns: Sequence[C], param: str, path: str) -> C | None:
    """The row's own field (its column) an item's path parameter is, if the rows have
    one: the field of its name, one it ends with (``issue_number`` is ``number``,
    ``kernel_id`` and ``kernelId`` are ``id``), or ``id`` where the parameter names
    the thing the collection holds (``/sessions/{session}``, ``/things/{thingId}``)."""
    fields = [c for c in columns if c.prop is not None and c.param is None]
    found = next((c for c in fields if c.prop is not None and (
        c.prop == param or param.endswith("_" + c.prop)
        or param.endswith(c.prop.capitalize()))), None)
    if found is not None:
        return found
    collection = path.rpartition("/")[0].rpartition("/")[2].lower().replace("-", "_")
    thing = param.lower().removesuffix("id").rstrip("_")
    things = {collection, collection.removesuffix("s"), collection.removesuffix("es"),
              collection.removesuffix("ies") + "y", ""}
    return next((c for c in fields if c.prop == "id"), None) if thing in things else None


def declared_field(columns: Sequence[C], table: str, param: str, declared: str) -> C:
    """The column of the rows' field ``item_key`` names for ``param`` (its JSON name, or
    its column's); an error naming the fields the rows have when it is none."""
    found = next((c for c in columns if c.prop == declared), None) or next(
        (c for c in columns if c.name == declared and c.prop), None)
    if found is None:
        fields = sorted(c.prop for c in columns if c.prop)
        raise ResourceDefinitionError(
            f"{table}: item_key = {{ {param} = {declared!r} }}: its rows have no field "
            f"{declared!r}{_meant(declared, fields)} (they have: {', '.join(fields)})")
    return found


def _meant(name: str, names: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, list(names), n=3)
    return f"; did you mean {' or '.join(close)}?" if close else ""


def amend(plans: list[P], config: ApiConfig) -> list[P]:
    """The tables of one API with what its entries say applied, and checked: ``columns``
    on every table an entry names, and an amending entry's volatility and ttl."""
    ns = config.namespace
    by_name = {plan.name: plan for plan in plans}
    for entry in config.tables:
        name = f"{ns}_{entry.name}"
        plan = by_name.get(name)
        if plan is None:  # a hand table that could not be made is an error already
            names = sorted(n.removeprefix(f"{ns}_") for n in by_name)
            raise ResourceDefinitionError(
                f"API {ns!r}: [[openapi.apis.tables]] name = {entry.name!r} names no "
                "operation, so it amends the automatic table of that name, and the "
                f"document maps none{_meant(entry.name, names)} (a table's name without "
                f"the namespace: {', '.join(names) or 'none is mapped'})")
        where = f"API {ns!r}, table {name}"
        if entry.rows_schema is not None and plan.select is None:
            raise ResourceDefinitionError(f"{where}: rows_schema: the table reads no rows "
                                          "(it has no select)")
        for param in entry.item_key:
            col = next((c for c in plan.columns if c.param == param), None)
            if col is None or col.location != "path" or col.name != plan.item_column:
                item = next((c.param for c in plan.columns if c.name == plan.item_column),
                            None)
                raise ResourceDefinitionError(
                    f"{where}: item_key names {param!r}, which is not the item path "
                    f"parameter of the table ({item or 'it has none'})")
        for column, said in entry.columns.items():
            col = next((c for c in plan.columns if c.name == column), None)
            if col is None:
                names = [c.name for c in plan.columns]
                raise ResourceDefinitionError(
                    f"{where}: columns names {column!r}, which is no column of it"
                    f"{_meant(column, names)} (its columns: {', '.join(names)})")
            if said.nullable is not None:
                col.nullable = said.nullable
                col.required = col.required and not said.nullable
            if said.type is not None:
                col.pg_type = said.type
            if said.description is not None:
                col.description = said.description
        if entry.amends:
            plan.volatility = entry.volatility or plan.volatility
            plan.ttl = entry.ttl if entry.ttl is not None else plan.ttl
    for plan in plans:
        key = next((c for c in plan.columns if c.name == plan.item_column), None)
        if key is not None and key.prop is None:
            log.warning("API %r: table %s: its rows have no field that is the item's path "
                        "parameter %s, so UPDATE and DELETE need WHERE %s = …; item_key = "
                        "{ %s = \"<field>\" } in a [[openapi.apis.tables]] entry named %s "
                        "says which field it is", ns, plan.name, key.param, key.name,
                        key.param, plan.name.removeprefix(f"{ns}_"))
    return plans
