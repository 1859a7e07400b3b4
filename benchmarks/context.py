"""9. Context: what an agent's context holds, the tools folded in or one tool and the catalog.

Counted, not timed. For each set of tools, in characters (``len`` of the Python
``str``: Unicode code points):

- **folded**: the tools' definitions as a model receives them when they are folded
  in: ``json.dumps`` (default separators) of the list of the ``tools/list`` ``Tool``
  objects, each dumped by alias without null fields
  (``model_dump(by_alias=True, exclude_none=True, mode="json")``);
- **full** and **compact**: ``preamble(db, detail=…)`` (``server/agent.py``), plus
  the two tools our MCP mode lists (``execute_sql``, ``explain_sql``), dumped the
  same way: the same serialization on both sides.

The sets: the demo set (not an MCP server: its folded form is each resource as the
MCP tools one would write for it, one per verb, see ``demo_tools``); each real MCP
server (mcp-server-time, mcp-server-git, @modelcontextprotocol/server-memory and
server-everything, started as ``tests/mcp/conftest.py`` starts them); the four
together; and synthetic sets of 40 to 320 generated tools in 2 to 16 namespaces
(``synthetic_tools``), made tables by the MCP bridge's own ``tool_resource``.

A benchmark checks what it measures. Each set is served by a ``Database`` on the
benchmark's sidecar and by our MCP mode, read through the ``mcp`` SDK's client:

- every tool it is compared against is served: a verb of a table (an MCP tool is
  a table of one verb);
- the MCP mode's catalog and instructions are ``preamble(db)``, the form chosen by
  size (``auto``), and the two tools are ``execute_sql`` and ``explain_sql``;
- the compact form names every table in a line of its own and no column, or, when
  grouped, every group with its true count;
- through ``execute_sql`` alone, the statement the compact form documents reads,
  for each table, a row naming every column, the keys and an example, uncut; and a
  group's documented statement lists exactly that group's tables.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.types import Tool

from glove_scratchpad.resources import Resource
from glove_scratchpad.resources.demo import demo_resources
from glove_scratchpad.resources.mcp import McpBridge, McpConnection, tool_resource
from glove_scratchpad.server import Database
from glove_scratchpad.server.agent import (
    DISCOVERY_SQL,
    FULL_LIMIT,
    GROUP_SQL,
    LIST_LIMIT,
    catalog_form,
    execute_sql,
    preamble,
)
from glove_scratchpad.server.mcp_server import CATALOG_URI, create_server

from . import checks
from .env import REPO, Env
from .results import TIMES, Section, times

NAME = "context"
TARGET_ALL = 3.2  # the issue's: all four real MCP servers, compact vs folded
TARGET_SYNTHETIC = 10.0  # the issue's: 300+ tools, compact vs folded
NODE_DIR = REPO / "tests" / "mcp" / "node" / "node_modules" / "@modelcontextprotocol"
REAL = ("time", "git", "memory", "everything")
PACKAGES = {
    "time": "mcp-server-time",
    "git": "mcp-server-git",
    "memory": "@modelcontextprotocol/server-memory",
    "everything": "@modelcontextprotocol/server-everything",
}


def tool_json(tool: Tool) -> dict[str, Any]:
    """One tool as ``tools/list`` carries it."""
    return tool.model_dump(by_alias=True, exclude_none=True, mode="json")


def chars(tools: list[dict[str, Any]]) -> int:
    """The characters of tool definitions folded into a model's context."""
    return len(json.dumps(tools))


# -- the sets ----------------------------------------------------------------------------


@dataclass
class ToolSet:
    label: str
    tools: list[dict[str, Any]]  # folded: tools/list objects
    resources: list[Resource]  # served: the tables those tools are
    groups: dict[str, set[str]] | None = None  # namespace -> its tables, when known


def _node(package: str, *args: str) -> dict[str, Any]:
    script = NODE_DIR / package / "dist" / "index.js"
    if not script.is_file():
        raise RuntimeError(f"@modelcontextprotocol/{package} is not installed: make node-deps")
    return {"command": "node", "args": [str(script), *args]}


def real_configs(workdir: Path) -> list[dict[str, Any]]:
    """The four real MCP servers, configured as tests/mcp/conftest.py configures them."""
    return [
        {
            "namespace": "time",
            "command": sys.executable,
            "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
        },
        {"namespace": "git", "command": sys.executable, "args": ["-m", "mcp_server_git"]},
        {
            "namespace": "memory",
            **_node("server-memory"),
            "env": {"MEMORY_FILE_PATH": str(workdir / "memory.jsonl")},
        },
        {"namespace": "everything", **_node("server-everything", "stdio")},
    ]


def _schema_of(resource: Resource, names: list[str] | None = None) -> dict[str, Any]:
    """A JSON Schema object of the resource's columns (all, or ``names``)."""
    schema = (
        resource.schema.model_json_schema()
        if resource.schema is not None
        else {
            "properties": {
                c.name: {"type": "string", "description": c.description} for c in resource.columns
            }
        }
    )
    props = schema.get("properties", {})
    chosen = {n: props[n] for n in (names if names is not None else list(props))}
    return {"type": "object", "properties": chosen}


def demo_tools(resources: list[Resource]) -> list[dict[str, Any]]:
    """The demo set as MCP tools, one per verb, as one would write them.

    A read takes the required keys (required) and declared filters, and declares its
    rows as its output schema; an insert takes the rows; an update the primary key
    and the changes; a delete the primary key.
    """
    out = []
    for r in resources:
        row = _schema_of(r)
        pk = list(r.primary_key)
        if "select" in r.verbs:
            args = _schema_of(r, [*r.keys, *getattr(r, "filters", ())])
            out.append(
                {
                    "name": f"select_{r.name}",
                    "description": r.description,
                    "inputSchema": {**args, "required": list(r.keys)},
                    "outputSchema": {
                        "type": "object",
                        "required": ["rows"],
                        "properties": {"rows": {"type": "array", "items": row}},
                    },
                    "annotations": {"readOnlyHint": True},
                }
            )
        if "insert" in r.verbs:
            out.append(
                {
                    "name": f"insert_{r.name}",
                    "description": r.description,
                    "inputSchema": {
                        "type": "object",
                        "required": ["rows"],
                        "properties": {"rows": {"type": "array", "items": row}},
                    },
                }
            )
        if "update" in r.verbs:
            out.append(
                {
                    "name": f"update_{r.name}",
                    "description": r.description,
                    "inputSchema": {
                        "type": "object",
                        "required": [*pk, "changes"],
                        "properties": {**_schema_of(r, pk)["properties"], "changes": row},
                    },
                }
            )
        if "delete" in r.verbs:
            out.append(
                {
                    "name": f"delete_{r.name}",
                    "description": r.description,
                    "inputSchema": {**_schema_of(r, pk), "required": pk},
                    "annotations": {"destructiveHint": True},
                }
            )
    return [tool_json(Tool.model_validate(t)) for t in out]


SERVICES = [
    ("crm", "the CRM", ("contact", "company", "deal", "note")),
    ("billing", "billing", ("invoice", "payment", "refund", "subscription")),
    ("calendar", "the calendar", ("event", "calendar", "attendee", "reminder")),
    ("docs", "the document store", ("document", "folder", "comment", "revision")),
    ("helpdesk", "the help desk", ("ticket", "queue", "tag", "macro")),
    ("chat", "team chat", ("channel", "message", "member", "thread")),
    ("mail", "the mailbox", ("message", "draft", "label", "mail_filter")),
    ("repo", "the code host", ("issue", "pull_request", "branch", "release")),
    ("ci", "continuous integration", ("pipeline", "job", "artifact", "runner")),
    ("cloud", "the cloud account", ("instance", "volume", "snapshot", "bucket")),
    ("hr", "the HR system", ("employee", "team", "leave_request", "review")),
    ("shop", "the online shop", ("product", "sale", "customer", "coupon")),
    ("warehouse", "the warehouse", ("item", "shipment", "location", "stock_count")),
    ("analytics", "analytics", ("report", "dashboard", "metric", "segment")),
    ("sheets", "spreadsheets", ("spreadsheet", "sheet", "cell_range", "chart")),
    ("maps", "maps", ("place", "route", "area", "geofence")),
]
_STATUS = ["active", "archived", "draft"]


def _record(noun: str) -> dict[str, Any]:
    text, when = {"type": "string"}, {"type": "string", "format": "date-time"}
    return {
        "type": "object",
        "required": ["id", "name", "status"],
        "properties": {
            "id": {**text, "description": f"The {noun}'s id"},
            "name": {**text, "description": f"The {noun}'s name"},
            "status": {**text, "enum": _STATUS},
            "owner_id": {**text, "description": "Id of the user who owns it"},
            "created_at": when,
            "updated_at": when,
            "url": {**text, "description": "Link to it in the web app"},
        },
    }


def synthetic_tools(namespace: str, service: str, nouns: tuple[str, ...]) -> list[dict[str, Any]]:
    """Five tools per noun (list, get, create, update, delete), shaped like real ones."""
    out: list[dict[str, Any]] = []
    for noun in nouns:
        plural, key = f"{noun}s", f"{noun}_id"
        ident = {"type": "string", "description": f"The {noun}'s id, as list_{plural} gives it"}
        fields = {
            "name": {"type": "string", "description": f"The {noun}'s name"},
            "description": {"type": "string", "description": "Free text, markdown"},
            "owner_id": {"type": "string", "description": "Id of the user who owns it"},
            "tags": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Labels to attach",
            },
        }
        out += [
            {
                "name": f"list_{plural}",
                "annotations": {"readOnlyHint": True},
                "description": f"List the {plural} in {service}, newest first. Filter by status "
                "and owner; results come in pages.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "status": {"type": "string", "enum": _STATUS, "description": "Only these"},
                        "owner_id": fields["owner_id"],
                        "page_size": {
                            "type": "integer",
                            "default": 25,
                            "maximum": 100,
                            "description": "Results per page",
                        },
                        "cursor": {"type": "string", "description": "The previous page's cursor"},
                    },
                },
                "outputSchema": {
                    "type": "object",
                    "required": [plural],
                    "properties": {plural: {"type": "array", "items": _record(noun)}},
                },
            },
            {
                "name": f"get_{noun}",
                "annotations": {"readOnlyHint": True},
                "description": f"Get one {noun} of {service} by its id, with all its fields.",
                "inputSchema": {"type": "object", "required": [key], "properties": {key: ident}},
                "outputSchema": _record(noun),
            },
            {
                "name": f"create_{noun}",
                "description": f"Create a {noun} in {service}. Returns the new {noun}'s id.",
                "inputSchema": {"type": "object", "required": ["name"], "properties": fields},
            },
            {
                "name": f"update_{noun}",
                "description": f"Change the fields of a {noun} in {service}; fields left out "
                "keep their value.",
                "inputSchema": {
                    "type": "object",
                    "required": [key],
                    "properties": {key: ident, **fields},
                },
            },
            {
                "name": f"delete_{noun}",
                "annotations": {"destructiveHint": True},
                "description": f"Delete a {noun} from {service}. This cannot be undone.",
                "inputSchema": {"type": "object", "required": [key], "properties": {key: ident}},
            },
        ]
    return [tool_json(Tool.model_validate(t)) for t in out]


def synthetic_set(namespaces: int) -> ToolSet:
    """The first ``namespaces`` services' tools, and the tables the MCP bridge makes of
    them (its ``tool_resource``; the connection is never opened: nothing is called)."""
    tools: list[dict[str, Any]] = []
    resources: list[Resource] = []
    groups: dict[str, set[str]] = {}
    for namespace, service, nouns in SERVICES[:namespaces]:
        listed = synthetic_tools(namespace, service, nouns)
        connection = McpConnection({"namespace": namespace, "command": sys.executable})
        taken: set[str] = set()
        made = [tool_resource(connection, Tool.model_validate(t), taken=taken) for t in listed]
        groups[namespace] = {r.name for r in made}
        resources += made
        tools += listed
    return ToolSet(f"synthetic, {namespaces} namespaces", tools, resources, groups)


# -- measuring and checking ----------------------------------------------------------------


@dataclass
class Measured:
    label: str
    tools: int
    tables: int
    folded: int
    full: int
    compact: int
    form: str

    @property
    def per_tool(self) -> int:
        return round(self.folded / self.tools)


_DISCOVERY = re.compile(
    r"`(" + re.escape(DISCOVERY_SQL).replace(r"\{table\}", "[a-z0-9_]+") + r")`"
)
_GROUP_STATEMENT = re.compile(
    r"`(" + re.escape(GROUP_SQL).replace(r"\{group\}", "[a-z0-9_]+") + r")`"
)
_GROUP_LINE = re.compile(r"^- ([a-z0-9_]+): (\d+) tables? \(", re.M)


def _rows(reply: str) -> list[dict[str, str]]:
    """An ``execute_sql`` reply's rows, by column name (its tag, header, rows)."""
    lines = reply.split("\n")
    if not lines[0].startswith("SELECT ") or len(lines) < 2:
        raise checks.WrongAnswer(f"not a result: {reply[:300]!r}")
    header = lines[1].split("\t")
    return [
        dict(zip(header, line.split("\t"), strict=True))
        for line in lines[2:]
        if line and not line.startswith(("(no rows)", "[", "NOTICE", "WARNING"))
    ]


def _check_compact(ts: ToolSet, compact: str) -> None:
    names = sorted(r.name for r in ts.resources)
    listed = re.findall(r"^- ([a-z0-9_]+) \(", compact, re.M)
    if len(names) <= LIST_LIMIT:
        checks.expect(f"{ts.label}: the tables the compact form lists", sorted(listed), names)
        for r in ts.resources:
            for column in r.columns:
                checks.expect(
                    f"{ts.label}: a column line in the compact form ({r.name})",
                    f"\n- {column.name} {column.pg_type}" in compact,
                    False,
                )
        return
    groups = {g: int(n) for g, n in _GROUP_LINE.findall(compact)}
    want = {g: len(t) for g, t in (ts.groups or {}).items()}
    checks.expect(f"{ts.label}: the compact form's groups and counts", groups, want)
    checks.expect(f"{ts.label}: tables listed in a grouped form", listed, [])


async def _check_discovery(ts: ToolSet, db: Database, compact: str) -> None:
    """Through execute_sql: one documented statement per table reads all it takes."""
    found = _DISCOVERY.search(compact)
    if found is None:
        raise checks.WrongAnswer(f"{ts.label}: the compact form documents no discovery statement")
    session = db.session()
    for r in ts.resources:
        sql = re.sub(r"name = '[a-z0-9_]+'", f"name = '{r.name}'", found[1])
        reply = await execute_sql(session, sql)
        rows = _rows(reply)
        checks.expect(f"{ts.label}: rows of {sql}", len(rows), 1)
        row = rows[0]
        lines = row["columns"].split("\\n")
        checks.expect(
            f"{ts.label}: columns {r.name} shows",
            [ln.split(" ")[0] for ln in lines],
            list(r.column_names),
        )
        checks.expect(f"{ts.label}: keys {r.name} shows", row["keys"], ", ".join(r.keys))
        checks.expect(
            f"{ts.label}: {r.name}'s example names it", f" {r.name}" in row["example"], True
        )
        checks.expect(f"{ts.label}: {r.name}'s discovery was cut", "were cut" in reply, False)
    if ts.groups is None or len(ts.resources) <= LIST_LIMIT:
        return
    found = _GROUP_STATEMENT.search(compact)
    if found is None:
        raise checks.WrongAnswer(f"{ts.label}: the grouped form documents no group statement")
    for group, tables in ts.groups.items():
        sql = re.sub(r"namespace = '[a-z0-9_]+'", f"namespace = '{group}'", found[1])
        listed = [row["name"] for row in _rows(await execute_sql(session, sql))]
        checks.expect(f"{ts.label}: {sql}", listed, sorted(tables))


async def measure(ts: ToolSet, env: Env, database: str) -> Measured:
    """The figures of one set, each checked (``checks.WrongAnswer`` when one is wrong).

    ``database``: the sidecar database that serves the set while it is checked.
    """
    # Every tool it is compared against is served: a table's verb (an MCP tool is one).
    checks.expect(
        f"{ts.label}: tools served as verbs of tables",
        sum(len(r.verbs) for r in ts.resources),
        len(ts.tools),
    )
    db = await Database.create(ts.resources, writes=True, sidecar=env.sidecar, database=database)
    try:
        async with Client(create_server(db)) as client:
            ours = [tool_json(t) for t in (await client.list_tools()).tools]
            served = (await client.read_resource(CATALOG_URI)).contents[0].text  # type: ignore[union-attr]
            instructions = client.instructions
        full, compact = preamble(db, detail="full"), preamble(db, detail="compact")
        form = catalog_form(db)
        checks.expect(
            f"{ts.label}: our tools", [t["name"] for t in ours], ["execute_sql", "explain_sql"]
        )
        checks.expect(
            f"{ts.label}: the MCP mode's catalog is the auto form",
            (served, instructions),
            (preamble(db),) * 2,
        )
        checks.expect(f"{ts.label}: the auto form", served, full if form == "full" else compact)
        _check_compact(ts, compact)
        await _check_discovery(ts, db, compact)
    finally:
        await db.close()
    extra = chars(ours)
    return Measured(
        ts.label,
        len(ts.tools),
        len(ts.resources),
        chars(ts.tools),
        len(full) + extra,
        len(compact) + extra,
        form,
    )


async def tool_sets(workdir: Path) -> list[ToolSet]:
    """The demo set, each real MCP server, the four together, and the synthetic sets."""
    demo = demo_resources()
    sets = [ToolSet("demo set", demo_tools(demo), demo)]
    async with McpBridge(real_configs(workdir)) as bridge:
        if bridge.failures:
            raise RuntimeError(f"MCP servers did not start: {bridge.failures}")
        listed = {
            ns: [tool_json(t) for t in await c.list_tools()] for ns, c in bridge.connections.items()
        }
    # The tables are only described from here on: the servers need not run.
    for ns in REAL:
        tables = [r for r in bridge.resources if r.name.startswith(f"{ns}_")]
        sets.append(ToolSet(PACKAGES[ns], listed[ns], tables))
    sets.append(
        ToolSet(
            "all four MCP servers", [t for ns in REAL for t in listed[ns]], list(bridge.resources)
        )
    )
    sets += [synthetic_set(k) for k in (2, 4, 8, 16)]
    return sets


async def run(env: Env) -> Section:
    section = Section(
        NAME,
        "Context: the tools folded in against one tool and the catalog",
        "Characters an agent's context holds for a set of tools. *folded*: the tools' "
        "`tools/list` definitions as JSON. *full* and *compact*: `preamble(db, detail=…)` "
        "plus our two tools' definitions (`execute_sql`, `explain_sql`), as JSON the same "
        "way. Higher ratios are better: how many times smaller than folding the tools in.",
        columns=["tools", "tables", "folded", "full", "compact"],
        ratios=[("folded", "full"), ("folded", "compact")],
    )
    with tempfile.TemporaryDirectory(prefix="glove-context-") as tmp:
        sets = await tool_sets(Path(tmp))
    measured: dict[str, Measured] = {}
    checked: list[str] = []
    for n, ts in enumerate(sets):
        m = await measure(ts, env, f"bench_context_{n}")
        measured[ts.label] = m
        checked.append(f"{m.label} ({m.tables} tables)")
        section.add(
            f"{m.label}",
            "",
            note=f"auto: {m.form}; {m.per_tool:,} chars per tool folded",
            tools=m.tools,
            tables=m.tables,
            folded=m.folded,
            full=m.full,
            compact=m.compact,
        )
        print(
            f"  {m.label}: {m.tools} tools; folded {m.folded:,}, full {m.full:,} "
            f"({m.folded / m.full:.2f}x), compact {m.compact:,} "
            f"({m.folded / m.compact:.2f}x); auto: {m.form}",
            flush=True,
        )
    everything, synthetic = measured["all four MCP servers"], measured[sets[-1].label]
    for m, target in ((everything, TARGET_ALL), (synthetic, TARGET_SYNTHETIC)):
        ratio = m.folded / m.compact
        section.check(
            f"{m.label} ({m.tools} tools): compact ≥ {target:g}{TIMES} smaller than folded",
            times(ratio),
            ratio >= target,
        )
    section.notes.append(
        "Sizes are characters (Unicode code points) of the exact text a model receives: "
        "`json.dumps` of the `tools/list` objects (by alias, nulls left out) on both sides, "
        "and the preamble's Markdown. The demo set is not an MCP server: its folded form is "
        "its resources written as MCP tools, one per verb (`benchmarks/context.py: "
        "demo_tools`). The synthetic tools are generated (`synthetic_tools`): five per noun, "
        "shaped like real ones, and made tables by the MCP bridge's own `tool_resource`."
    )
    section.notes.append(
        "*auto* is the form `preamble(db)` and the MCP mode serve: the full form while it is "
        f"at most `FULL_LIMIT` ({FULL_LIMIT:,}) characters, else the compact one, grouped by "
        f"namespace past `LIST_LIMIT` ({LIST_LIMIT}) tables."
    )
    section.notes.append(
        "Each set's answers are checked, through our MCP mode read by the `mcp` SDK's client "
        "and through `execute_sql`: the catalog served is the auto form; the compact form "
        "names every table once and no column, or every group with its true count; its "
        "documented statement reads, for every table, a row with every column, the keys and "
        "an example, uncut; a group's documented statement lists exactly its tables."
    )
    checks.passed(section, checked)
    return section
