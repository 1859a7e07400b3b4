"""The tests mirror the house: every module of the package has a test file where a reader
looks for it first.

A module ``<folder>/<name>.py`` is tested in ``test_<name>.py`` or ``test_<name>_<more>.py``
(a private module's leading ``_`` dropped) in the tests folder that mirrors its folder
(``MIRROR``); a file is the test of the module of the longest name it spells.
``UNTESTED`` lists the modules that have no such file yet. It only shrinks: a listed
module that has its test file fails here until it leaves the list, and a module not
listed fails until its test file exists. Tests of behaviours that cross many modules
(reliability, exactly-once, differential runs, clients, security) keep folders of their
own (tests/README.md).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Source folder -> the tests folder that mirrors it. The four source folders of the package
# (pyproject.toml's package-dir) and their sub-packages.
MIRROR = {
    "server/engine": "tests/engine",
    "server/sql": "tests/sql",
    "server/net": "tests/net",
    "server/console": "tests/console",
    "server": "tests/server",
    "catalog": "tests/catalog",
    "resources": "tests/resources",
    "resources/openapi": "tests/openapi",
    "resources/mcp": "tests/mcp",
    "glove_scratchpad/wire": "tests/wire",
    "glove_scratchpad": "tests",
}
SOURCES = ("server", "catalog", "resources", "glove_scratchpad")
# The modules with no test file of their own yet. Remove a module from here when you give
# it one; never add one (give a new module its test file instead).
UNTESTED = frozenset({
    # server/engine/
    "server/engine/answering.py", "server/engine/approval_rules.py",
    "server/engine/context.py", "server/engine/cursor_reads.py", "server/engine/cursors.py",
    "server/engine/fns.py", "server/engine/prepared.py", "server/engine/services.py",
    "server/engine/sidecar.py", "server/engine/staged.py", "server/engine/statement.py",
    "server/engine/view.py",
    # server/sql/
    "server/sql/nodes.py",
    # server/net/
    "server/net/relay.py",
    # server/console/
    "server/console/port.py", "server/console/reads.py", "server/console/signin.py",
    # server/
    "server/keys.py", "server/loader.py", "server/supervisor.py",
    # catalog/
    "catalog/_approvals.py", "catalog/_cache.py", "catalog/_claim.py", "catalog/_client.py",
    "catalog/_copy.py", "catalog/_fns.py", "catalog/_trips.py", "catalog/_values.py",
    # resources/
    "resources/_fns.py",
    # resources/openapi/
    "resources/openapi/_bridge.py", "resources/openapi/_explain.py",
    "resources/openapi/_lenient.py", "resources/openapi/_schemas.py",
    "resources/openapi/_selection.py",
    # resources/mcp/
    "resources/mcp/_errors.py", "resources/mcp/_http.py", "resources/mcp/_session.py",
    "resources/mcp/_stdio.py", "resources/mcp/_table.py", "resources/mcp/_tool.py",
    "resources/mcp/_values.py",
    # glove_scratchpad/
    "glove_scratchpad/traces.py",
})


def _modules() -> list[str]:
    """Every module of the package, by its path in the source tree, each once:
    glove_scratchpad/server, catalog and resources are links to the root folders."""
    found = []
    for source in SOURCES:
        for path in (ROOT / source).rglob("*.py"):
            rel = path.relative_to(ROOT)
            if path.name == "__init__.py" or any(
                    (ROOT / Path(*rel.parts[:i])).is_symlink()
                    for i in range(1, len(rel.parts))):
                continue
            if "node_modules" in rel.parts:
                continue
            found.append(rel.as_posix())
    return sorted(found)


MODULES = _modules()


def _stem(module: str) -> str:
    return module.rpartition("/")[2].removesuffix(".py").removeprefix("_")


def _test_file(module: str) -> str:
    folder = module.rpartition("/")[0]
    return f"{MIRROR[folder]}/test_{_stem(module)}.py"


def _has_test_file(module: str) -> bool:
    """Whether a test file of the mirrored folder is about ``module``: a file belongs to the
    module of the longest name it spells, so ``test_statement_log.py`` is statement_log's,
    not statement's."""
    folder = module.rpartition("/")[0]
    stems = {_stem(m) for m in MODULES if m.rpartition("/")[0] == folder}
    for path in (ROOT / MIRROR[folder]).glob("test_*.py"):
        body = path.stem.removeprefix("test_")
        named = [s for s in stems if body == s or body.startswith(s + "_")]
        if named and max(named, key=len) == _stem(module):
            return True
    return False


def test_every_folder_of_the_package_has_a_mirror() -> None:
    unmapped = sorted({m.rpartition("/")[0] for m in MODULES} - MIRROR.keys())
    assert not unmapped, (
        f"no tests folder mirrors {', '.join(unmapped)}: add each to MIRROR in "
        f"tests/test_test_files.py, with its tests folder (tests/<last part>)")


def test_every_module_has_a_test_file() -> None:
    lacking = [m for m in MODULES
               if m not in UNTESTED and m.rpartition("/")[0] in MIRROR
               and not _has_test_file(m)]
    assert not lacking, "modules without a test file; create: " + "; ".join(
        f"{_test_file(m)} (for {m}: move its tests there, or write focused ones "
        f"through the wire)" for m in lacking)


def test_the_untested_list_only_shrinks() -> None:
    tested = sorted(m for m in UNTESTED & set(MODULES) if _has_test_file(m))
    assert not tested, (
        "these modules have their test file now: remove them from UNTESTED in "
        "tests/test_test_files.py: " + ", ".join(tested))


def test_the_untested_list_names_real_modules() -> None:
    gone = sorted(UNTESTED - set(MODULES))
    assert not gone, (
        "UNTESTED in tests/test_test_files.py names modules that no longer exist: "
        "remove them (and give a module that took their place its test file): "
        + ", ".join(gone))


def test_the_rule_finds_every_module() -> None:
    # A floor, so that a walk that silently finds nothing cannot pass.
    assert len(MODULES) > 150, MODULES
