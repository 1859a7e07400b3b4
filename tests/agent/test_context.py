"""The context measure (``benchmarks/context.py``): the issue's ratios hold, and the
benchmark checks what it measures, failing on a wrong catalog rather than counting it.

It starts the real MCP servers as tests/mcp does (``make node-deps`` installs the npm
ones): a server that is not installed is a failure, never a skip.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchmarks import context
from benchmarks.results import TIMES, WrongAnswer
from glove_scratchpad.server import agent

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
async def tool_sets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, context.ToolSet]:
    sets = await context.tool_sets(tmp_path_factory.mktemp("context"))
    return {s.label: s for s in sets}


async def test_the_issue_ratios_hold(tool_sets, sidecar):
    env = SimpleNamespace(sidecar=sidecar)
    four = await context.measure(tool_sets["all four MCP servers"], env, "ctx_test_four")
    assert (four.tools, four.tables) == (36, 36)
    assert four.folded / four.compact >= context.TARGET_ALL  # acceptance: at least 3.2 times
    assert four.form == "compact"
    synthetic = tool_sets["synthetic, 16 namespaces"]
    assert len(synthetic.tools) >= 300
    big = await context.measure(synthetic, env, "ctx_test_synthetic")
    assert big.folded / big.compact >= context.TARGET_SYNTHETIC  # acceptance: at least 10 times
    assert big.form == "compact, grouped"
    # Counted exactly as specified: the tools/list objects as JSON, on both sides.
    assert four.folded == len(json.dumps(tool_sets["all four MCP servers"].tools))
    # The README shows these figures: they must be today's.
    readme = (ROOT / "README.md").read_text()
    for label, m in (("all four MCP servers", four),
                     ("320 generated tools, 16 namespaces", big)):
        row = f"| {label} | {m.tools} | {m.folded:,} | {m.full:,} | {m.compact:,} |"
        assert row in readme, (
            f"README.md's context table is stale; it should read {row!r}. Re-measure with "
            "`python -m benchmarks --only context --output /tmp/context.md`")


def test_each_real_server_is_measured_with_its_own_tools(tool_sets):
    counts = {label: (len(s.tools), len(s.resources)) for label, s in tool_sets.items()}
    assert counts["mcp-server-time"] == (2, 2)
    assert counts["mcp-server-git"][0] == counts["mcp-server-git"][1] >= 10
    assert counts["@modelcontextprotocol/server-memory"] == (9, 9)
    assert counts["@modelcontextprotocol/server-everything"][0] >= 10
    assert counts["demo set"] == (8, 5)  # one tool per verb


async def test_a_catalog_that_leaves_a_table_out_fails_the_benchmark(tool_sets, sidecar,
                                                                     monkeypatch):
    real = agent.preamble

    def dropping(*args, **kwargs):
        text = real(*args, **kwargs)
        return "\n".join(ln for ln in text.split("\n") if not ln.startswith("- git_git_log "))

    monkeypatch.setattr(context, "preamble", dropping)
    monkeypatch.setattr(agent, "preamble", dropping)  # the MCP mode serves the same text
    with pytest.raises(WrongAnswer, match="the tables the compact form lists"):
        await context.measure(tool_sets["mcp-server-git"], SimpleNamespace(sidecar=sidecar),
                              "ctx_test_dropped")


async def test_a_cut_discovery_row_fails_the_benchmark(tool_sets, sidecar, monkeypatch):
    monkeypatch.setattr(agent, "MAX_CATALOG_CELL", 100)
    with pytest.raises(WrongAnswer, match="discovery was cut"):
        await context.measure(tool_sets["mcp-server-git"], SimpleNamespace(sidecar=sidecar),
                              "ctx_test_cut")


@pytest.mark.timeout(240)
async def test_python_m_benchmarks_only_context(tmp_path: Path):
    import asyncio

    report = tmp_path / "benchmarks.md"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "benchmarks", "--smoke", "--only", "context", "--output",
        str(report), cwd=ROOT, env=dict(os.environ), stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT)
    out, _ = await asyncio.wait_for(proc.communicate(), 220)
    text = out.decode(errors="replace")
    assert proc.returncode == 0, text[-4000:]
    assert "== context ==" in text
    for target in ("all four MCP servers (36 tools): compact ≥ 3.2", "synthetic, 16 namespaces "
                   "(320 tools): compact ≥ 10"):
        assert f"PASS  {target}{TIMES} smaller than folded" in text, text[-4000:]
    assert "PASS  `context`: every timed statement's answer is right" in text
    written = report.read_text()
    assert "Context: the tools folded in against one tool and the catalog" in written
    assert "| all four MCP servers | 36 | 36 | 28,542 |" in written
