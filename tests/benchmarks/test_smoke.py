"""The benchmarks' smoke run: every benchmark runs very briefly and is named in the output.

CI runs this, not the full benchmarks (``make bench``).
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# One per benchmark of the issue, and the profile.
NAMES = (
    "point-lookup",
    "throughput",
    "materialization",
    "explain",
    "resolver-concurrency",
    "idle-connections",
    "profile",
)


@pytest.mark.timeout(110)
async def test_smoke_run_measures_every_benchmark(tmp_path: Path) -> None:
    report = tmp_path / "benchmarks.md"
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "benchmarks",
        "--smoke",
        "--output",
        str(report),
        cwd=REPO,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), 100)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    text = out.decode(errors="replace")
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, text[-4000:]
    for name in NAMES:
        assert f"== {name} ==" in text, f"{name} did not run:\n{text[-4000:]}"
    assert "failed" not in text.splitlines()[-1], text[-4000:]
    written = report.read_text()
    for heading in (
        "## Machine",
        "## Targets",
        "Point lookup",
        "Throughput",
        "Materialization",
        "EXPLAIN",
        "Resolver concurrency",
        "Idle connections",
        "Profile",
    ):
        assert heading in written
    print(f"smoke run: {elapsed:.0f} s")  # meant to stay under 60 s on an idle machine
