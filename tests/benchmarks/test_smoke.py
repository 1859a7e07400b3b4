"""The benchmarks' smoke run: every benchmark runs very briefly and is named in the output.

CI runs this, not the full benchmarks (``make bench``). Every benchmark checks the
answers of what it times (``benchmarks/checks.py``): the smoke run must report each
family's answer target as PASS, and a server whose resources answer wrongly
(``BENCH_WRONG_ANSWERS``) must make the benchmark fail, with a FAIL target.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import sys
import time
from pathlib import Path

import pytest

from benchmarks.results import DASH, TIMES

REPO = Path(__file__).resolve().parents[2]
# big_ttl's ttl well inside the smoke run, so its kept call expires and is made again
# (its statements span about 1 s), and well above one call's making (0.15-0.3 s for its
# 100,000 rows): a ttl counts from the call's start, so one the making outlasts is gone
# when its table is made, and every statement calls again (minutes instead of seconds).
SMOKE_ENV = {"BENCH_BIG_TTL": "0.5"}
# One per benchmark of the issue, and the profile.
NAMES = (
    "point-lookup",
    "throughput",
    "materialization",
    "kept-calls",
    "explain",
    "resolver-concurrency",
    "http-api",
    "idle-connections",
    "profile",
)


# The relay-grade hot path's six targets: each a row of the Targets table, with the
# figure measured and its verdict (a dash where the smoke run's sizes leave it out).
HOT_PATH_TARGETS = (
    f"kept point lookup (`big`, c=1, prepared) ≤ 2{TIMES} direct latency",
    f"kept point lookup (`big`) at c=8, one worker, ≥ 0.5{TIMES} the relay's throughput",
    f"resolved lookup (a new call each time) at c=8 ≥ 0.25{TIMES} the relay",
    f"throughput at c=32 with --workers 2 ≥ 1.8{TIMES} one worker's",
    f"100,000 volatile rows (spilled), end to end, ≤ 2{TIMES} COPY",
    "server CPU per kept lookup (`big`, c=1, prepared) ≤ 40 µs",
)


def _answers(name: str) -> str:
    """The target every benchmark adds for the answers of what it timed."""
    return f"`{name}`: every timed statement's answer is right"


async def _smoke(report: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """``python -m benchmarks --smoke --output report *args``: exit status and output."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "benchmarks",
        "--smoke",
        "--output",
        str(report),
        *args,
        cwd=REPO,
        env={**os.environ, **SMOKE_ENV, **(env or {})},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), 150)
    except TimeoutError:
        # SIGINT first: its finally (Env.close) stops the sidecar, server and relay,
        # which run in sessions of their own and outlive a SIGKILL of the driver.
        proc.send_signal(signal.SIGINT)
        try:
            await asyncio.wait_for(proc.wait(), 5)  # inside the test's own mark
        except TimeoutError:
            proc.kill()
            await proc.wait()
        raise
    assert proc.returncode is not None
    return proc.returncode, out.decode(errors="replace")


@pytest.mark.timeout(160)
async def test_smoke_run_measures_every_benchmark(tmp_path: Path) -> None:
    report = tmp_path / "benchmarks.md"
    started = time.monotonic()
    code, text = await _smoke(report)
    elapsed = time.monotonic() - started
    assert code == 0, text[-4000:]
    for name in NAMES:
        assert f"== {name} ==" in text, f"{name} did not run:\n{text[-4000:]}"
        assert f"PASS  {_answers(name)}" in text, f"{name} checked no answer:\n{text[-4000:]}"
    assert "failed" not in text.splitlines()[-1], text[-4000:]
    # big was called once; big_ttl again after its ttl (cache.py checks both bounds)
    calls = re.search(r"calls: big (\d+) .*, big_ttl (\d+) over", text)
    assert calls is not None and calls[1] == "1" and int(calls[2]) >= 2, text[-4000:]
    written = report.read_text()
    for name in NAMES:
        assert f"| {_answers(name)} |" in written
    # The event loop's wake-ups per statement, counted by strace (which make test installs).
    if shutil.which("strace"):
        waits = re.search(r"^\| the event loop's wake-ups \(`epoll_pwait`\) per statement, `big` "
                          r"\| ([\d.]+) \| [^|]+ \| ([\d.]+) \|", written, re.MULTILINE)
        assert waits is not None, written
        # The fast path wakes for the request and for the sidecar's reply, as the relay does.
        assert 1.5 < float(waits[1]) < 3 and 1.5 < float(waits[2]) < 3, waits[0]
    targets = written.partition("## Targets")[2].partition("\n## ")[0]
    for target in HOT_PATH_TARGETS:
        row = rf"^\| {re.escape(target)} \| [^|]+ \| (\*\*PASS\*\*|\*\*FAIL\*\*|{DASH}) \|$"
        assert re.search(row, targets, re.MULTILINE), f"no row for {target!r}:\n{targets}"
    for heading in (
        "## Machine",
        "## Targets",
        "Point lookup",
        "Throughput",
        "Materialization",
        "Kept calls",
        "EXPLAIN",
        "Resolver concurrency",
        "HTTP APIs",
        "Idle connections",
        "Profile",
    ):
        assert heading in written
    print(f"smoke run: {elapsed:.0f} s")  # meant to stay under 60 s on an idle machine


@pytest.mark.timeout(160)
@pytest.mark.parametrize(
    ("wrong", "benchmark", "reason"),
    [
        # pgbench's checking script: a wrong qty aborts its client
        ("items.qty", "point-lookup", "is not that of the id looked up"),
        # the full row over the same protocol: a wrong label
        ("items.name", "point-lookup", "got [('1', 'item 2', '7')]"),
        # the right count, one wrong value: the checksum
        ("rows.name", "materialization", "count and md5 of rows"),
        # a kept call's rows: pgbench's checking script, on each kept resource
        ("big.qty", "kept-calls", "check_lookup_big_1_100000.sql): a row's id or qty"),
        ("big_ttl.qty", "kept-calls", "check_lookup_big_ttl_1_100000.sql): a row's id or qty"),
        # the right count, one wrong value, read from the kept table: the checksum
        ("kept_rows.name", "kept-calls", "count and md5 of kept_rows"),
        # an HTTP API's item: the row a point read through its table returned
        ("api.qty", "http-api", "api_list_items id = "),
    ],
)
async def test_a_wrong_answer_fails_the_benchmark(
    tmp_path: Path, wrong: str, benchmark: str, reason: str
) -> None:
    report = tmp_path / "benchmarks.md"
    code, text = await _smoke(
        report, "--only", benchmark, env={"BENCH_WRONG_ANSWERS": wrong}
    )
    assert code != 0, text[-4000:]
    assert f"FAIL  {_answers(benchmark)}: WrongAnswer" in text, text[-4000:]
    assert reason in text, text[-4000:]
    assert text.splitlines()[-1].endswith("; 1 benchmark(s) failed"), text[-4000:]
    written = report.read_text()
    line = next(ln for ln in written.splitlines() if _answers(benchmark) in ln)
    assert line.endswith("| **FAIL** |") and reason in line, line
    assert "## Errors" in written
