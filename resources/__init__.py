"""The resource model: an agent's capability as a table.

``define_resource`` and ``resource_from_tool`` build a ``Resource``; its
resolvers receive ``Bindings``. Nothing here knows SQL text, the sidecar or
the wire.
"""

from ._columns import Column, columns_from_model, pg_type_for
from ._resource import (
    VERBS,
    Bindings,
    Resource,
    ResourceDefinitionError,
    Volatility,
    call_resolver,
    define_resource,
)
from ._tool import resource_from_tool

__all__ = [
    "VERBS",
    "Bindings",
    "Column",
    "Resource",
    "ResourceDefinitionError",
    "Volatility",
    "call_resolver",
    "columns_from_model",
    "define_resource",
    "pg_type_for",
    "resource_from_tool",
]
