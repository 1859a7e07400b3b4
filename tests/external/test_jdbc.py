"""pgjdbc (Debian's libpostgresql-jdbc-java) against the wire server.

The JVM starts once: java/ClientMatrix.java runs every case and prints
``key: value`` lines, and this test asserts on all of them, and on the messages
the server saw (named statements, Execute with a row limit, PortalSuspended).
"""

from __future__ import annotations

from glove_scratchpad.wire import CommandComplete, Execute, Parse, PortalSuspended

from .fix_clients import JAVA_DIR, JDBC_JAR, java, run, wire_log

TABLES = {
    "emails": "An outbox: INSERT queues a message (recorded, never sent).",
    "images": "Image generation: one generated picture per prompt.",
    "items": "A hundred items",
    "slow": "Sleeps, for cancellation tests",
    "tasks": "The user's task list.",
    "time": "The current time; one row.",
    "web": "Web search over a small offline corpus.",
}


def _parse(stdout: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in stdout.splitlines():
        key, sep, value = line.partition(": ")
        assert sep and key not in out, f"unexpected output line {line!r}"
        out[key] = value
    return out


async def test_pgjdbc_client_matrix(server, monkeypatch):
    url = (f"jdbc:postgresql://127.0.0.1:{server.port}/scratchpad"
           "?user=agent&prepareThreshold=1&ApplicationName=client-matrix")
    with wire_log(monkeypatch) as log:
        ran = await run(java(), "-XX:TieredStopAtLevel=1", "-cp", JDBC_JAR,
                        JAVA_DIR / "ClientMatrix.java", url)
    assert (ran.returncode, ran.stderr) == (0, ""), ran
    out = _parse(ran.stdout)
    assert not [k for k in out if k.startswith("failed.")], out

    # discovery: DatabaseMetaData over the real catalogs of the shell tables
    assert out["product"] == "PostgreSQL 18"
    assert out["tables"] == ",".join(TABLES)
    for name, description in TABLES.items():
        volatility = {"items": "immutable", "time": "stable"}.get(name, "volatile")
        remarks = out[f"table.{name}"]
        assert remarks.startswith(description) and remarks.endswith(f"Volatility: {volatility}.")
    assert "Required keys: query (WHERE query = …)." in out["table.web"]
    assert [(k, v) for k, v in out.items() if k.startswith("column.tasks.")] == [
        ("column.tasks.id", "int8 NO Task id, assigned on INSERT"),
        ("column.tasks.title", "text NO What to do"),
        ("column.tasks.due", "date YES Due date"),
        ("column.tasks.status", "text YES Progress (one of: todo, done)"),
    ]
    assert out["pk.items"] == "id"

    # a read with a pushed-down key, parameters, a JOIN, typed values
    assert out["read"] == ("1,https://www.postgresql.org/ | "
                           "2,https://www.postgresql.org/docs/current/protocol.html")
    # Server-prepared with binary results from the first run (prepareThreshold=1): 3.0, not 3.
    assert out["param"] == "item 1,1.5;item 2,3.0;item 3,4.5;item 4,6.0;item 5,7.5"
    assert out["param.web"] == ("PostgreSQL: The World's Most Advanced Open Source "
                                "Relational Database")
    assert out["join"] == ("1,item 1,Write the quarterly report | 2,item 2,Book the team offsite"
                           " | 3,item 3,Renew the TLS certificate")
    assert out["types"] == "1 Date todo"

    # setFetchSize(10) with autocommit off: ten Executes of ten rows over one portal
    assert out["fetch"] == "100 rows, id sum 5050"
    # As Postgres: the tenth fetch fills max_rows and suspends; the eleventh finds the end.
    limited = [i for i, (d, m) in enumerate(log)
               if d == "in" and isinstance(m, Execute) and m.max_rows == 10]
    assert len(limited) == 11
    assert len({log[i][1].portal for i in limited}) == 1 and log[limited[0]][1].portal
    assert sum(isinstance(m, PortalSuspended) for d, m in log if d == "out") == 10
    last = next(m for d, m in log[limited[-1]:] if d == "out" and isinstance(m, CommandComplete))
    assert last.tag == "SELECT 0"
    named = {m.name for d, m in log if d == "in" and isinstance(m, Parse) and m.name}
    assert any(n.startswith("S_") for n in named)

    # a staged write, then COMMIT fires it
    assert out["write.count"] == "1"
    assert out["write.warning"] == "staged #1: emails.insert(1 row) will be called at COMMIT"
    assert out["write.staged"] == "emails,insert,staged"
    assert out["write.commit.warning"] == "fired #1: emails.insert(1 row)"
    assert out["write.after"] == "[]"

    # errors, and the connection afterwards
    assert out["error"] == ('22023 ERROR: resource "web" needs a value for its required key '
                            '"query" (Search terms (required): words to look for)')
    assert out["after.error"] == "100"
    assert out["error.tx"] == "42703"  # raised by Describe, before anything runs
    assert out["error.tx.aborted"] == "25P02"
    assert out["after.rollback"] == "item 99"

    # a batch is one staged write per row; ROLLBACK discards them
    assert out["batch"] == "[1, 1, 1]"
    assert out["batch.staged"] == ("2,emails.insert(1 row) | 3,emails.insert(1 row) | "
                                   "4,emails.insert(1 row)")
    assert out["keys.count"] == "1"
    assert out["keys"] == "keys@example.org,generated keys"

    # COMMIT after an error rolls back: nothing fires
    assert out["commit.after.error.first"] == "42601"
    assert out["commit.after.error"] == "no exception, warnings: none"
    assert out["commit.after.error.staged"] == "0"
    # setReadOnly(true): a READ ONLY transaction refuses writes instead of staging them
    assert out["readonly.read"] == "item 1"
    assert out["readonly.write"] == "25006"
    assert out["done"] == "ok"
