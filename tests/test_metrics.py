"""The server's Prometheus metrics (``metrics.py``), counted through the wire: a statement by
its kind and the SQLSTATE class of its outcome, a tool call by resource, verb and outcome,
with its rows; never a statement's text or its arguments as a label."""

from __future__ import annotations

from glove_scratchpad import metrics

from .fix_metrics import counted
from .sql.fix_answers import answer, refusal


async def test_statements_and_calls_are_counted_by_bounded_labels(server, monkeypatch):
    sample = counted(monkeypatch)
    selects = sample("glove_statements_total", kind="SELECT", outcome="00")
    errors_42 = sample("glove_statements_total", kind="SELECT", outcome="42")
    calls = sample("glove_tool_calls_total", resource="slow", verb="select", outcome="ok")
    rows = sample("glove_tool_call_rows_total", resource="slow", verb="select")

    assert await answer(server, "SELECT done FROM slow WHERE seconds = 0") == [(True,)]
    assert (await refusal(server, "SELECT nope FROM items")).sqlstate == "42703"

    assert sample("glove_statements_total", kind="SELECT", outcome="00") >= selects + 1
    assert sample("glove_statements_total", kind="SELECT", outcome="42") == errors_42 + 1
    assert sample("glove_tool_calls_total", resource="slow", verb="select",
                  outcome="ok") == calls + 1
    assert sample("glove_tool_call_rows_total", resource="slow", verb="select") == rows + 1
    labels = {value for family in metrics.registry().collect() for s in family.samples
              for value in s.labels.values()}
    assert not any("nope" in value or "seconds" in value for value in labels), labels
