"""The server's Prometheus metrics, counted in the test's own process and read back as a
scrape reads them (``glove_scratchpad.metrics``, off unless enabled)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from glove_scratchpad import metrics

_made: Any = None  # prometheus-client registers a name once per process: made once


def counted(monkeypatch: pytest.MonkeyPatch) -> Callable[..., float]:
    """Metrics counted until the test ends (then off again, as the other tests expect);
    gives ``sample(name, **labels)``: a sample's value, 0 when it was never counted."""
    global _made
    if _made is None:
        monkeypatch.setattr(metrics, "_metrics", None)  # restored when the test ends
        metrics.enable()
        _made = metrics._metrics
    monkeypatch.setattr(metrics, "_metrics", _made)

    def sample(name: str, **labels: str) -> float:
        return float(metrics.registry().get_sample_value(name, labels) or 0.0)

    return sample
