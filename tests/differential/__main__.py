"""The long differential run (``make differential``): N generated statements from a seed,
through the server and on plain Postgres; prints the report and exits 1 on any
disagreement.

    python -m tests.differential [--statements 20000] [--seed 1]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from glove_scratchpad.catalog import EmbeddedSidecar

from .fix_differential import sides
from .generate import Generator
from .world import World


async def main(statements: int, seed: int) -> int:
    sidecar = EmbeddedSidecar(temporary=True)
    await sidecar.start()
    started = time.monotonic()
    try:
        async with sides(sidecar, World(seed)) as oracle:
            for case in Generator(seed).cases(10**9):
                if oracle.report.statements >= statements:
                    break
                try:
                    await oracle.run(case)
                except Exception:
                    print(f"the harness failed on: {case.text}", file=sys.stderr)
                    raise
            report = oracle.report
    finally:
        await sidecar.stop()
    print(report.summary())
    print(f"seed {seed}: {time.monotonic() - started:.1f} s")
    return 1 if report.disagreements else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--statements", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    sys.exit(asyncio.run(main(args.statements, args.seed)))
