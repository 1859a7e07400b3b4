"""``python -m soak [--clients N] [--minutes M | --seconds S]``: run it, print the report."""

from __future__ import annotations

import argparse
import asyncio
import sys

from .run import soak


def main() -> int:
    p = argparse.ArgumentParser(prog="python -m soak")
    p.add_argument("--clients", type=int, default=64)
    p.add_argument("--minutes", type=float, default=10.0)
    p.add_argument("--seconds", type=float, default=None, help="overrides --minutes")
    args = p.parse_args()
    seconds = args.seconds if args.seconds is not None else args.minutes * 60
    report = asyncio.run(soak(args.clients, seconds))
    print(report.text(), flush=True)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
