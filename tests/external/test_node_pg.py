"""node-postgres (pg) against the wire server: node/matrix.js prints one JSON object."""

from __future__ import annotations

import json

from .fix_clients import NODE_DIR, node, run

TITLE = "PostgreSQL: The World's Most Advanced Open Source Relational Database"


async def test_node_postgres_client_matrix(dsn):
    ran = await run(node(), NODE_DIR / "matrix.js", dsn, cwd=NODE_DIR)
    assert (ran.returncode, ran.stderr) == (0, ""), ran
    out = json.loads(ran.stdout)

    # discovery
    assert out["tables"] == ["emails", "images", "items", "slow", "tasks", "time", "web"]
    assert out["columns"] == [
        {"column_name": "query", "data_type": "text", "is_nullable": "NO"},
        {"column_name": "title", "data_type": "text", "is_nullable": "NO"},
        {"column_name": "url", "data_type": "text", "is_nullable": "NO"},
        {"column_name": "snippet", "data_type": "text", "is_nullable": "NO"},
        {"column_name": "rank", "data_type": "bigint", "is_nullable": "NO"},
    ]
    assert out["comment"] == "Required key. Search terms (required): words to look for"

    # a pushed-down read; bigint arrives as a string in pg, float8 as a number
    assert out["read"] == [{"rank": "1", "title": TITLE},
                           {"rank": "2", "title": "PostgreSQL Frontend/Backend Protocol"}]
    assert out["param"] == {"rows": [{"id": "7", "name": "item 7", "price": 10.5}],
                            "command": "SELECT", "rowCount": 1,
                            "fields": [["id", 20], ["name", 25], ["price", 701]]}
    assert out["paramWeb"] == [{"title": TITLE}]
    assert out["named"] == ["item 1", "item 2", "item 3"]
    assert out["arrayMode"] == [["4", "item 4"], ["5", "item 5"]]
    # binary results, encoded by Postgres and decoded by pg
    assert out["binary"] == {"row": {"id": "8", "price": 12, "name": "item 8"},
                             "formats": ["binary", "binary", "binary"]}
    assert out["any"] == ["5", "6"]
    assert out["join"] == [
        {"id": "1", "name": "item 1", "title": "Write the quarterly report"},
        {"id": "2", "name": "item 2", "title": "Book the team offsite"},
        {"id": "3", "name": "item 3", "title": "Renew the TLS certificate"},
    ]
    assert out["multi"] == [{"a": 1}, {"b": 2}]

    # a staged write and COMMIT
    assert out["write"] == {
        "begin": "BEGIN", "insert": ["INSERT", 1],
        "staged": [{"resource": "emails", "verb": "insert", "status": "staged"}],
        "commit": "COMMIT", "after": 0,
        "notices": ["staged #1: emails.insert(1 row) will be called at COMMIT",
                    "fired #1: emails.insert(1 row)"],
    }

    # errors (missing key, unknown column, syntax, DDL, a bad parameter), then reuse
    assert out["errors"] == ["22023", "42703", "42601", "42501", "22P02"]
    # a value Postgres takes but the tool does not (a Literal): an error, not an XX000
    assert out["literal"] == [
        "22023", "invalid value for column \"status\": 'true'", "Input should be 'todo' or 'done'",
        "Use a value column \"status\" accepts: Progress (one of: todo, done).",
    ]
    assert out["afterError"] == "item 100"
    assert out["txErrors"] == ["42703", "25P02"]
    assert (out["rollback"], out["afterRollback"]) == ("ROLLBACK", 1)
    assert out["returning"] == {"command": "UPDATE", "rowCount": 1, "rows": [
        {"id": "2", "title": "Book the team offsite", "status": "done"}]}
    # a Parse error in a transaction aborts it: COMMIT answers ROLLBACK, nothing fires
    assert out["parseErrorTx"] == {
        "codes": ["42601", "25P02"], "commit": "ROLLBACK",
        "notices": ["staged #3: emails.insert(1 row) will be called at COMMIT"],
    }
    assert out["pool"] == [f"item {i}" for i in (10, 20, 30, 40, 50, 60)]
