"""What a benchmark family hands the report writer: figures, ratios and target checks."""

from __future__ import annotations

from dataclasses import dataclass, field


class WrongAnswer(Exception):
    """A timed statement answered wrongly: the benchmark fails instead of recording a time.

    Raised by ``benchmarks.checks`` (and by ``pgbench`` for failed transactions);
    ``python -m benchmarks`` reports it as a FAIL target with this message.
    """


@dataclass
class Row:
    """One measurement, under each reference it was taken against."""

    label: str
    unit: str  # "ms", "tps", "MB", "" (a count)
    values: dict[str, float | None]
    note: str = ""


@dataclass
class Check:
    """One target of the issue, with what was measured against it."""

    target: str
    measured: str
    ok: bool | None  # None: not measured in this run (e.g. a smoke run's sizes)


@dataclass
class Section:
    """One benchmark family: its table, the ratios to show, its targets and notes."""

    name: str  # printed by every run; the smoke test looks for it
    title: str
    about: str
    columns: list[str]
    ratios: list[tuple[str, str]] = field(default_factory=list)  # (a, b): a ÷ b
    rows: list[Row] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    extra: str = ""  # free Markdown after the table (the profile)

    def add(self, label: str, unit: str, note: str = "", **values: float | None) -> Row:
        row = Row(label, unit, dict(values), note)
        self.rows.append(row)
        return row

    def check(self, target: str, measured: str, ok: bool | None) -> Check:
        c = Check(target, measured, ok)
        self.checks.append(c)
        return c


TIMES = "\u00d7"  # the multiplication sign
DASH = "\u2013"  # an empty cell


def times(r: float | None, digits: int = 2, missing: str = "n/a") -> str:
    """A ratio as text, e.g. 3.10 and the multiplication sign."""
    return missing if r is None else f"{r:.{digits}f}{TIMES}"


def ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b
