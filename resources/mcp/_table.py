"""A tool's schemas -> its table: the plan of columns, keys, and where each value comes from.

``ToolTable`` reads one tool's input and output schemas and its override, and
decides, with no I/O:

- the table's name (``<namespace>_<tool>``, or the override's), verb
  (``select`` for a read-only tool, else ``insert``) and volatility (``stable``
  for a select, else ``volatile``);
- the argument columns (required arguments are the keys), and in batch mode
  which of them are fields of the one array argument's items;
- the result columns: from the output schema (the rows are an array's items,
  or the one object), or the override's; without an output schema, ``text``
  and ``result``;
- the rows path inside a result.

Rules: the schemas are the upstream's, so they are walked once, memoized and bounded
(``resources._schema``); an argument the result echoes is one column, not two; a select table's
result columns come first, an insert table's argument columns; a mistake in an
override (a table name taken, a rows path or batch argument that the schemas do
not have, a column name that is not an identifier) is ``ResourceDefinitionError``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mcp.types import Tool

from .._columns import Column
from .._resource import ResourceDefinitionError, Volatility
from .._schema import resolve, schema_type, snake, walking
from ._config import ToolOverride
from ._schema import JsonField, column_of, describe, is_array, items, properties, sql_identifier
from ._values import split_path

__all__ = ["ToolTable"]


class ToolTable:
    """The plan of one tool's table: its columns, and how rows and arguments map to JSON."""

    def __init__(self, server: str, tool: Tool, override: ToolOverride, taken: set[str]) -> None:
        """``server``: the namespace; ``taken``: table names already used (this one is added).

        The tool's schemas are read in one walk, memoized and bounded (``SchemaTooLarge``)."""
        with walking():
            self._plan(server, tool, override, taken)

    def _plan(self, server: str, tool: Tool, override: ToolOverride, taken: set[str]) -> None:
        self.server = server
        self.tool = tool
        self.override = override
        if override.table is not None:
            if override.table in taken:
                raise ResourceDefinitionError(
                    f"MCP server {self.server!r}, tool {tool.name!r}: table name"
                    f" {override.table!r} is already taken"
                )
            self.name = override.table
            taken.add(self.name)
        else:
            self.name = sql_identifier(f"{self.server}_{snake(tool.name) or 'tool'}", taken=taken)
        read_only = bool(tool.annotations and tool.annotations.read_only_hint)
        self.verb = override.verb or ("select" if read_only else "insert")
        self.volatility: Volatility = override.volatility or (
            "stable" if self.verb == "select" else "volatile"
        )

        in_schema = tool.input_schema if isinstance(tool.input_schema, Mapping) else {}
        in_props = properties(in_schema, in_schema)
        in_required = [p for p in in_schema.get("required") or () if p in in_props]
        self.batch = self._batch_argument(in_props)

        # Argument columns. In batch mode, the array's item fields, then the other arguments.
        arg_specs: list[tuple[str, dict[str, Any], bool, bool]] = []  # source, schema, req, item
        if self.batch is not None:
            item = items(in_props[self.batch], in_schema)
            item_required = set(item.get("required") or ())
            for source, sub in properties(item, in_schema).items():
                arg_specs.append((source, sub, source in item_required, True))
        arg_specs += [
            (s, sub, s in in_required, False) for s, sub in in_props.items() if s != self.batch
        ]

        result_cols, self.result_fields, self.path = self._result_columns(
            {sql_identifier(s, column=True) for s, *_ in arg_specs}
        )
        result_index = {c.name: n for n, c in enumerate(result_cols)}
        taken = set(result_index)
        arg_cols: list[Column] = []
        self.arg_fields: list[JsonField] = []
        self.item_columns: set[str] = set()
        self.keys: list[str] = []
        echoes: set[str] = set()
        for source, sub, required, in_item in arg_specs:
            name = sql_identifier(source, column=True)
            description = describe(sub, optional_argument=not required)
            if name in result_index and name not in echoes:
                # An argument the result echoes (time's "timezone"): one column for both.
                echoes.add(name)
                echoed = result_cols[result_index[name]]
                pg_type = echoed.pg_type
                if not echoed.description and description:
                    result_cols[result_index[name]] = column_of(name, pg_type, description)
            else:
                name = sql_identifier(source, column=True, taken=taken)
                pg_type = schema_type(sub)
                arg_cols.append(column_of(name, pg_type, description))
            self.arg_fields.append(JsonField(name, source, pg_type))
            if in_item:
                self.item_columns.add(name)
            if required:
                self.keys.append(name)
        if self.verb == "insert":
            arg_names = {c.name for c in arg_cols}
            self.columns = arg_cols + [c for c in result_cols if c.name not in arg_names]
        else:
            self.columns = result_cols + arg_cols

    def _batch_argument(self, in_props: Mapping[str, dict[str, Any]]) -> str | None:
        batch = self.override.batch
        if self.verb != "insert" or batch is False:
            if isinstance(batch, str):
                raise ResourceDefinitionError(
                    f"table {self.name!r}: batch applies to insert tables only"
                )
            return None
        if isinstance(batch, str):
            if batch not in in_props or not is_array(in_props[batch]):
                arrays = [p for p, s in in_props.items() if is_array(s)]
                raise ResourceDefinitionError(
                    f"table {self.name!r}: batch argument {batch!r} is not an array argument of"
                    f" tool {self.tool.name!r}; its array arguments are: "
                    + (", ".join(arrays) or "none")
                )
            return batch
        if len(in_props) == 1:
            ((only, schema),) = in_props.items()
            root = self.tool.input_schema
            if is_array(schema) and properties(items(schema, root), root):
                return only
        return None

    def _result_columns(
        self, arg_names: set[str]
    ) -> tuple[list[Column], list[JsonField], list[str]]:
        """The result columns, the fields they come from, and the path to the rows."""
        override = self.override
        out_schema = (
            self.tool.output_schema if isinstance(self.tool.output_schema, Mapping) else None
        )
        path = split_path(override.rows)
        if out_schema is None and override.rows is None and override.columns is None:
            # Unstructured: the text, and the structured content (or the text as JSON).
            used = set(arg_names)
            text = sql_identifier("text" if "text" not in used else "output_text", taken=used)
            result = sql_identifier(
                "result" if "result" not in used else "output_result", taken=used
            )
            self.text_columns: tuple[str, str] | None = (text, result)
            return (
                [
                    column_of(text, "text", "The text the tool returned."),
                    column_of(
                        result,
                        "jsonb",
                        "The structured result the tool returned (or its text,"
                        " when that is a JSON object or array).",
                    ),
                ],
                [],
                [],
            )
        self.text_columns = None
        row_schema: dict[str, Any] = {}
        label = "result"
        if out_schema is not None:
            root = out_schema
            node = resolve(out_schema, root)
            if override.rows is None:
                props = properties(node, root)
                if len(props) == 1 and is_array(next(iter(props.values()))):
                    path = list(props)
            for segment in path:
                if is_array(node) and re.fullmatch(r"-?\d+", segment):
                    node = items(node, root)
                else:
                    props = properties(node, root)
                    if segment not in props:
                        raise ResourceDefinitionError(
                            f"table {self.name!r}: rows path {override.rows!r} does not match"
                            f" the output schema of tool {self.tool.name!r} ({segment!r} is not"
                            " among: " + (", ".join(props) or "no properties") + ")"
                        )
                    node = props[segment]
                    label = segment
            if is_array(node):
                node = items(node, root)
            row_schema = node
        derived: list[tuple[Column, JsonField]] = []
        taken: set[str] = set()
        row_props = properties(row_schema, self.tool.output_schema or {})
        if row_props:
            for prop, sub in row_props.items():
                name = sql_identifier(prop, column=True, taken=taken)
                pg_type = schema_type(sub)
                derived.append(
                    (column_of(name, pg_type, describe(sub)), JsonField(name, prop, pg_type))
                )
        elif row_schema or out_schema is None:
            name = sql_identifier(label, column=True, taken=taken)
            pg_type = schema_type(row_schema) if row_schema else "jsonb"
            derived.append(
                (column_of(name, pg_type, describe(row_schema)), JsonField(name, None, pg_type))
            )
        if override.columns is not None:
            by_name = {f.column: f for _, f in derived}
            cols, fields = [], []
            for name, spec in (override.columns or {}).items():
                if sql_identifier(name, column=True) != name:
                    raise ResourceDefinitionError(
                        f"table {self.name!r}: column {name!r} is not a lower-case SQL"
                        f" identifier; try {sql_identifier(name, column=True)!r}"
                    )
                known = by_name.get(name)
                source = spec.source or (known.source if known else name)
                description = spec.description or next(
                    (c.description for c, f in derived if f.column == name), ""
                )
                cols.append(column_of(name, spec.type, description))
                fields.append(JsonField(name, source, spec.type))
            return cols, fields, path
        return [c for c, _ in derived], [f for _, f in derived], path
