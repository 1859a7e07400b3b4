"""A meta-test: every line of the gate runs for some sample statement, and every
refusal the gate's data names is made by one.

The samples are the security corpus (attacks, client catalog queries, ordinary
statements) and ``gate_samples`` (one accepted statement per statement kind, one
refused statement per refusal). A new branch of the gate with no sample that
reaches it fails here, naming its line: add the statement that reaches it to
``gate_samples``. Pure: parse trees only, no server.
"""

from __future__ import annotations

import ast as pyast
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

import pytest
from pglast import ast, parse_sql

from glove_scratchpad import errors
from glove_scratchpad.server.sql import (
    allowlist,
    gate,
    pg_settings_read,
    setting_rules,
    statement_kinds,
    system_calls,
)

from ..security.corpus import ATTACKS, CLIENT_QUERIES, ORDINARY
from .gate_hints import NEXT_STEP, NEXT_STEPS
from .gate_samples import (
    ACCEPTED,
    EXTRA_ACCEPTED,
    LATER_ACCEPTED,
    REFUSED,
    is_function,
    is_resource,
)

MODULES = (gate, allowlist, setting_rules, statement_kinds, pg_settings_read, system_calls)

# Functions that run only when their module is imported, before any statement is judged.
IMPORT_TIME = {(allowlist, "FunctionRefusal.__init__")}

Run = tuple[Any, Sequence[str | bytes | None] | None, bool]  # node, params, values_later


def _statements(body: list[pyast.stmt]) -> Iterator[pyast.stmt]:
    for stmt in body:
        yield stmt
        if isinstance(stmt, pyast.FunctionDef | pyast.AsyncFunctionDef | pyast.ClassDef):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(stmt, field, []))
        for handler in getattr(stmt, "handlers", []):
            yield from _statements(handler.body)


def _function_lines(module: ModuleType) -> dict[int, str]:
    """Line -> qualified function name, for each statement inside a function of ``module``."""
    lines: dict[int, str] = {}

    def function(node: pyast.FunctionDef, qualname: str) -> None:
        if (module, qualname) in IMPORT_TIME:
            return
        body = node.body
        if (isinstance(body[0], pyast.Expr) and isinstance(body[0].value, pyast.Constant)
                and isinstance(body[0].value.value, str)):
            body = body[1:]  # a docstring runs nothing
        for stmt in _statements(body):
            if isinstance(stmt, pyast.FunctionDef):
                function(stmt, f"{qualname}.{stmt.name}")
            elif not (isinstance(stmt, pyast.AnnAssign) and stmt.value is None):
                lines[stmt.lineno] = qualname  # (a bare annotation runs nothing)

    def scope(body: list[pyast.stmt], prefix: str) -> None:
        for stmt in body:
            if isinstance(stmt, pyast.FunctionDef):
                function(stmt, prefix + stmt.name)
            elif isinstance(stmt, pyast.ClassDef):
                scope(stmt.body, f"{prefix}{stmt.name}.")

    scope(pyast.parse(Path(str(module.__file__)).read_text()).body, "")
    return lines


def _traced(run: Callable[[], None]) -> set[tuple[str, int]]:
    """The (file, line) pairs of the gate's modules that ran during ``run()``."""
    files = {str(m.__file__) for m in MODULES}
    ran: set[tuple[str, int]] = set()

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            ran.add((frame.f_code.co_filename, frame.f_lineno))
        return local

    def calls(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename in files else None

    previous = sys.gettrace()
    sys.settrace(calls)
    try:
        run()
    finally:
        sys.settrace(previous)
    return ran


def _nested_statement() -> Any:
    """A statement node where only an expression belongs. The parser never builds it; the
    walker refuses any statement it meets, so a future grammar cannot slip one through."""
    return ast.SelectStmt(targetList=(ast.ResTarget(val=ast.NotifyStmt(conditionname="c")),))


def _runs() -> list[Run]:
    runs: list[Run] = []
    for sql in [s for s, _ in ATTACKS] + ORDINARY + list(ACCEPTED.values()) + EXTRA_ACCEPTED:
        runs += [(raw.stmt, None, False) for raw in parse_sql(sql)]
    for sql in LATER_ACCEPTED:
        runs += [(raw.stmt, None, True) for raw in parse_sql(sql)]
    for entry in CLIENT_QUERIES:
        params = entry[2] if len(entry) > 2 else None  # type: ignore[misc]
        runs += [(raw.stmt, params, False) for raw in parse_sql(entry[1])]
    for sample in REFUSED.values():
        runs += [(raw.stmt, sample.params, sample.values_later)
                 for raw in parse_sql(sample.sql)]
    runs.append((_nested_statement(), None, False))
    return runs


@pytest.fixture(scope="module")
def judged() -> tuple[set[tuple[str, int]], list[errors.SqlError]]:
    """Judge every sample under a line tracer: the lines that ran, and the refusals."""
    runs = _runs()
    refusals: list[errors.SqlError] = []

    def run() -> None:
        for node, params, later in runs:
            try:
                gate.check(node, is_resource=is_resource, params=params,
                           is_function=is_function, values_later=later)
            except errors.SqlError as exc:
                refusals.append(exc)

    return _traced(run), refusals


def test_every_line_of_the_gate_runs_for_some_sample(
        judged: tuple[set[tuple[str, int]], list[errors.SqlError]]) -> None:
    ran, _ = judged
    missed = []
    for module in MODULES:
        path = str(module.__file__)
        source = Path(path).read_text().splitlines()
        for line, qualname in sorted(_function_lines(module).items()):
            if (path, line) not in ran:
                missed.append(f"{Path(path).name}:{line} in {qualname}: "
                              f"{source[line - 1].strip()}")
    assert missed == [], "no sample reaches these lines; add one to gate_samples:\n" + (
        "\n".join(missed))


def test_every_refusal_in_the_gates_data_is_made_by_a_sample(
        judged: tuple[set[tuple[str, int]], list[errors.SqlError]]) -> None:
    _, refusals = judged
    messages = [exc.message for exc in refusals]
    unmade = [f"function refusal: {r.reason}" for r in allowlist.FUNCTION_REFUSALS
              if not any(r.reason in m for m in messages)]
    unmade += [f"relation refusal: {why}" for _, why in allowlist.RELATION_REFUSALS
               if not any(why in m for m in messages)]
    unmade += [f"set_config of {name}" for name in setting_rules.SESSION_SETTINGS
               if not any(f'set_config() of "{name}"' in m for m in messages)]
    assert unmade == []


def test_every_refusal_has_a_registered_sqlstate_and_a_hint(
        judged: tuple[set[tuple[str, int]], list[errors.SqlError]]) -> None:
    _, refusals = judged
    for exc in refusals:
        assert type(exc) is errors.error_class(exc.sqlstate), exc.message
        assert exc.sqlstate in ("42501", "0A000", "42P01", "42883"), exc.message
        assert exc.message.strip() and (exc.hint or "").strip(), exc.message


def test_the_sample_table_covers_every_statement_kind() -> None:
    assert set(ACCEPTED) == set(gate.STATEMENT_KINDS)
    for kind, sql in ACCEPTED.items():
        (raw,) = parse_sql(sql)
        assert type(raw.stmt) is kind, sql
        gate.check(raw.stmt, is_resource=is_resource, is_function=is_function)
    for sql in EXTRA_ACCEPTED:
        for raw in parse_sql(sql):
            gate.check(raw.stmt, is_resource=is_resource, is_function=is_function)
    for sql in LATER_ACCEPTED:
        for raw in parse_sql(sql):
            gate.check(raw.stmt, is_resource=is_resource, values_later=True)


@pytest.mark.parametrize("category", list(REFUSED))
def test_each_refused_sample_gets_its_sqlstate(category: str) -> None:
    sample = REFUSED[category]
    with pytest.raises(errors.SqlError) as info:
        for raw in parse_sql(sample.sql):
            gate.check(raw.stmt, is_resource=is_resource, params=sample.params,
                       is_function=is_function, values_later=sample.values_later)
    assert info.value.sqlstate == sample.code, info.value.message
    # its HINT names the next step (``gate_hints``), not only that there is one
    assert NEXT_STEP[category] in (info.value.hint or ""), info.value.hint


def test_every_refused_sample_names_its_next_step_once() -> None:
    named = [c for categories in NEXT_STEPS.values() for c in categories]
    assert sorted(named) == sorted(REFUSED)
