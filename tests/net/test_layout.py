"""The net room's own rules (the house's are tests/test_architecture.py): its modules,
each importable alone, and none imports the server.

``server`` builds connections and ``connection`` uses ``startup`` and ``portals``;
they all share ``state``. Nothing in ``net`` imports ``server``, so the server and
its connections no longer call into each other.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import glove_scratchpad.server.net as net

NET = Path(net.__file__).parent
MODULES = sorted(p.stem for p in NET.glob("*.py") if p.stem != "__init__")


def _imports(module: str) -> list[tuple[str, list[str]]]:
    """(module imported, names taken) for each import in ``net/<module>.py``,
    with relative imports resolved against ``glove_scratchpad.server.net``."""
    tree = ast.parse((NET / f"{module}.py").read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = ["glove_scratchpad", "server", "net"][: 4 - node.level]
                base = ".".join([*parts, base] if base else parts)
            names = [a.name for a in node.names]
            found.append((base, names))
            for name in names:  # ``from . import portals``
                found.append((f"{base}.{name}", []))
        elif isinstance(node, ast.Import):
            found.extend((a.name, []) for a in node.names)
    return found


def _net_deps(module: str) -> set[str]:
    prefix = "glove_scratchpad.server.net."
    return {m.removeprefix(prefix) for m, _ in _imports(module)
            if m.startswith(prefix) and m.removeprefix(prefix) in MODULES}


def test_the_modules_are_the_ones_the_docstrings_describe():
    assert MODULES == ["auth", "callbacks", "connection", "copy", "internal", "operator",
                       "peers", "phases", "portal_run", "portals", "relay", "server", "sink",
                       "slots", "startup", "state", "statements", "suspended"]


@pytest.mark.parametrize("module", MODULES)
def test_each_module_imports_alone(module):
    done = subprocess.run([sys.executable, "-c", f"import glove_scratchpad.server.net.{module}"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_nothing_in_net_imports_the_server():
    graph = {m: _net_deps(m) for m in MODULES}
    assert not any("server" in deps for deps in graph.values())
    assert graph["auth"] == graph["slots"] == graph["sink"] == set()  # the shared ends
    assert graph["state"] == {"slots"}  # its registry of slots
    assert graph["phases"] == graph["internal"] == set()  # the table, the policy: data alone
