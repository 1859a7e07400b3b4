"""Loading what to serve: a dotted module or a .py file with a `resources` list (and/or a
`fns` list of functions), and the tables of the configured APIs and MCP servers beside
them (``sources``)."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from glove_scratchpad.resources import Fn, Resource, merge_sources

if TYPE_CHECKING:
    from glove_scratchpad.resources.mcp import McpBridge
    from glove_scratchpad.resources.openapi import OpenApiBridge

__all__ = ["load_fns", "load_resources", "sources"]


def _module(spec: str) -> ModuleType:
    path = Path(spec)
    if spec.endswith(".py") or path.is_file():
        if not path.is_file():
            raise ValueError(f"no such file: {spec}: give --resources an existing .py file "
                             "or a module's dotted name")
        name = f"_glove_resources_{path.stem}_{abs(hash(path.resolve()))}"
        if name in sys.modules:  # loaded once, whether for its resources or its fns
            return sys.modules[name]
        loader_spec = importlib.util.spec_from_file_location(name, path)
        if loader_spec is None or loader_spec.loader is None:
            raise ValueError(f"cannot load {spec}")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[name] = module
        loader_spec.loader.exec_module(module)
        return module
    try:
        return importlib.import_module(spec)
    except ModuleNotFoundError as exc:
        if exc.name is None or not (spec == exc.name or spec.startswith(exc.name + ".")):
            raise  # the module was found: one it imports is missing, a traceback says where
        raise ValueError(f"no module named {spec!r} (and no file by that name): give "
                         "--resources a .py file, or a module on the Python path") from None


def load_resources(specs: Iterable[str]) -> list[Resource]:
    """Exactly the ``resources`` lists of the given modules or files, in order."""
    out: list[Resource] = []
    for spec in specs:
        module = _module(spec)
        found = getattr(module, "resources", None)
        if found is None:
            if getattr(module, "fns", None) is not None:
                continue  # functions only
            raise ValueError(f"{spec} has no `resources` list")
        items = list(found)
        bad = [r for r in items if not isinstance(r, Resource)]
        if bad:
            raise ValueError(f"{spec}: `resources` holds something that is not a Resource: "
                             f"{bad[0]!r}")
        out.extend(items)
    return out


def load_fns(specs: Iterable[str]) -> list[Fn]:
    """The ``fns`` lists of the given modules or files, in order (a module may have none)."""
    out: list[Fn] = []
    for spec in specs:
        items = list(getattr(_module(spec), "fns", None) or ())
        bad = [f for f in items if not isinstance(f, Fn)]
        if bad:
            raise ValueError(f"{spec}: `fns` holds something that is not a function (Fn): "
                             f"{bad[0]!r}")
        out.extend(items)
    return out


async def sources(resources: list[Resource] | None, apis: OpenApiBridge | None,
                  bridge: McpBridge) -> list[Resource]:
    """The resources modules' tables, then each API's, then each MCP server's, as one list.

    A local document that cannot be read, or another mistake of the configuration, is an
    error: the server does not start. What an upstream serves costs only its own
    tables, each with a warning that names it: an MCP server that does not start or list
    its tools (``bridge.failures``), an API whose document cannot be fetched or breaks a
    limit (``apis.failures``), and a table whose name an earlier source took."""
    groups: list[tuple[str, list[Resource]]] = [("the resources module", resources or [])]
    if apis is not None and apis.configs:
        await apis.load()
        groups += [(f"API {ns!r}", tables) for ns, tables in apis.by_api.items()]
    if bridge.connections:
        await bridge.start()
        groups += [(f"MCP server {ns!r}", tables) for ns, tables in bridge.by_server.items()]
    merged, _ = merge_sources(groups)
    return merged
