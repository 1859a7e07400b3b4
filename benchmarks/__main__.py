"""``python -m benchmarks [--smoke] [--only NAME] [--output PATH]``: run the benchmarks.

A full run (``make bench``) writes docs/benchmarks.md; ``--smoke`` runs every
benchmark very briefly, at its smallest size, and writes only when given --output.
Failing targets are reported, not fatal: the exit status is non-zero only when a
benchmark could not run, or a timed statement answered wrongly (``WrongAnswer``,
see ``benchmarks/checks.py``); either is a FAIL target of the report, with its reason.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import traceback
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import ModuleType

from . import (
    context,
    copy_out,
    explain,
    http_api,
    idle,
    kept,
    lookup,
    machine,
    materialize,
    profiling,
    report,
    resolvers,
    throughput,
)
from .env import REPO, Env, Options
from .results import Section, WrongAnswer

# In the report's order (the issue's); they run in RUN_ORDER.
FAMILIES = [
    lookup, throughput, materialize, kept, explain, resolvers, http_api, idle, profiling,
    context, copy_out,
]
# Idle connections first, on a fresh server, so its RSS is not that of the caches the
# other runs fill; kept calls and materialization late, after the profile, since
# their 1M-row answers grow the heap. The context table is counted, not timed, and
# uses only the sidecar: it may run last.
RUN_ORDER = [
    idle, lookup, throughput, explain, resolvers, http_api, profiling, kept, materialize,
    context, copy_out,
]
NAMES = [f.NAME for f in FAMILIES]


def _failed(family: ModuleType, exc: Exception) -> Section:
    """The section of a benchmark that raised: one FAIL target with the reason."""
    name: str = family.NAME
    wrong = isinstance(exc, WrongAnswer)
    reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:500].replace("|", "\\|")
    section = Section(name, f"{name} (failed)", "did not complete; no figure is recorded.", [])
    section.check(
        f"`{name}`: every timed statement's answer is right" if wrong else f"`{name}` runs",
        reason,
        False,
    )
    return section


async def _main(options: Options, output: Path | None, only: list[str] | None = None) -> int:
    started = time.perf_counter()
    load_at_start = machine.load()
    print(
        f"benchmarks: {'smoke' if options.smoke else 'full'} run; starting the sidecar, "
        "the server and the relay",
        flush=True,
    )
    env = await Env.start(options)
    sections: dict[str, Section] = {}
    errors: list[str] = []
    try:
        print(
            f"  Postgres {env.pg_version}; server on {env.server.host}:{env.server.port}; "  # type: ignore[union-attr]
            f"relay on {env.relay.host}:{env.relay.port}",
            flush=True,
        )  # type: ignore[union-attr]
        for family in RUN_ORDER:
            if only and family.NAME not in only:
                continue
            run: Callable[[Env], Awaitable[Section]] = family.run
            print(f"== {family.NAME} ==", flush=True)
            t0 = time.perf_counter()
            try:
                sections[family.NAME] = await run(env)
            except Exception as exc:
                traceback.print_exc()
                errors.append(f"`{family.NAME}` failed: {type(exc).__name__}: {exc}"[:2000])
                sections[family.NAME] = _failed(family, exc)
            print(f"   ({time.perf_counter() - t0:.1f} s)", flush=True)
        details = machine.describe(env.pg_version, load_at_start)
    finally:
        await env.close()
    ordered = [sections[n] for n in NAMES if n in sections]
    seconds = time.perf_counter() - started
    text = report.render(ordered, details, smoke=options.smoke, seconds=seconds, errors=errors)
    print("== targets ==")
    for s in ordered:
        for c in s.checks:
            print("  " + report.verdict_line(c))
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text)
        print(f"wrote {output}")
    print(f"done in {seconds:.0f} s" + (f"; {len(errors)} benchmark(s) failed" if errors else ""))
    return 1 if errors else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--smoke",
        action="store_true",
        help="run every benchmark very briefly (CI); writes only with --output",
    )
    p.add_argument(
        "--output",
        type=Path,
        help="where to write the report (default: docs/benchmarks.md for a full run)",
    )
    p.add_argument(
        "--only",
        action="append",
        choices=NAMES,
        help="run this benchmark only (repeatable)",
    )
    p.add_argument(
        "--duration",
        type=float,
        default=5.0,
        help="seconds per pgbench run in a full run (default 5)",
    )
    args = p.parse_args(argv)
    output = args.output
    if output is None and not args.smoke:
        output = REPO / "docs" / "benchmarks.md"
    options = Options(smoke=args.smoke, duration=args.duration)
    try:
        import uvloop
    except ImportError:
        return asyncio.run(_main(options, output, args.only))
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(_main(options, output, args.only))


if __name__ == "__main__":
    sys.exit(main())
