"""Resources made from what upstreams say, made safe to install, and several sources'
resources as one list.

An MCP server's tool list and an OpenAPI document are input the user does not
control: their names and text become DDL, comments and rows in the sidecar.

Rules:

- Text is data. NUL, which Postgres refuses in text, and the lone surrogates that
  UTF-8 cannot hold are removed from a resource's description and its columns'
  (``scrubbed``), with a warning that names the source and the table. Names need no
  such care: they are made of letters, digits and ``_`` (``_schema.sql_name``).
- Two sources that make a table of one name: the earlier source keeps it, and the
  later one's is left out with a warning that names both (``merge``); the server
  starts with every other table.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Iterable

from ._resource import Resource

__all__ = ["clean_text", "merge", "scrubbed"]

log = logging.getLogger(__name__)

# What Postgres refuses in a text value or a comment (NUL), and what UTF-8 cannot encode.
_REFUSED = re.compile("[\x00\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` without the characters Postgres refuses."""
    return _REFUSED.sub("", text)


def _scrub(resource: Resource) -> tuple[Resource, list[str]]:
    """The resource with its text cleaned, and where text was removed."""
    where = []
    columns = []
    for col in resource.columns:
        if _REFUSED.search(col.description):
            where.append(f"column {col.name}")
            col = dataclasses.replace(col, description=clean_text(col.description))
        columns.append(col)
    description = resource.description
    if _REFUSED.search(description):
        where.insert(0, "table comment")
        description = clean_text(description)
    if not where:
        return resource, []
    return dataclasses.replace(resource, columns=tuple(columns), description=description), where


def scrubbed(resources: Iterable[Resource], source: str) -> list[Resource]:
    """``resources`` with NUL and other characters Postgres refuses removed from their
    text; a warning names ``source`` and each table changed."""
    out = []
    for resource in resources:
        clean, where = _scrub(resource)
        if where:
            log.warning("%s: removed NUL or other characters Postgres refuses from the text "
                        "of table %s (%s)", source, resource.name, ", ".join(where))
        out.append(clean)
    return out


def merge(groups: Iterable[tuple[str, Iterable[Resource]]]) -> tuple[list[Resource], list[str]]:
    """Several sources' resources (``(source, resources)``, in order) as one list, and
    what was left out: a table whose name an earlier source took, with a warning that
    names both sources."""
    owner: dict[str, str] = {}
    out: list[Resource] = []
    left_out: list[str] = []
    for source, resources in groups:
        for resource in resources:
            first = owner.get(resource.name)
            if first is not None:
                said = (f"{source}: table {resource.name} is not served: {first} already "
                        "has a table of that name")
                log.warning("%s", said)
                left_out.append(said)
                continue
            owner[resource.name] = source
            out.append(resource)
    return out, left_out
