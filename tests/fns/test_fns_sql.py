"""Functions called from SQL through the Python API: once per statement, named
arguments, jsonb results composed with resources, parameters, errors, the gate, EXPLAIN
and the catalogs."""

from __future__ import annotations

from collections import Counter

import pytest

from glove_scratchpad import errors
from glove_scratchpad.server import Database
from glove_scratchpad.server.engine import sidecar


async def test_one_call_per_statement_however_often_it_is_mentioned(
        fn_db: Database, calls: Counter[str]) -> None:
    r = await fn_db.execute("""
        WITH c AS (SELECT fn.echo('{"x": 1}') AS v)
        SELECT fn.echo('{"x": 1}') AS a,
               fn.echo('{"x":1}')->>'x' AS b,
               (SELECT fn.echo('{"x": 1}')) AS c,
               (SELECT count(*) FROM generate_series(1, 5) g
                 WHERE (fn.echo('{"x": 1}')->>'x')::int = 1) AS d,
               (SELECT v FROM c) AS e""")
    assert r.rows == [({"x": 1}, "1", {"x": 1}, 5, {"x": 1})]
    assert calls["echo"] == 1
    assert r.calls("fn.echo") == 1
    # Other argument values are another call; the next statement calls again.
    r = await fn_db.execute("""SELECT fn.echo('{"x": 1}'), fn.echo('{"x": 2}')""")
    assert r.rows == [({"x": 1}, {"x": 2})]
    assert calls["echo"] == 3


async def test_the_result_column_is_named_as_postgres_names_it(fn_db: Database) -> None:
    r = await fn_db.execute("SELECT fn.echo(), fn.echo()::text, fn.echo() ->> 'x'")
    assert r.column_names == ["echo", "echo", "?column?"]
    assert r.rows == [({}, "{}", None)]
    r = await fn_db.execute("SELECT * FROM fn.add(a => 1)")
    assert (r.column_names, r.rows) == (["add"], [({"sum": 1},)])
    r = await fn_db.execute("SELECT t, t.t->'sum' FROM fn.add(a => 1) AS t")
    assert (r.column_names, r.rows) == (["t", "?column?"], [({"sum": 1}, 1)])
    r = await fn_db.execute("SELECT s FROM fn.add(a => 4) AS t(s)")
    assert r.rows == [({"sum": 4},)]


async def test_named_arguments(fn_db: Database, calls: Counter[str]) -> None:
    r = await fn_db.execute("SELECT fn.add(a => 1, b => 2), fn.add(b => '5', a => 1)")
    assert r.rows == [({"sum": 3}, {"sum": 6})]
    # One JSON object, with named arguments laid over it; a NULL one is not given.
    r = await fn_db.execute("""SELECT fn.add('{"a": 1, "b": 5}', b => 2),
                                      fn.add('{"a": 1, "b": 5}', b => NULL)""")
    assert r.rows == [({"sum": 3}, {"sum": 6})]
    r = await fn_db.execute("SELECT fn.greet(name => 'ada', shout => true)")
    assert r.rows == [("HELLO ADA",)]
    r = await fn_db.execute("SELECT fn.scale(value => 1.5, factor => 4)")
    assert r.rows == [(6.0,)]
    assert calls == Counter({"add": 4, "greet": 1, "scale": 1})


async def test_jsonb_results_compose_with_operators_and_resources(
        fn_db: Database, calls: Counter[str]) -> None:
    # A function's value as a resource's argument (pushed down), and in a JOIN.
    r = await fn_db.execute("""
        SELECT l.name, fn.pick()->'ids' AS ids
          FROM lookup l
         WHERE l.id = (fn.pick()->>'id')::bigint""")
    assert r.rows == [("Grace", [1, 3])]
    assert (calls["pick"], calls["lookup"]) == (1, 1)
    r = await fn_db.execute("""
        SELECT p.name, e.value::int AS id
          FROM people p
          JOIN jsonb_array_elements_text(fn.pick('{"id": 3}')->'ids') AS e(value)
            ON p.id = e.value::bigint
         ORDER BY p.id""")
    assert r.rows == [("Ada", 1), ("Edsger", 3)]
    r = await fn_db.execute("""
        SELECT p.name, f.s->>'sum' AS total
          FROM fn.add(a => 2, b => 1) AS f(s)
          JOIN people p ON p.id = (f.s->>'sum')::bigint""")
    assert r.rows == [("Edsger", "3")]
    # A resource read inside a function's arguments is resolved first, once.
    calls.clear()
    r = await fn_db.execute("""
        SELECT fn.echo(jsonb_build_object(
                   'names', (SELECT jsonb_agg(name ORDER BY id) FROM people WHERE id IN (1, 2))
               ))->'names' AS names,
               (SELECT count(*) FROM people WHERE id IN (1, 2)) AS n""")
    assert r.rows == [(["Ada", "Grace"], 2)]
    # id is neither a key nor a filter of people: one call serves both of its references.
    assert (calls["echo"], calls["people"]) == (1, 1)


async def test_a_parameter_as_an_argument(fn_db: Database, calls: Counter[str]) -> None:
    r = await fn_db.execute("SELECT fn.echo($1)->'x'", ['{"x": [1, 2]}'])
    assert r.rows == [([1, 2],)]
    r = await fn_db.execute("SELECT fn.add(a => $1, b => $2), $2::int + 1", [40, 2])
    assert r.rows == [({"sum": 42}, 3)]
    r = await fn_db.execute("SELECT fn.add($2, b => $1)", [1, {"a": 9}])
    assert r.rows == [({"sum": 10},)]
    assert calls == Counter({"echo": 1, "add": 2})


async def test_nested_calls_and_null_results(fn_db: Database, calls: Counter[str]) -> None:
    r = await fn_db.execute(
        "SELECT fn.echo(jsonb_build_object('total', fn.add(a => 2, b => 3)->'sum'))")
    assert r.rows == [({"total": 5},)]
    r = await fn_db.execute("SELECT fn.nothing() IS NULL, fn.nothing('{}') IS NULL")
    assert r.rows == [(True, True)]
    assert calls == Counter({"echo": 1, "add": 1, "nothing": 1})


async def test_a_failing_function_is_a_sql_error_and_the_session_goes_on(
        fn_db: Database, calls: Counter[str]) -> None:
    session = fn_db.session()
    with pytest.raises(errors.ExternalRoutineError) as caught:
        await session.execute("SELECT 1 AS one, fn.fail('{}')")
    exc = caught.value
    assert exc.sqlstate == "38000"
    assert exc.message == "function fn.fail failed: RuntimeError: the service said no"
    assert exc.hint and "\\df+ fn.fail" in exc.hint
    r = await session.execute("SELECT fn.add(a => 1)")
    assert r.rows == [({"sum": 1},)]
    # Inside a transaction the error aborts it, as any error does.
    await session.execute("BEGIN")
    with pytest.raises(errors.ExternalRoutineError):
        await session.execute("SELECT fn.fail()")
    with pytest.raises(errors.InFailedSqlTransaction):
        await session.execute("SELECT 1")
    await session.execute("ROLLBACK")
    r = await session.execute("""SELECT fn.echo('{"ok": true}')""")
    assert r.rows == [({"ok": True},)]
    with pytest.raises(errors.ExternalRoutineError) as caught:
        await session.execute("SELECT fn.not_json()")
    assert caught.value.message == "function fn.not_json returned a value that is not JSON: object"
    assert calls == Counter({"fail": 2, "add": 1, "echo": 1, "not_json": 1})


async def test_invalid_arguments_are_refused_before_any_call(
        fn_db: Database, calls: Counter[str]) -> None:
    with pytest.raises(errors.InvalidParameterValue) as caught:
        await fn_db.execute("SELECT fn.echo(), fn.add(b => 1)")
    assert caught.value.message.startswith('invalid argument "a" for function fn.add: ')
    assert caught.value.hint == (
        "It takes fn.add(args jsonb, a bigint, b bigint). \\df+ fn.add describes its arguments.")
    with pytest.raises(errors.InvalidParameterValue) as caught:
        await fn_db.execute("""SELECT fn.greet('{"name": "x", "loud": 1}')""")
    assert "loud" in caught.value.message
    with pytest.raises(errors.InvalidParameterValue) as caught:
        await fn_db.execute("SELECT fn.greet(shout => true)")
    assert caught.value.message == (
        'invalid argument "name" for function fn.greet: it is required and was not given')
    with pytest.raises(errors.InvalidParameterValue) as caught:
        await fn_db.execute("SELECT fn.echo('[1, 2]')")
    assert caught.value.message == "fn.echo takes its arguments as a JSON object, not an array"
    # Postgres matches named arguments and types: its own error, with our hint.
    with pytest.raises(errors.UndefinedFunction) as caught:
        await fn_db.execute("SELECT fn.add(c => 1)")
    assert caught.value.message == "function fn.add(c => integer) does not exist"
    assert caught.value.hint and caught.value.hint.startswith(
        "It takes fn.add(args jsonb, a bigint, b bigint).")
    assert caught.value.position == 8
    with pytest.raises(errors.SqlError) as caught:
        await fn_db.execute("SELECT 1, fn.echo('not json')")
    assert caught.value.sqlstate == "22P02"
    assert caught.value.position == 19  # Postgres's own: at the literal it cannot read
    assert sum(calls.values()) == 0


async def test_the_gate_refuses_unknown_functions(fn_db: Database, calls: Counter[str]) -> None:
    with pytest.raises(errors.UndefinedFunction) as caught:
        await fn_db.execute("SELECT fn.nope('{}')")
    assert caught.value.message == "function fn.nope() does not exist"
    assert caught.value.hint == (
        "\\df fn.* lists the functions (\\df+ with their arguments), as does SELECT "
        "routine_name FROM information_schema.routines WHERE routine_schema = 'fn'.")
    assert caught.value.position == 8
    with pytest.raises(errors.UndefinedFunction) as caught:
        await fn_db.execute("SELECT echo('{}')")
    assert caught.value.hint == "Functions are in schema fn: call fn.echo(…)."
    with pytest.raises(errors.UndefinedFunction):
        await fn_db.execute("SELECT other.echo('{}')")
    with pytest.raises(errors.InsufficientPrivilege):  # the evaluation switch is the server's
        await fn_db.execute("SET glove_scratchpad.evaluating = on")
    assert sum(calls.values()) == 0


async def test_arguments_that_read_the_rows_are_refused_before_any_call(
        fn_db: Database, calls: Counter[str]) -> None:
    cases = {
        "SELECT fn.echo(id => p.id) FROM people p WHERE id = 1": "p.id",
        "SELECT * FROM people p, LATERAL fn.echo(n => name) AS e WHERE id = 1": "name",
        "SELECT (SELECT fn.add(a => g)) FROM generate_series(1, 2) g": "g",
        "SELECT fn.echo(n => (SELECT max(x.id) FROM people x WHERE x.id = p.id)) "
        "FROM people p WHERE id = 1": "p.id",
    }
    for sql, column in cases.items():
        with pytest.raises(errors.FeatureNotSupported) as caught:
            await fn_db.execute(sql)
        assert column in caught.value.message, sql
        assert caught.value.hint and "once per statement" in caught.value.hint
    with pytest.raises(errors.FeatureNotSupported) as caught:
        await fn_db.execute("WITH c AS (SELECT 1 AS v) SELECT fn.echo(n => (SELECT v FROM c))")
    assert 'read "c", a CTE of the statement' in caught.value.message
    with pytest.raises(errors.FeatureNotSupported):
        await fn_db.execute("SELECT fn.echo(n => count(*)) FROM people WHERE id = 1")
    with pytest.raises(errors.FeatureNotSupported):
        await fn_db.execute("SELECT * FROM fn.echo() WITH ORDINALITY")
    assert sum(calls.values()) == 0  # neither a function nor the resource was called


async def test_explain_lists_the_calls_and_calls_nothing(
        fn_db: Database, calls: Counter[str]) -> None:
    r = await fn_db.execute("""EXPLAIN SELECT fn.add(a => 1, b => $1), fn.echo('{"x": 1}')
                               FROM people WHERE id = 2""")
    lines = [row[0] for row in r.rows]
    assert "Function fn.add: arguments: a => 1, b => $1; calls: once, before the statement " \
           "runs" in lines
    assert """Function fn.echo: arguments: '{"x": 1}'; calls: once, before the statement """ \
           "runs" in lines
    r = await fn_db.explain("SELECT fn.echo(jsonb_build_object('v', fn.add(a => 1)))")
    lines = [row[0] for row in r.rows]
    assert "Function fn.add: arguments: a => 1; calls: once, first: it is an argument of " \
           "another call" in lines
    assert sum(calls.values()) == 0


async def test_functions_are_listed_in_the_catalogs(
        fn_db: Database, calls: Counter[str]) -> None:
    r = await fn_db.execute("""
        SELECT routine_name, data_type FROM information_schema.routines
         WHERE routine_schema = 'fn' ORDER BY routine_name""")
    assert r.rows == [(n, "jsonb") for n in sorted(
        ["add", "echo", "fail", "greet", "not_json", "nothing", "pick", "scale"])]
    r = await fn_db.execute("""
        SELECT p.parameter_name, p.data_type FROM information_schema.parameters p
          JOIN information_schema.routines r USING (specific_schema, specific_name)
         WHERE r.routine_schema = 'fn' AND r.routine_name = 'greet'
         ORDER BY ordinal_position""")
    assert r.rows == [("args", "jsonb"), ("name", "text"), ("shout", "boolean")]
    r = await fn_db.execute("""
        SELECT obj_description(p.oid, 'pg_proc') FROM pg_proc p
          JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname = 'fn' AND p.proname = 'greet'""")
    assert r.rows == [(
        "Greets someone. Arguments, named (x => …) or as one jsonb object (args): name text "
        "(required): Whom to greet; shout boolean. Returns jsonb.",)]
    assert sum(calls.values()) == 0


async def test_a_shell_run_outside_the_server_raises(fn_db: Database) -> None:
    # What a call that slipped past the rewrite would do on the sidecar.
    with pytest.raises(errors.SqlError) as caught:
        await sidecar.unguarded(fn_db.default_session.statement(), "SELECT fn.echo('{}')")
    assert caught.value.message == "function fn.echo() was not evaluated by the server"


async def test_the_audit_records_each_call(fn_db: Database, calls: Counter[str]) -> None:
    session = fn_db.session()
    await session.execute("SELECT fn.add(a => 7), fn.add(a => 7)")
    r = await session.execute("SELECT resource, verb, arguments, status FROM scratchpad.calls "
                              f"WHERE session = {session.id}")
    assert r.rows == [("fn.add", "call", {"a": 7}, "ok")]


async def test_writes_take_function_values(fn_db: Database, calls: Counter[str]) -> None:
    from .conftest import NOTES

    NOTES.clear()
    session = fn_db.session()
    r = await session.execute("""
        INSERT INTO notes (body, data)
        VALUES (fn.greet(name => 'ada')#>>'{}', fn.add(a => 1)),
               (fn.greet(name => 'ada')#>>'{}', NULL)
        RETURNING body""")
    assert r.rows == [("hello ada",), ("hello ada",)]
    assert NOTES == [{"body": "hello ada", "data": {"sum": 1}},
                     {"body": "hello ada", "data": None}]
    # Inside a transaction the write is staged; the function is called now, once.
    await session.execute("BEGIN")
    await session.execute("INSERT INTO notes (body) SELECT fn.greet(name => 'bo') #>> '{}' "
                          "FROM generate_series(1, 3)")
    await session.execute("ROLLBACK")
    assert calls == Counter({"greet": 2, "add": 1, "notes": 1})
    with pytest.raises(errors.FeatureNotSupported) as caught:
        await session.execute("INSERT INTO notes (body) VALUES ('x') RETURNING fn.echo()")
    assert caught.value.message == "fn.* functions cannot be called in RETURNING"
