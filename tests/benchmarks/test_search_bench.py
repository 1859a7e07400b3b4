"""The search benchmark's smoke run: GitHub's document served, a few tasks searched both
ways, the figures reported and the answers checked (``benchmarks/search.py``)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_search_benchmark_reports_both_searches():
    out = subprocess.run([sys.executable, "-m", "benchmarks.search", "--smoke"], cwd=REPO,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "8 tasks over 760 tables" in out.stdout
    rows = re.findall(r"^\| (`scratchpad.search`|baseline[^|]*) \| ([\d.]+) \| ([\d.]+) \| "
                      r"([\d.]+) \|", out.stdout, re.M)
    assert [r[0].split(":")[0] for r in rows] == ["`scratchpad.search`", "baseline"], out.stdout
    for _, at1, at5, mrr in rows:
        assert 0 <= float(at1) <= float(at5) <= 1 and 0 <= float(mrr) <= 1
