"""The gate's modules keep the house rules: each has one job and says its rules in its
docstring, stays under 500 lines, names its public API in ``__all__``, and imports
no other module's private names. ``gate.check`` keeps the signature the engine calls."""

from __future__ import annotations

import ast as pyast
import inspect
from pathlib import Path
from types import ModuleType

import pytest

from glove_scratchpad.server.sql import (
    allowlist,
    gate,
    pg_settings_read,
    setting_rules,
    statement_kinds,
    system_calls,
)

MODULES = (gate, allowlist, setting_rules, statement_kinds, pg_settings_read, system_calls)
MAX_LINES = 500  # DESIGN.md: a module stays near 500 lines or less
SERVER = Path(str(gate.__file__)).parents[1]  # the server package


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_module_is_small_documented_and_explicit(module: ModuleType) -> None:
    source = Path(str(module.__file__)).read_text()
    assert len(source.splitlines()) < MAX_LINES
    assert module.__doc__ and "Rules" in module.__doc__
    public = module.__all__
    for name in public:
        assert not name.startswith("_") and hasattr(module, name), name


def _private_imports(path: Path) -> list[str]:
    """``from x import _name`` and ``module._name`` for the gate's modules, in ``path``."""
    ours = {m.__name__.rsplit(".", 1)[-1] for m in MODULES}
    found = []
    for node in pyast.walk(pyast.parse(path.read_text())):
        if isinstance(node, pyast.ImportFrom) and (node.module or "").rsplit(".", 1)[-1] in ours:
            found += [f"{path.name}: from {node.module} import {a.name}"
                      for a in node.names if a.name.startswith("_")]
        elif (isinstance(node, pyast.Attribute) and node.attr.startswith("_")
              and not node.attr.startswith("__")
              and isinstance(node.value, pyast.Name) and node.value.id in ours):
            found.append(f"{path.name}:{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_no_module_reaches_into_the_gates_private_names() -> None:
    tests = Path(__file__).parents[1]
    paths = [*SERVER.rglob("*.py"), *(tests / "sql").glob("*.py"),
             *(tests / "security").glob("*.py")]
    assert [f for p in paths for f in _private_imports(p)] == []


def test_check_keeps_the_signature_the_engine_calls() -> None:
    params = inspect.signature(gate.check).parameters
    assert list(params)[:6] == ["node", "is_resource", "params", "protected_settings",
                                "secret_settings", "is_function"]
    assert all(p.kind is p.KEYWORD_ONLY for name, p in params.items() if name != "node")
    assert all(p.default is not p.empty for name, p in params.items()
               if name not in ("node", "is_resource"))
    for name in ("CATALOG_RELATIONS", "FUNCTIONS", "PROTECTED_SETTINGS", "SECRET_SETTINGS",
                 "STATEMENT_KINDS"):
        assert name in gate.__all__
