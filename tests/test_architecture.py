"""The house rules, checked on the source: module size, private names, import circles
and the direction of the layers (docs/architecture.md).

- No module of the package is over ``MAX_LINES`` lines.
- No module imports a ``_private`` name from another module.
- No import circle, imports under ``if TYPE_CHECKING:`` counted: a type is a dependency.
- resources <- catalog <- server, and the wire codec imports nothing but errors.
- Every module says what it is for, in a docstring of a sentence at least.
- The engine's rooms take a ``Statement`` (or less), never the ``Session``; only the
  database, which makes sessions, imports the session.
- The network layer uses the session through its contract (``NET_CONTRACT``) alone.
- docs/architecture.md names every module in its folder's row of "The rooms".
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 500
# What the network layer may use of a session: running (a portal run's fast read too,
# awaited or answered in callbacks),
# describing, failing statements, whether a COMMIT runs (a cancel spares it), and the
# connection's facts it sets.
NET_CONTRACT = frozenset({"answer_read", "canceller", "close", "committing", "copy", "describe",
                          "describe_cursor", "endpoint",
                          "execute", "fail", "fast_read", "new_request", "pid", "run",
                          "sink", "tx_status", "user", "writes"})
ENGINE = "glove_scratchpad.server.engine"
# Where each part of the package lives in the source tree: the packaging's own map
# (pyproject.toml), but for the sub-packages that live inside their parent's folder.
_MAPPED = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
    "package-dir"]
PACKAGE_DIRS = {name: ROOT / folder for name, folder in _MAPPED.items()
                if not folder.startswith(_MAPPED.get(name.rpartition(".")[0], "//") + "/")}


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for prefix, folder in PACKAGE_DIRS.items():
        for path in folder.rglob("*.py"):
            rel = path.relative_to(folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            name = ".".join([prefix, *parts])
            if prefix == "glove_scratchpad" and parts and f"{prefix}.{parts[0]}" in \
                    PACKAGE_DIRS:
                continue  # a link to a folder of its own (below)
            found[name] = path
    return found


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _imports(name: str) -> list[tuple[str, list[str], bool]]:
    """(module imported, names taken from it, at run time) for each import of a module."""
    tree = ast.parse(MODULES[name].read_text())
    typing_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            typing_only.update(id(n) for child in node.body for n in ast.walk(child))
    base = name if _is_package(name) else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        runtime = id(node) not in typing_only
        if isinstance(node, ast.Import):
            out.extend((a.name, [], runtime) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = base.split(".")
                parts = parts[:len(parts) - node.level + 1]
                module = ".".join(parts + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names = [a.name for a in node.names]
            if f"{module}.{names[0]}" in MODULES:  # from package import submodule
                out.extend((f"{module}.{n}", [], runtime) for n in names)
            else:
                out.append((module, names, runtime))
    return out


def _internal(module: str) -> str | None:
    while module and module not in MODULES:
        module = module.rpartition(".")[0]
    return module or None


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_is_too_long(name):
    lines = len(MODULES[name].read_text().splitlines())
    assert lines <= MAX_LINES, f"{MODULES[name]} has {lines} lines; split it by its jobs"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_private_name_is_imported_from_another_module(name):
    for module, names, _ in _imports(name):
        if module == "__future__" or _internal(module) is None:
            continue
        private = [n for n in names if n.startswith("_")]
        assert not private, f"{name} imports {private} from {module}"


def test_there_are_no_import_circles():
    graph = {name: sorted({m for module, _, _ in _imports(name)
                           if (m := _internal(module)) is not None and m != name})
             for name in MODULES}
    # A package's __init__ runs before its submodules: importing a submodule from the
    # package that re-exports it is the package's own business, not a circle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w.startswith(v + ".") and _is_package(v):
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    assert circles == []


@pytest.mark.parametrize(("layer", "forbidden"), [
    ("glove_scratchpad.resources", ("glove_scratchpad.catalog", "glove_scratchpad.server")),
    ("glove_scratchpad.catalog", ("glove_scratchpad.server",)),
    ("glove_scratchpad.wire", ("glove_scratchpad.catalog", "glove_scratchpad.server",
                               "glove_scratchpad.resources", "asyncio", "pglast",
                               "pydantic", "asyncpg")),
    # Pure: the SQL layer reads names and errors, never the catalog (its __init__ brings
    # in the driver) nor the resources.
    ("glove_scratchpad.server.sql", ("glove_scratchpad.server.engine",
                                     "glove_scratchpad.server.net", "glove_scratchpad.catalog",
                                     "glove_scratchpad.resources", "asyncio", "asyncpg")),
    ("glove_scratchpad.names", ("glove_scratchpad.catalog", "glove_scratchpad.server",
                                "glove_scratchpad.resources", "asyncio", "asyncpg")),
    ("glove_scratchpad.stream", ("glove_scratchpad.catalog", "glove_scratchpad.server",
                                 "glove_scratchpad.resources")),
    ("glove_scratchpad.background", ("glove_scratchpad.catalog", "glove_scratchpad.server",
                                     "glove_scratchpad.resources")),
    ("glove_scratchpad.server.engine", ("glove_scratchpad.server.net",
                                        "glove_scratchpad.wire.connection")),
])
def test_layers_import_one_way(layer, forbidden):
    for name in MODULES:
        if name != layer and not name.startswith(layer + "."):
            continue
        for module, _, _ in _imports(name):
            bad = [f for f in forbidden if module == f or module.startswith(f + ".")]
            assert not bad, f"{name} imports {module}"


@pytest.mark.parametrize("name", [n for n in PACKAGE_DIRS if n != "glove_scratchpad"])
def test_static_tools_see_the_package_as_it_is_imported(name):
    # glove_scratchpad/<part> links to the folder the packaging maps it to, so mypy and
    # other tools that do not read setuptools' package-dir resolve our own modules.
    link = ROOT / "glove_scratchpad" / name.rpartition(".")[2]
    assert link.is_symlink(), f"{link} is not a link to {PACKAGE_DIRS[name]}"
    assert link.resolve() == PACKAGE_DIRS[name].resolve()


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_module_says_what_it_is_for(name):
    doc = ast.get_docstring(ast.parse(MODULES[name].read_text()))
    assert doc and len(doc.split()) >= 10, f"{MODULES[name]} has no docstring that says much"


def _session_names(tree: ast.AST) -> set[str]:
    """The attributes read of ``session`` or ``self.session`` in a module."""
    return {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and (
        (isinstance(n.value, ast.Name) and n.value.id == "session")
        or (isinstance(n.value, ast.Attribute) and n.value.attr == "session"))}


def test_the_network_layer_uses_the_session_through_its_contract():
    from glove_scratchpad.server.engine.session import Session

    used: set[str] = set()
    for name in MODULES:
        if name.startswith("glove_scratchpad.server.net."):
            used |= _session_names(ast.parse(MODULES[name].read_text()))
    assert used <= NET_CONTRACT, f"net reaches into the session: {sorted(used - NET_CONTRACT)}"
    session = Session.__init__.__code__.co_names
    missing = [n for n in NET_CONTRACT if not hasattr(Session, n) and n not in session]
    assert missing == [], f"the contract names what the session lacks: {missing}"


@pytest.mark.parametrize("name", [n for n in sorted(MODULES) if n.startswith(ENGINE + ".")])
def test_no_room_of_the_engine_takes_the_session(name):
    if name in (f"{ENGINE}.session", f"{ENGINE}.database"):
        return  # the session itself, and the database that makes sessions
    tree = ast.parse(MODULES[name].read_text())
    imported = [m for m, _, _ in _imports(name) if m == f"{ENGINE}.session"]
    assert imported == [], f"{name} imports the session"
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for arg in [*node.args.args, *node.args.kwonlyargs]:
                note = ast.unparse(arg.annotation) if arg.annotation is not None else ""
                assert "Session" not in note.split("."), \
                    f"{name}.{node.name} takes a Session ({arg.arg}: {note})"


def test_the_sql_layer_is_imported_without_the_engine_the_catalog_or_a_driver():
    sql = sorted(n for n in MODULES if n.startswith("glove_scratchpad.server.sql."))
    code = ("import sys\n" + "".join(f"import {n}\n" for n in sql)
            + "print(sorted({m.split('.')[0] if not m.startswith('glove') else m for m in "
            "sys.modules if m.startswith(('asyncio', 'asyncpg', 'glove_scratchpad.catalog', "
            "'glove_scratchpad.server.engine', 'glove_scratchpad.server.net'))}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_mypy_reads_our_own_modules_and_finds_nothing():
    """mypy resolves glove_scratchpad.catalog, .resources and .server to our modules (no
    override hides one of them), and reports no error on the package."""
    overrides = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"].get(
        "overrides", [])
    for entry in overrides:
        modules = entry["module"] if isinstance(entry["module"], list) else [entry["module"]]
        hides = entry.get("ignore_missing_imports") or entry.get("follow_imports") == "skip"
        assert not (hides and any(m.startswith("glove_scratchpad") for m in modules)), entry
    done = subprocess.run([sys.executable, "-m", "mypy"], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:]


def _room_rows() -> dict[str, str]:
    """docs/architecture.md's table of rooms: each row by its first cell's path."""
    doc = (ROOT / "docs" / "architecture.md").read_text()
    return {line.split("`")[1]: line for line in doc.splitlines() if line.startswith("| `")}


ROOM_ROWS = _room_rows()


@pytest.mark.parametrize("name", sorted(n for n in MODULES if not _is_package(n)))
def test_every_module_is_a_room_of_the_architecture(name):
    path = MODULES[name].relative_to(ROOT)
    folder, stem = path.parent.as_posix(), path.stem
    row = (ROOM_ROWS.get(path.as_posix()) or ROOM_ROWS.get(f"{folder}/")
           or ROOM_ROWS.get(f"{folder}/*.py"))
    assert row is not None, f"docs/architecture.md has no row of the rooms for {path}"
    assert row.startswith(f"| `{path.as_posix()}`") or f"`{stem}`" in row, (
        f"docs/architecture.md does not name {path} (`{stem}`) in the row of {folder}/: "
        "say there what it holds")
