"""Functions: an agent's capability as one call, ``fn.<name>(args jsonb)``.

The light alternative to a resource. A resource is a table: columns, required
keys, a volatility. A function is only a name, an input schema (a pydantic
model or a JSON Schema of the arguments object) and a call (plain or async)
that returns any JSON-able value. It suits a catalogue of tools that is
unknown up front (an MCP server discovered at runtime) or a tool whose result
is one value to branch on rather than rows worth joining.

- ``define_fn`` authors one inline; ``fn_from_tool`` wraps a typed Python
  callable (its parameters are the input); ``_fns_mcp.fns_from_mcp`` turns every
  tool of an MCP server into one function named ``<namespace>_<tool>``, like the
  bridge's tables. ``FnCatalog`` is the registry a Database serves.
- The input's top-level properties are also the function's named parameters
  (``fn.echo(x => 1, y => 'a')``), typed like resource columns (JSON Schema:
  integer -> bigint, number -> double precision, boolean -> boolean, string ->
  text, date-time -> timestamptz, date -> date, anything else -> jsonb). A
  property whose name is not a plain lower-case SQL identifier is renamed
  (camelCase -> snake_case, ``time`` -> ``time_``); ``FnParam.key`` keeps the
  name the tool takes.
- A handler receives the validated arguments: an instance of the input model,
  or a dict. With no input schema any JSON object is accepted.

This module knows nothing of the sidecar, the wire or statement text.
"""

from __future__ import annotations

import inspect
import json
import re
import typing
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pglast.keywords import COL_NAME_KEYWORDS, RESERVED_KEYWORDS
from pydantic import BaseModel, ConfigDict, ValidationError, create_model
from pydantic_core import PydanticSerializationError, to_jsonable_python

from glove_scratchpad.errors import ExternalRoutineError, InvalidParameterValue

from ._columns import columns_from_model
from ._resource import IDENTIFIER, RESERVED_PREFIXES, ResourceDefinitionError, call_resolver
from ._schema import json_type, resolve, schema_type, snake, sql_name

__all__ = ["ARGS", "Fn", "FnCatalog", "FnParam", "define_fn", "fn_from_tool", "make_fn"]

ARGS = "args"  # the first parameter of every function: the arguments as one jsonb object
MAX_NAMED = 99  # named parameters: Postgres' FUNC_MAX_ARGS (100) less ``args``
# Words a named argument cannot be spelled unquoted (``name => …`` takes type_function_name).
_KEYWORDS = frozenset(RESERVED_KEYWORDS) | frozenset(COL_NAME_KEYWORDS)

Handler = Callable[[Any], Any | Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class FnParam:
    """One named parameter: a top-level property of the input."""

    name: str  # the SQL name: fn.f(name => …)
    key: str  # the property the tool takes
    pg_type: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True, eq=False)
class Fn:
    """A capability served as ``fn.<name>(args jsonb, <named params>)``. Build one with
    ``define_fn``, ``fn_from_tool`` or ``fns_from_mcp``."""

    name: str
    handler: Handler
    description: str = ""
    input_schema: Mapping[str, Any] | None = None  # JSON Schema of the arguments object
    model: type[BaseModel] | None = None
    params: tuple[FnParam, ...] = ()
    read_only: bool | None = None  # the tool's own hint, when it gives one
    check_input: bool = True  # validate against input_schema before calling
    # The description without what its maker appended (an MCP tool's origin): what a
    # one-line description is cut from. None: the description.
    brief: str | None = None

    # -- describing ------------------------------------------------------------

    def signature(self) -> str:
        """``name(args jsonb, x bigint, …)``: how it is called (schema not included)."""
        named = ", ".join(f"{p.name} {p.pg_type}" for p in self.params)
        return f"{self.name}({ARGS} jsonb" + (f", {named}" if named else "") + ")"

    def summary(self) -> str:
        """The description and the arguments, in one paragraph (the function's comment)."""
        about = self.description.strip()
        parts = [about if not about or about.endswith((".", "!", "?", ")")) else about + "."]
        if self.params:
            items = []
            for p in self.params:
                item = f"{p.name} {p.pg_type}" + (" (required)" if p.required else "")
                if p.key != p.name:
                    item += f' (the tool\'s "{p.key}")'
                if p.description:
                    item += (" " if p.description.startswith("(") else ": ") + p.description
                items.append(item)
            joined = "; ".join(items)
            parts.append("Arguments, named (x => …) or as one jsonb object (args): " + joined
                         + ("" if joined.endswith(".") else "."))
            hidden = self._hidden_properties()
            if hidden:
                parts.append(f"More arguments, in args only: {', '.join(hidden)}.")
        elif self.input_schema is None:
            parts.append("Arguments: any JSON object, as args.")
        else:
            parts.append("Takes no arguments.")
        parts.append("Returns jsonb.")
        return " ".join(p for p in parts if p)

    def _hidden_properties(self) -> list[str]:
        props = (self.input_schema or {}).get("properties")
        named = {p.key for p in self.params}
        return [k for k in props or () if k not in named] if isinstance(props, Mapping) else []

    # -- calling -----------------------------------------------------------------

    def validate(self, arguments: Mapping[str, Any]) -> Any:
        """The arguments as the handler takes them (a model instance or a dict), or
        ``InvalidParameterValue`` naming the argument."""
        if self.model is not None:
            try:
                return self.model.model_validate(dict(arguments))
            except ValidationError as exc:
                err = exc.errors()[0]
                where = ".".join(str(x) for x in err["loc"])
                raise self._invalid(err["msg"], where, err.get("input")) from None
        if self.input_schema is not None and self.check_input:
            error = _schema_error(self.input_schema, dict(arguments))
            if error is not None:
                message, where, value = error
                raise self._invalid(message, where, value)
        return dict(arguments)

    def _invalid(self, why: str, where: str, value: Any) -> InvalidParameterValue:
        about = f'argument "{where}"' if where else "arguments"
        shown = json.dumps(value, default=str, ensure_ascii=False)[:200]
        return InvalidParameterValue(
            f"invalid {about} for function fn.{self.name}: {why}"[:1000],
            detail=f"The value given: {shown}" if where else None,
            hint=f"It takes fn.{self.signature()}. \\df+ fn.{self.name} describes its "
            "arguments.",
        )

    async def invoke(self, validated: Any) -> Any:
        """Call the handler with validated arguments; its exceptions propagate."""
        return await call_resolver(self.handler, validated)

    def result_json(self, value: Any) -> str | None:
        """A handler's result as JSON text (None: SQL NULL), or an error naming the function."""
        if value is None:
            return None
        try:
            plain = to_jsonable_python(value, by_alias=True)
            return json.dumps(plain, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
        except (PydanticSerializationError, ValueError, TypeError) as exc:
            raise ExternalRoutineError(
                f"function fn.{self.name} returned a value that is not JSON:"
                f" {type(value).__name__}"[:500],
                detail=str(exc)[:500],
                hint="A function returns any JSON-able value: dicts, lists, strings, numbers, "
                "booleans, None, pydantic models; NaN and Infinity are not JSON.",
            ) from None

    async def call(self, arguments: Mapping[str, Any] | None = None) -> Any:
        """Validate, call, and return the JSON-able result (what SQL receives as jsonb)."""
        out = self.result_json(await self.invoke(self.validate(arguments or {})))
        return None if out is None else json.loads(out)


def _schema_error(schema: Mapping[str, Any], instance: Any) -> tuple[str, str, Any] | None:
    from jsonschema import exceptions, validators

    cls = validators.validator_for(schema)
    error = exceptions.best_match(cls(schema).iter_errors(instance))
    if error is None:
        return None
    where = ".".join(str(p) for p in error.absolute_path)
    if not where and error.validator == "required":
        # "'x' is a required property": name it as the argument.
        match = re.match(r"'([^']+)' is a required property", error.message)
        if match:
            return "it is required and was not given", match.group(1), None
    return error.message, where, error.instance


# -- names ----------------------------------------------------------------------------


def _identifier(text: str, taken: set[str]) -> str:
    """A parameter's SQL name: one a named argument can spell unquoted."""
    return sql_name(text, fallback="arg", taken=taken, reserved=_KEYWORDS)


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not IDENTIFIER.match(name):
        raise ResourceDefinitionError(
            f"function name {name!r} is not a lower-case SQL identifier (letters, digits and _,"
            " at most 63 characters, not starting with a digit); a model writes names unquoted"
        )
    if name.startswith(RESERVED_PREFIXES):
        raise ResourceDefinitionError(
            f"function name {name!r} starts with a reserved prefix {RESERVED_PREFIXES}"
        )


# -- JSON Schema -> parameters ----------------------------------------------------------


def _describe(schema: Mapping[str, Any]) -> str:
    text = " ".join(str(schema.get("description") or schema.get("title") or "").split())
    extras = []
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        extras.append("one of: " + ", ".join(str(v) for v in enum))
    if schema.get("default") is not None:
        extras.append("default: " + json.dumps(schema["default"], ensure_ascii=False))
    if extras:
        text = f"{text} ({'; '.join(extras)})".strip()
    return text


def _schema_params(schema: Mapping[str, Any]) -> tuple[FnParam, ...]:
    root = resolve(schema, schema)
    props = root.get("properties")
    if not isinstance(props, Mapping):
        return ()
    required = set(root.get("required") or ())
    taken = {ARGS}
    out = []
    for key, sub in list(props.items())[:MAX_NAMED]:
        resolved = resolve(sub, schema)
        out.append(FnParam(
            name=_identifier(str(key), taken),
            key=str(key),
            pg_type=schema_type(resolved),
            description=_describe(resolved),
            required=key in required,
        ))
    return tuple(out)


def _model_params(model: type[BaseModel]) -> tuple[FnParam, ...]:
    taken = {ARGS}
    fields = {(f.alias or n): f for n, f in model.model_fields.items()}
    out = []
    for col in columns_from_model(model)[:MAX_NAMED]:
        info = fields.get(col.name)
        required = info is not None and info.is_required()
        description = col.description
        if info is not None and not required and info.default is not None:
            try:
                shown = json.dumps(to_jsonable_python(info.default), ensure_ascii=False)
            except (PydanticSerializationError, ValueError, TypeError):
                shown = None
            if shown is not None:
                description = f"{description} (default: {shown})".strip()
        out.append(FnParam(
            name=_identifier(col.name, taken),
            key=col.name,
            pg_type=col.pg_type,
            description=description,
            required=required,
        ))
    return tuple(out)


# -- defining ---------------------------------------------------------------------------


def define_fn(
    name: str,
    *,
    input: type[BaseModel] | Mapping[str, Any] | None = None,
    description: str = "",
    handler: Handler,
    read_only: bool | None = None,
) -> Fn:
    """Define a function; a definition that could not be served is an error here.

    ``input``: a pydantic model (the handler receives an instance of it), a JSON
    Schema of the arguments object (the handler receives a dict, checked against
    the schema), or None (any JSON object, as a dict).
    """
    return make_fn(name, input=input, description=description, handler=handler,
                   read_only=read_only, check_input=True)


def make_fn(name: str, *, input: Any, description: str, handler: Handler,
            read_only: bool | None, check_input: bool, brief: str | None = None) -> Fn:
    """``define_fn``'s work; ``check_input=False`` leaves the arguments for the tool to
    check (an MCP server checks its own)."""
    _check_name(name)
    if not callable(handler):
        raise ResourceDefinitionError(f"function {name!r}: handler must be callable")
    if input is None:
        return Fn(name, handler, description, read_only=read_only, brief=brief)
    if isinstance(input, type) and issubclass(input, BaseModel):
        return Fn(name, handler, description, input.model_json_schema(by_alias=True), input,
                  _model_params(input), read_only, brief=brief)
    if not isinstance(input, Mapping):
        raise ResourceDefinitionError(
            f"function {name!r}: input must be a pydantic model or a JSON Schema dict, not"
            f" {type(input).__name__}"
        )
    schema = dict(input)
    kind = json_type(resolve(schema, schema))
    if kind not in (None, "object"):
        raise ResourceDefinitionError(
            f"function {name!r}: its input schema must describe a JSON object (its"
            f" arguments), not {kind!r}"
        )
    if check_input:
        from jsonschema import exceptions, validators

        try:
            validators.validator_for(schema).check_schema(schema)
        except exceptions.SchemaError as exc:
            raise ResourceDefinitionError(
                f"function {name!r}: its input is not a valid JSON Schema: {exc.message}"
            ) from None
    return Fn(name, handler, description, schema, None, _schema_params(schema), read_only,
              check_input, brief)


def fn_from_tool(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool | None = None,
) -> Fn:
    """One typed Python callable (plain or async) as one function.

    Its parameters are the input: typed parameters (those with defaults are
    optional), or one parameter annotated with a pydantic model. The name
    defaults to the callable's (in snake_case), the description to its docstring.
    """
    fn_name = name if name is not None else snake(getattr(fn, "__name__", "")) or "tool"
    hints = typing.get_type_hints(fn)
    params = [p for p in inspect.signature(fn).parameters.values()
              if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    doc = description if description is not None else inspect.getdoc(fn) or ""
    if len(params) == 1:
        only = hints.get(params[0].name)
        if isinstance(only, type) and issubclass(only, BaseModel):
            pass_model = params[0]

            def with_model(model: Any) -> Any:
                if pass_model.kind is pass_model.KEYWORD_ONLY:
                    return fn(**{pass_model.name: model})
                return fn(model)

            return define_fn(fn_name, input=only, description=doc, handler=with_model,
                             read_only=read_only)
    fields: dict[str, Any] = {}
    for p in params:
        if p.name.startswith("_"):
            raise ResourceDefinitionError(
                f"fn_from_tool({fn_name}): parameter {p.name!r} starts with _; rename it"
            )
        default = ... if p.default is inspect.Parameter.empty else p.default
        fields[p.name] = (hints.get(p.name, Any), default)
    model = create_model(
        f"{fn_name}_arguments", __config__=ConfigDict(extra="forbid"), **fields
    )
    positional = [p.name for p in params if p.kind is p.POSITIONAL_ONLY]

    def with_kwargs(arguments: BaseModel) -> Any:
        values = {k: getattr(arguments, k) for k in fields}
        return fn(*[values.pop(k) for k in positional], **values)

    return define_fn(fn_name, input=model, description=doc, handler=with_kwargs,
                     read_only=read_only)


# -- the registry -----------------------------------------------------------------------


class FnCatalog:
    """The functions a Database serves, by name."""

    def __init__(self, fns: Iterable[Fn] = ()) -> None:
        self._fns: dict[str, Fn] = {}
        self.extend(fns)

    def add(self, fn: Fn) -> Fn:
        if not isinstance(fn, Fn):
            raise TypeError(f"not a function (Fn): {fn!r}")
        if fn.name in self._fns:
            raise ValueError(f"two functions are named {fn.name}")
        self._fns[fn.name] = fn
        return fn

    def extend(self, fns: Iterable[Fn]) -> None:
        for fn in fns:
            self.add(fn)

    def get(self, name: str) -> Fn | None:
        return self._fns.get(name)

    def names(self) -> list[str]:
        return list(self._fns)

    def __getitem__(self, name: str) -> Fn:
        return self._fns[name]

    def __contains__(self, name: object) -> bool:
        return name in self._fns

    def __iter__(self) -> Iterator[Fn]:
        return iter(self._fns.values())

    def __len__(self) -> int:
        return len(self._fns)

    def __repr__(self) -> str:
        return f"FnCatalog({', '.join(self._fns)})"

