"""An agent that starts from the compact catalog, through ``execute_sql`` alone.

The agent here is a script, reading only what a model would read: the preamble,
then the text of each tool reply. It finds its table in the preamble (or its group,
when the catalog is grouped), reads the table's columns and keys with the one
statement the preamble documents, and then calls the table correctly, with no
other statement and no knowledge of the table from the test.
"""

from __future__ import annotations

import re
from typing import Any

from glove_scratchpad.resources import Bindings, define_resource
from glove_scratchpad.resources.demo import demo_resources
from glove_scratchpad.server.agent import call_tool, catalog_form, preamble

VALUES = {"text": "'Paris'", "bigint": "3"}  # what the agent wants, by the key's type


def forecast_table(name: str, calls: list[dict[str, Any]]):
    def select(b: Bindings) -> list[dict[str, Any]]:
        calls.append(b.as_dict())
        return [{"city": b.one("city"), "days": b.one("days"), "day": d,
                 "summary": f"sunny {d}", "high_c": 20.5 + d} for d in range(1, b.one("days") + 1)]

    return define_resource(
        name,
        columns=[{"name": "city", "pg_type": "text", "description": "City name, e.g. Paris"},
                 {"name": "days", "pg_type": "bigint", "description": "Days ahead, 1 to 7"},
                 {"name": "day", "pg_type": "bigint", "description": "1 for tomorrow"},
                 {"name": "summary", "pg_type": "text", "description": "In a few words"},
                 {"name": "high_c", "pg_type": "double precision",
                  "description": "Highest temperature, °C"}],
        keys=["city", "days"], volatility="stable", select=select,
        description="Daily weather forecast for a city. Backed by a paid API.")


def filler(prefix: str, n: int) -> list:
    return [define_resource(f"{prefix}_{i:02}", columns=[("id", "text"), ("body", "text")],
                            keys=["id"], volatility="stable", select=lambda b: [],
                            description=f"Reads one {prefix} record by its id, with every "
                                        f"field the {prefix} service keeps about it ({i}).")
            for i in range(n)]


class Agent:
    """Calls ``execute_sql`` through the tool handler, as a model's tool call arrives."""

    def __init__(self, db: Any) -> None:
        self.session = db.session()
        self.statements: list[str] = []

    async def sql(self, statement: str) -> list[dict[str, str]]:
        self.statements.append(statement)
        reply = await call_tool(self.session, "execute_sql", {"sql": statement})
        assert not reply.is_error, reply.text
        lines = reply.text.split("\n")
        assert lines[0].startswith("SELECT "), reply.text
        header = lines[1].split("\t")
        return [dict(zip(header, ln.split("\t"), strict=True)) for ln in lines[2:]]

    async def discover_and_call(self, catalog: str, table: str) -> list[dict[str, str]]:
        """Read the table's columns and keys in one statement, then call it."""
        template = re.search(r"`(SELECT \* FROM scratchpad\.resources WHERE name = '\w+')`",
                             catalog)
        assert template, catalog
        [row] = await self.sql(re.sub(r"'\w+'$", f"'{table}'", template[1]))
        columns = dict(re.match(r"(\w+) ([^,:]+)", ln).groups()  # type: ignore[union-attr]
                       for ln in row["columns"].split("\\n"))
        keys = row["keys"].split(", ")
        where = " AND ".join(f"{k} = {VALUES[columns[k]]}" for k in keys)
        wanted = [c for c in columns if c not in keys]
        return await self.sql(f"SELECT {', '.join(wanted)} FROM {table} WHERE {where} "
                              "ORDER BY 1")


async def test_from_the_compact_preamble_one_statement_finds_columns_and_keys(make_db):
    calls: list[dict[str, Any]] = []
    db = await make_db([*demo_resources(), forecast_table("forecast", calls),
                        *filler("ledger", 30)])
    catalog = preamble(db)  # what the agent is given: chosen by size
    assert catalog_form(db) == "compact" and catalog == preamble(db, detail="compact")
    line = next(ln for ln in catalog.splitlines() if ln.startswith("- forecast "))
    assert line == "- forecast (select; keys: city, days): Daily weather forecast for a city."
    assert "high_c" not in catalog and "summary" not in catalog  # no columns in the catalog

    agent = Agent(db)
    rows = await agent.discover_and_call(catalog, "forecast")
    assert agent.statements == [
        "SELECT * FROM scratchpad.resources WHERE name = 'forecast'",
        "SELECT day, summary, high_c FROM forecast WHERE city = 'Paris' AND days = 3 "
        "ORDER BY 1",
    ]
    assert rows == [{"day": str(d), "summary": f"sunny {d}", "high_c": str(20.5 + d)}
                    for d in (1, 2, 3)]
    assert calls == [{"city": "Paris", "days": 3}]  # one call, with the right arguments


async def test_from_a_grouped_catalog_one_more_statement_lists_the_group(make_db):
    calls: list[dict[str, Any]] = []
    db = await make_db([forecast_table("weather_forecast", calls), *filler("weather", 4),
                        *filler("ledger", 40), *filler("crm", 30)])
    catalog = preamble(db)
    assert catalog_form(db) == "compact, grouped"
    assert "- weather: 5 tables (weather_00, weather_01, weather_03, …)" in catalog
    assert "weather_forecast" not in catalog

    agent = Agent(db)
    group_sql = re.search(r"`(SELECT [^`]* WHERE namespace = '\w+' ORDER BY name)`", catalog)
    assert group_sql, catalog
    listed = await agent.sql(re.sub(r"namespace = '\w+'", "namespace = 'weather'", group_sql[1]))
    assert [r["name"] for r in listed] == ["weather_00", "weather_01", "weather_02",
                                          "weather_03", "weather_forecast"]
    found = next(r for r in listed if "forecast" in r["description"])
    assert found["keys"] == "city, days"
    rows = await agent.discover_and_call(catalog, found["name"])
    assert len(agent.statements) == 3
    assert [r["day"] for r in rows] == ["1", "2", "3"]
    assert calls == [{"city": "Paris", "days": 3}]
