"""One plain Python callable as one resource.

The callable's parameters are the tool's arguments: typed parameters, or one
parameter annotated with a pydantic input model. Required parameters become
required keys, optional ones filters. The output model (``schema``, or
the return annotation) gives the result columns; argument columns that the
output lacks are added after them, so every argument can be bound in WHERE.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel

from glove_scratchpad.errors import ExternalRoutineError

from ._columns import Column, columns_from_model, pg_type_for
from ._resource import (
    Bindings,
    Resource,
    ResourceDefinitionError,
    Volatility,
    call_resolver,
    define_resource,
)

__all__ = ["resource_from_tool"]


def _output_model(fn: Callable[..., Any], schema: type[BaseModel] | None) -> type[BaseModel]:
    if schema is not None:
        return schema
    hints = typing.get_type_hints(fn)
    ret = hints.get("return")
    for candidate in (ret, *typing.get_args(ret or ())):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    raise ResourceDefinitionError(
        f"resource_from_tool({fn.__name__}): give schema=<pydantic model>, or annotate the"
        " return type as a model or list of models"
    )


def _arguments(fn: Callable[..., Any]) -> tuple[list[Column], list[str], type[BaseModel] | None]:
    """The argument columns, the required ones, and the input model if there is one."""
    hints = typing.get_type_hints(fn)
    params = [
        p for p in inspect.signature(fn).parameters.values()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    if len(params) == 1:
        only = hints.get(params[0].name)
        if isinstance(only, type) and issubclass(only, BaseModel):
            cols = list(columns_from_model(only))
            required = [n for n, f in only.model_fields.items() if f.is_required()]
            return cols, [(only.model_fields[n].alias or n) for n in required], only
    cols, required = [], []
    for p in params:
        annotation = hints.get(p.name, str)
        cols.append(Column(name=p.name, pg_type=pg_type_for(annotation), py_type=annotation))
        if p.default is inspect.Parameter.empty:
            required.append(p.name)
    return cols, required, None


def _with_arguments(result: Any, values: dict[str, Any]) -> Any:
    """A call's rows as dicts, its argument values filled in where the output left them out.

    Postgres re-applies every WHERE predicate to the rows a resolver returns, so
    an argument column the output model lacks would read NULL there and filter
    out every row. Anything that is not rows is passed on for ``validate_rows``
    to judge.
    """
    if result is None or isinstance(result, str | bytes):
        return result
    if isinstance(result, BaseModel | Mapping):
        rows: list[Any] = [result]
    elif isinstance(result, Iterable):
        rows = list(result)
    else:
        return result
    out = []
    for row in rows:
        if isinstance(row, BaseModel):
            row = row.model_dump(by_alias=True, warnings=False)
        elif not isinstance(row, Mapping):
            return rows
        out.append({**row, **{k: v for k, v in values.items() if row.get(k) is None}})
    return out


def _check_required(name: str, rows: Any, required: list[str]) -> None:
    """A row without a field the output model requires is the tool's error, not a NULL."""
    if not isinstance(rows, list):
        return
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            continue
        for column in required:
            if row.get(column) is None:
                raise ExternalRoutineError(
                    f'resource "{name}" returned a row without column "{column}"',
                    detail=f"row {i + 1}: {dict(row)!r}"[:500],
                    hint="The tool must return every required field of its output model, or "
                    "the field must be Optional in the model.",
                )


def resource_from_tool(
    fn: Callable[..., Any],
    *,
    name: str,
    volatility: Volatility,
    schema: type[BaseModel] | None = None,
    op: Literal["select", "insert"] = "select",
    description: str | None = None,
) -> Resource:
    """Serve one callable as a ``select`` (a read tool) or ``insert`` (an action) resource."""
    out_model = _output_model(fn, schema)
    out_cols = list(columns_from_model(out_model))
    arg_cols, required, in_model = _arguments(fn)
    names = {c.name for c in out_cols}
    columns = out_cols + [c for c in arg_cols if c.name not in names]
    arg_names = [c.name for c in arg_cols]
    required_out = [c.name for c in out_cols if not c.nullable]
    doc = description if description is not None else inspect.getdoc(fn) or ""

    def kwargs_of(values: dict[str, Any]) -> dict[str, Any]:
        if in_model is not None:
            return {"__model__": in_model.model_validate(values)}
        return values

    async def invoke(values: dict[str, Any]) -> Any:
        args = kwargs_of(values)
        if "__model__" in args:
            return await call_resolver(fn, args["__model__"])
        return await call_resolver(fn, **args)

    if op == "select":
        async def select(b: Bindings) -> Any:
            values = {n: b.one(n) for n in arg_names if n in required or b.has(n)}
            rows = _with_arguments(await invoke(values), values)
            _check_required(name, rows, required_out)
            return rows

        return define_resource(
            name, columns=columns, keys=required, volatility=volatility,
            filters=[n for n in arg_names if n not in required],
            description=doc, select=select,
        )
    if op == "insert":
        async def insert(rows: list[Any]) -> list[Any]:
            created = []
            for row in rows:
                data = row if isinstance(row, dict) else row.model_dump(by_alias=True)
                values = {n: data[n] for n in arg_names if data.get(n) is not None}
                result = _with_arguments(await invoke(values), values)
                if result is not None:
                    created.extend(result if isinstance(result, list) else [result])
            return created

        return define_resource(
            name, columns=columns, volatility=volatility, description=doc, insert=insert,
        )
    raise ResourceDefinitionError(
        f"resource_from_tool: op must be 'select' or 'insert', not {op!r}"
    )
