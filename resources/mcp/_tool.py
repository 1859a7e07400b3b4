"""One MCP tool as one resource: its table (``_table``), and resolvers that call the tool.

- A tool whose ``annotations.readOnlyHint`` is true is a ``select`` resource.
  Its required arguments are required keys (``WHERE arg = …``), its optional
  ones filters, bound the same way. Its volatility is ``stable``: the
  tool promises to change nothing, so reusing its answer within one client
  request skips no effect, and a statement that reads it twice (a self-join, a
  subquery) sees one consistent answer, as with Postgres' own STABLE functions.
  An override can make it ``volatile`` or ``immutable``.
- Any other tool is a ``volatile`` ``insert`` resource: its arguments are the
  columns, each inserted row is one call, and the rows it returns come back as
  the created rows (``INSERT … RETURNING``). A tool whose only argument is an
  array of objects (``create_entities(entities=[…])``) is called once per
  statement instead, each row one element of that array (``batch``).
- The result columns come from the ``outputSchema``: an array (or an object
  whose only property is an array) gives one row per element, an object one
  row. Without an output schema the columns are ``text`` (the text content)
  and ``result`` (the structured content, or the text parsed when it is a JSON
  object or array). The argument columns follow, so that every argument is
  visible and can be bound in WHERE.
- Descriptions, enums (``one of: …``) and defaults become column comments; the
  tool's description becomes the table comment.
- ``ToolOverride`` changes any of this per tool.

Rules: every bound argument shows in the rows returned (Postgres re-applies the
WHERE to them); an INSERT missing a required column calls nothing; a failed call
of a multi-call INSERT says how many calls before it had succeeded (they are not
undone). A tool result with ``isError`` is ``McpToolError``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from mcp.types import CallToolResult, Tool

from glove_scratchpad.errors import MissingRequiredKey, SqlError

from .._resource import Bindings, Resource, ResourceDefinitionError, define_resource
from ._config import ToolOverride
from ._connection import McpConnection
from ._errors import McpToolError
from ._schema import JsonField
from ._table import ToolTable
from ._values import argument, cell, maybe_json, result_text, step

__all__ = ["mcp_resources", "tool_resource"]

log = logging.getLogger(__name__)


class _ToolTable(ToolTable):
    """One tool's table, whose resolvers call the tool through ``connection``."""

    def __init__(
        self, connection: McpConnection, tool: Tool, override: ToolOverride, taken: set[str]
    ) -> None:
        super().__init__(connection.namespace, tool, override, taken)
        self.connection = connection

    def resource(self) -> Resource:
        tool = self.tool
        description = self.override.description
        if description is None:
            title = tool.title or (tool.annotations.title if tool.annotations else None)
            description = (tool.description or title or "").strip()
        about = [description] if description else []
        about.append(f'(MCP tool "{tool.name}" of server "{self.server}".)')
        if self.verb == "insert" and self.batch is not None:
            about.append(
                f"One INSERT is one call: each row is one element of its"
                f' "{self.batch}" argument. RETURNING shows what the tool returned.'
            )
        elif self.verb == "insert":
            about.append("Each inserted row is one call; RETURNING shows what the tool returned.")
        return define_resource(
            self.name,
            columns=self.columns,
            keys=self.keys,
            # A read tool's optional arguments are filters: their = reaches the tool.
            filters=[f.column for f in self.arg_fields if f.column not in self.keys]
            if self.verb == "select" else (),
            volatility=self.volatility,
            description=" ".join(about),
            brief=description, group=self.server,
            select=self.select if self.verb == "select" else None,
            insert=self.insert if self.verb == "insert" else None,
            retries=self.connection.config.retries if self.override.retries is None
            else self.override.retries,
            rate=self.override.rate or self.connection.config.rate,
        )

    def rows_of(self, result: CallToolResult) -> list[dict[str, Any]]:
        """The rows of one tool result (an error result raises ``McpToolError``)."""
        text = result_text(result)
        if result.is_error:
            message = text
            if not message and result.structured_content is not None:
                message = json.dumps(result.structured_content, ensure_ascii=False)
            raise McpToolError(
                self.server,
                self.tool.name,
                self.name,
                (message or "the tool reported an error without a message").strip(),
            )
        payload = result.structured_content
        if payload is None:
            payload = maybe_json(text)
        if self.text_columns is not None:
            text_col, result_col = self.text_columns
            return [{text_col: text, result_col: payload}]
        node = payload
        for segment in self.path:
            node = step(node, segment)
        items = node if isinstance(node, list) else [] if node is None else [node]
        rows = []
        source = f'MCP tool "{self.tool.name}" of server "{self.server}"'
        for item in items:
            row = {}
            for f in self.result_fields:
                if f.source is None:
                    value = item
                else:
                    value = item.get(f.source) if isinstance(item, Mapping) else None
                row[f.column] = cell(value, f.pg_type, source=source,
                                     field=f.source or f.column)
            rows.append(row)
        return rows

    async def select(self, bindings: Bindings) -> list[dict[str, Any]]:
        args = {
            f.key: argument(bindings.one(f.column), f.pg_type)
            for f in self.arg_fields
            if bindings.has(f.column)
        }
        result = await self.connection.call_tool(self.tool.name, args, table=self.name, retry=True)
        rows = self.rows_of(result)
        # Postgres re-applies the WHERE to these rows: every bound argument must show in them.
        stamp = {f.column: args[f.key] for f in self.arg_fields if f.key in args}
        return [{**row, **{k: v for k, v in stamp.items() if row.get(k) is None}} for row in rows]

    async def insert(self, rows: Sequence[Any]) -> list[dict[str, Any]]:
        calls: list[tuple[dict[str, Any], dict[str, Any]]] = []  # (arguments, stamp)
        dicts = [r if isinstance(r, Mapping) else r.model_dump(by_alias=True) for r in rows]
        for n, row in enumerate(dicts, 1):
            for key in self.keys:
                if row.get(key) is None:
                    # Checked for every row before the first call: no call of this INSERT runs.
                    raise self._missing(key, n, len(dicts))

        def arguments(row: Mapping[str, Any], fields: Iterable[JsonField]) -> dict[str, Any]:
            return {
                f.key: argument(row[f.column], f.pg_type)
                for f in fields
                if row.get(f.column) is not None
            }

        if self.batch is not None:
            item_fields = [f for f in self.arg_fields if f.column in self.item_columns]
            other = [f for f in self.arg_fields if f.column not in self.item_columns]
            groups: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
            for row in dicts:
                shared = arguments(row, other)
                key = json.dumps(shared, sort_keys=True, default=str)
                groups.setdefault(key, (shared, []))[1].append(arguments(row, item_fields))
            for shared, elements in groups.values():
                stamp = {f.column: shared[f.key] for f in other if f.key in shared}
                calls.append(({**shared, cast(str, self.batch): elements}, stamp))
        else:
            for row in dicts:
                args = arguments(row, self.arg_fields)
                calls.append(
                    (args, {f.column: args[f.key] for f in self.arg_fields if f.key in args})
                )
        created: list[dict[str, Any]] = []
        for done, (args, stamp) in enumerate(calls):
            try:
                result = await self.connection.call_tool(
                    self.tool.name, args, table=self.name, write=True
                )
                out = self.rows_of(result)
            except SqlError as exc:
                if done:
                    note = (
                        f"{done} of {len(calls)} calls of this INSERT had succeeded before"
                        " this one; they are not undone."
                    )
                    exc.detail = f"{exc.detail}\n{note}" if exc.detail else note
                raise
            created.extend(
                {**row, **{k: v for k, v in stamp.items() if row.get(k) is None}} for row in out
            )
        return created

    def _missing(self, key: str, row: int, rows: int) -> SqlError:
        column = next(c for c in self.columns if c.name == key)
        about = f" ({column.description})" if column.description else ""
        return MissingRequiredKey(
            f'INSERT into "{self.name}" needs a value for its required column "{key}"{about}',
            detail=f"Row {row} of {rows} has none; the tool was not called.",
            hint=f"Required columns are the tool's required arguments: {', '.join(self.keys)}."
            f" Give each of them: INSERT INTO {self.name} ({', '.join(self.keys)}) VALUES (…)",
            table_name=self.name,
            column_name=key,
        )


def tool_resource(
    connection: McpConnection,
    tool: Tool,
    override: ToolOverride | None = None,
    *,
    taken: set[str] | None = None,
) -> Resource:
    """One MCP tool as one resource, whose resolvers call it through ``connection``.

    ``taken`` holds table names already used (the new one is added to it).
    """
    return _ToolTable(
        connection, tool, override or ToolOverride(), taken if taken is not None else set()
    ).resource()


async def mcp_resources(server: McpConnection) -> list[Resource]:
    """The tools of one MCP server as resources named ``<namespace>_<tool>``.

    Connects (if not yet connected) and lists the tools. A tool the bridge
    cannot serve is left out with a warning, unless it has an override, whose
    mistakes are errors.
    """
    config = server.config
    tools = await server.list_tools()
    names = {t.name for t in tools}
    for kind, listed in (
        ("include", config.include or []),
        ("tools", list(config.tools)),
        ("exclude", config.exclude),
    ):
        for name in listed:
            if name not in names:
                log.warning(
                    "MCP server %r has no tool %r (named in its %s); it has: %s",
                    config.namespace,
                    name,
                    kind,
                    ", ".join(sorted(names)),
                )
    taken: set[str] = set()
    out = []
    refused: list[str] = []
    for tool in tools:
        if not config.serves(tool.name):
            continue
        override = config.tools.get(tool.name)
        try:
            out.append(tool_resource(server, tool, override, taken=taken))
        except ResourceDefinitionError as exc:
            if override is not None:
                raise
            refused.append(tool.name)
            log.warning(
                "MCP server %r: tool %r is not served: %s", config.namespace, tool.name, exc
            )
    if refused and not out:
        raise ResourceDefinitionError(
            f"none of its tools can be made a table ({', '.join(refused)}: see the warnings"
            " above)"
        )
    return out
