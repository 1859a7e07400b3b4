"""The client matrix through external programs: every case of fix_matrix.CASES, in every
protocol mode each client has (checked on the wire by the relay, not assumed).

- psql: simple (``;``), extended (``\\bind \\g``), prepared (``\\parse`` and ``\\bind_named``);
  its rows are read with -X -A -t -q, its notices, errors and HINTs from stderr
  (VERBOSITY=verbose puts the SQLSTATE on the line);
- pgjdbc (java/MatrixCases.java): simple, extended, prepared, all in one JVM;
- node-postgres (node/cases.js): simple, extended, prepared, all in one process.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from ..clients.fix_matrix import CASES, Case, Relay, Seen, app_name, check, relay
from .fix_clients import JAVA_DIR, JDBC_JAR, NODE_DIR, java, node, pg_binary, pg_env, run

__all__ = ["relay"]  # the fixture, used by name

CLIENTS = [(driver, mode) for driver in ("psql", "pgjdbc", "node-postgres")
           for mode in ("simple", "extended", "prepared")]

# -- psql ----------------------------------------------------------------------------

_PSQL_LINE = re.compile(r"psql:<stdin>:\d+: (NOTICE|WARNING|ERROR):  (?:([0-9A-Z]{5}): )?(.*)")
_PSQL_FIELD = re.compile(r"[A-Z][A-Z ]*:  ")  # DETAIL:, LOCATION:, TABLE NAME: …


def psql_script(mode: str, case: Case) -> str:
    if mode == "simple":
        return "".join(f"{sql};\n" for sql in case.statements)
    if mode == "extended":
        return "".join(f"{sql} \\bind \\g\n" for sql in case.statements)
    return "".join(f"{sql} \\parse s{i}\n\\bind_named s{i} \\g\n"
                   for i, sql in enumerate(case.statements))


def psql_seen(stdout: str, stderr: str) -> Seen:
    notices: list[tuple[str, str | None]] = []
    errors: list[tuple[str, str, str | None]] = []
    last: list[Any] = notices
    for line in stderr.splitlines():
        if m := _PSQL_LINE.fullmatch(line):
            severity, code, message = m.groups()
            if severity == "ERROR":
                errors.append((code, message, None))
                last = errors
            else:
                notices.append((message, None))
                last = notices
        elif line.startswith("HINT:  ") and last:
            last[-1] = (*last[-1][:-1], line.removeprefix("HINT:  "))
        elif not (_PSQL_FIELD.match(line) or line.startswith(("LINE ", " "))):
            pytest.fail(f"psql said something unexpected on stderr: {line!r}")
    return Seen([line for line in stdout.splitlines() if line], notices, errors)


async def run_psql(relay: Relay, mode: str, case: Case) -> Seen:
    ran = await run(pg_binary("psql"), "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=0",
                    "-v", "VERBOSITY=verbose", "--dbname", relay.dsn(app_name("psql", mode, case)),
                    "-f", "-", stdin=psql_script(mode, case), env=pg_env())
    assert ran.returncode == 0, ran
    return psql_seen(ran.stdout, ran.stderr)


# -- pgjdbc and node-postgres: one process each, for every mode and case -------------------


def _unescape(field: str) -> str | None:
    if field == "\\N":
        return None
    return re.sub(r"\\(.)", lambda m: {"t": "\t", "n": "\n"}.get(m[1], m[1]), field)


async def run_pgjdbc(relay: Relay) -> dict[str, Seen]:
    lines = [f"{mode}\t{app_name('pgjdbc', mode, case)}\t{sql}\n"
             for driver, mode in CLIENTS if driver == "pgjdbc"
             for case in CASES for sql in case.statements]
    ran = await run(java(), "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-cp", JDBC_JAR,
                    JAVA_DIR / "MatrixCases.java",
                    f"jdbc:postgresql://127.0.0.1:{relay.port}/scratchpad", stdin="".join(lines))
    assert (ran.returncode, ran.stderr) == (0, ""), ran
    out: dict[str, Seen] = {}
    for line in ran.stdout.splitlines():
        app, kind, *fields = line.split("\t")
        values = [_unescape(f) for f in fields]
        seen = out.setdefault(app, Seen())
        {"row": seen.rows, "notice": seen.notices, "error": seen.errors}[kind].append(
            values[0] if kind == "row" else tuple(values))
    return out


async def run_node(relay: Relay) -> dict[str, Seen]:
    entries = [{"app": app_name("node-postgres", mode, case), "mode": mode,
                "statements": list(case.statements)}
               for driver, mode in CLIENTS if driver == "node-postgres" for case in CASES]
    ran = await run(node(), NODE_DIR / "cases.js",
                    relay.dsn("node").split("?")[0] + "?sslmode=disable",
                    stdin=json.dumps(entries), cwd=NODE_DIR)
    assert (ran.returncode, ran.stderr) == (0, ""), ran
    return {app: Seen(s["rows"], [tuple(n) for n in s["notices"]],
                      [tuple(e) for e in s["errors"]])
            for app, s in json.loads(ran.stdout).items()}


class Batches:
    """Each batch program runs once, when its first case is asked for."""

    def __init__(self, relay: Relay) -> None:
        self.relay = relay
        self.done: dict[str, dict[str, Seen]] = {}

    async def seen(self, driver: str, mode: str, case: Case) -> Seen:
        if driver not in self.done:
            runner = {"pgjdbc": run_pgjdbc, "node-postgres": run_node}[driver]
            self.done[driver] = await runner(self.relay)
        return self.done[driver].get(app_name(driver, mode, case), Seen(rows=None))


@pytest.fixture(scope="module")
def batches(relay: Relay) -> Batches:
    return Batches(relay)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
@pytest.mark.parametrize(("driver", "mode"), CLIENTS, ids=[f"{d}-{m}" for d, m in CLIENTS])
async def test_client_matrix(relay: Relay, batches: Batches, driver: str, mode: str,
                             case: Case) -> None:
    if driver == "psql":
        seen = await run_psql(relay, mode, case)
    else:
        seen = await batches.seen(driver, mode, case)
    check(relay, driver, mode, case, seen)
