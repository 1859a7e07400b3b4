"""7. HTTP APIs: the server's overhead per call, and rows per second through paging.

An HTTP API of the benchmark's own (``benchmarks.http_app``, FastAPI on uvicorn in a
process of its own) serves its items; a second server process makes its tables from
the API's OpenAPI document (``[[openapi.apis]]``, namespace ``api``), on the same
sidecar. The same requests are made directly with an httpx client (one pooled
connection), the reference:

- one call: ``SELECT … FROM api_list_items WHERE id = $1`` (routed to
  ``GET /items/{item_id}``; prepared, a new id each time) against ``GET /items/{id}``;
- a paged read: ``SELECT count(*), sum(qty) FROM api_list_items`` (every page, 1,000
  items a page) against the same pages fetched and summed by the client.

Every timed answer is checked: the item's row, the count and sum; and ``LIMIT 5``
made one request (``scratchpad.calls``).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
import socket
import statistics
import sys
import time
from typing import Any

import httpx

from . import checks
from .bench_resources import item_row
from .env import Env, _Process
from .http_app import MAX_PAGE
from .results import TIMES, Section

NAME = "http-api"
DATABASE = "bench_http"
TARGET_OVERHEAD_MS = 2.0  # the server's time per call beyond the request itself
TARGET_PAGED = 0.33  # paged rows/s through the server (into Postgres), against a
# client that only sums the pages
_LISTENING = re.compile(r"api listening on (\S+):(\d+)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _api(env: Env, count: int) -> tuple[_Process, str]:
    port = _free_port()
    proc = _Process("http_api", [sys.executable, "-m", "benchmarks.http_app", str(port),
                                 str(count)], env.workdir, env._child_env())
    found = await proc.wait_for(_LISTENING)
    url = f"http://{found[1]}:{found[2]}"
    async with httpx.AsyncClient() as client:
        for _ in range(200):
            try:
                (await client.get(url + "/openapi.json")).raise_for_status()
                return proc, url
            except httpx.HTTPError:
                await asyncio.sleep(0.05)
    proc.stop()
    raise RuntimeError("the benchmark's HTTP API did not answer")


async def _medians_ms(runs: dict[str, Any], n: int) -> dict[str, float]:
    """The median milliseconds of each run, taken in turn (one of each, n times): a
    busy moment of the machine falls on both alike."""
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(n):
        for name, fn in runs.items():
            t0 = time.perf_counter()
            await fn()
            samples[name].append(time.perf_counter() - t0)
    return {name: statistics.median(s) * 1000 for name, s in samples.items()}


async def _measure(conn: Any, url: str, count: int, smoke: bool
                   ) -> tuple[dict[str, float], dict[str, float], list[str]]:
    """The figures, each answer checked: one call's median ms, a paged read's rows/s."""
    checked: list[str] = []
    async with httpx.AsyncClient(base_url=url, limits=httpx.Limits(
            max_connections=1)) as client:
        calls = 30 if smoke else 300
        rng = random.Random(7)
        point = await conn.prepare("SELECT id, name, qty FROM api_list_items WHERE id = $1")

        async def through_server() -> None:
            i = rng.randint(1, count)
            got = await point.fetch(i)
            checks.expect(f"api_list_items id = {i}", [dict(r) for r in got], [item_row(i)])

        async def direct() -> None:
            i = rng.randint(1, count)
            response = await client.get(f"/items/{i}")
            checks.expect(f"GET /items/{i}", response.json(), item_row(i))

        await _medians_ms({"server": through_server, "direct": direct}, 10)  # warm-up
        one = await _medians_ms({"server": through_server, "direct": direct}, calls)
        checked.append(f"{2 * calls} point reads, each its item's row")

        want = (count, sum(item_row(i)["qty"] for i in range(1, count + 1)))

        async def paged_server() -> None:
            got = await conn.fetchrow("SELECT count(*), sum(qty) FROM api_list_items")
            checks.expect("count and sum of api_list_items", tuple(got), want)

        async def paged_direct() -> None:
            total = rows = after = 0
            while True:
                page = (await client.get("/items", params={
                    "after": after, "limit": MAX_PAGE})).json()
                rows += len(page["items"])
                total += sum(item["qty"] for item in page["items"])
                if not page["next_cursor"]:
                    break
                after = int(page["next_cursor"])
            checks.expect("count and sum of the pages", (rows, total), want)

        repeats = 3 if smoke else 15
        await paged_server()
        paged = {k: count / (ms / 1000) for k, ms in (await _medians_ms(
            {"server": paged_server, "direct": paged_direct}, repeats)).items()}
        checked.append(f"{2 * repeats + 1} paged reads, count and sum")
    five = await conn.fetch("SELECT id FROM api_list_items LIMIT 5")
    checks.expect("LIMIT 5", [r["id"] for r in five], [1, 2, 3, 4, 5])
    requests = await conn.fetchval(
        "SELECT count(*) FROM scratchpad.calls WHERE statement = "
        "'SELECT id FROM api_list_items LIMIT 5' AND verb = 'http GET'")
    checks.expect("requests of LIMIT 5", requests, 1)
    checked.append("LIMIT 5: ids 1-5 in one request")
    return one, paged, checked


async def run(env: Env) -> Section:
    smoke = env.options.smoke
    count = 2_000 if smoke else 10_000
    section = Section(
        NAME,
        "HTTP APIs (OpenAPI tables)",
        "A FastAPI service of the benchmark's own, in its own process; the server's "
        "tables come from its OpenAPI document. *direct*: the same requests from an httpx "
        "client. One call: median latency of a point read routed to `GET /items/{id}`; "
        f"paged: `count(*)` over {count:,} items, {MAX_PAGE:,} a page, as rows per second.",
        columns=["server", "direct"],
        ratios=[("server", "direct")],
    )
    admin = await env._admin("postgres")
    try:
        await admin.execute(f'CREATE DATABASE "{DATABASE}"')
    finally:
        await admin.close()
    with contextlib.ExitStack() as stack:  # each process stopped however this ends
        api, url = await _api(env, count)
        stack.callback(api.stop)
        config = env.workdir / "http_api.toml"
        config.write_text(f'[[openapi.apis]]\nnamespace = "api"\nspec = "{url}/openapi.json"'
                          f"\nmax_page_size = {MAX_PAGE}\n")
        server_proc, server = await env.launch_server("http_server", [
            sys.executable, "-m", "glove_scratchpad.server.cli", "serve", "--port", "0",
            "--config", str(config), "--sidecar-dsn", env.sidecar_dsn(DATABASE)])
        stack.callback(server_proc.stop)
        conn = await server.connect()
        try:
            one, paged, checked = await _measure(conn, url, count, smoke)
        finally:
            await conn.close()
    section.add("one call (point read), median", "ms", **one)
    section.add(f"paged read of {count:,} items", "rows/s", **paged)
    overhead = one["server"] - one["direct"]
    section.notes.append(f"The server's overhead per call: {overhead:.2f} ms "
                         f"({one['server']:.2f} ms against {one['direct']:.2f} ms).")
    section.check(f"overhead per call ≤ {TARGET_OVERHEAD_MS:g} ms", f"{overhead:.2f} ms",
                  None if smoke else overhead <= TARGET_OVERHEAD_MS)
    share = paged["server"] / paged["direct"]
    section.check(f"paged rows/s ≥ {TARGET_PAGED:g}{TIMES} the client's own",
                  f"{share:.2f}{TIMES}", None if smoke else share >= TARGET_PAGED)
    checks.passed(section, checked)
    return section
