"""The resource model: an agent's capability as a table.

``define_resource`` and ``resource_from_tool`` build a ``Resource``; its
resolvers receive ``Bindings`` (and, if they ask for it, a ``CallContext``), and
raise ``TransientError`` to ask for a retry. Nothing here knows SQL text, the sidecar or
the wire.
"""

from ._call import CallContext, TransientError
from ._columns import Column, columns_from_model, pg_type_for
from ._fns import Fn, FnCatalog, FnParam, define_fn, fn_from_tool
from ._fns_mcp import fns_from_mcp
from ._resource import (
    VERBS,
    Bindings,
    Rate,
    Resource,
    ResourceDefinitionError,
    Volatility,
    call_resolver,
    define_resource,
)
from ._sources import merge as merge_sources
from ._tool import resource_from_tool

__all__ = [
    "VERBS",
    "Bindings",
    "CallContext",
    "Column",
    "Fn",
    "FnCatalog",
    "FnParam",
    "Rate",
    "Resource",
    "ResourceDefinitionError",
    "TransientError",
    "Volatility",
    "call_resolver",
    "columns_from_model",
    "define_fn",
    "define_resource",
    "fn_from_tool",
    "fns_from_mcp",
    "merge_sources",
    "pg_type_for",
    "resource_from_tool",
]
