"""The preamble: generated from the catalog, deterministic, and checked in for the demo set."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from glove_scratchpad.resources import define_resource
from glove_scratchpad.resources.demo import demo_resources
from glove_scratchpad.server.agent import preamble

ROOT = Path(__file__).resolve().parents[2]
CHECKED_IN = ROOT / "docs" / "preamble.md"
REGENERATE = "python -m glove_scratchpad.server.agent > docs/preamble.md"


def test_docs_preamble_is_in_step_with_the_code():
    assert CHECKED_IN.read_text() == preamble(demo_resources(), writes=True), (
        f"docs/preamble.md is stale: regenerate it with `{REGENERATE}` (from the repository "
        "root, in the venv)")


def test_the_module_prints_the_demo_preamble():
    out = subprocess.run([sys.executable, "-m", "glove_scratchpad.server.agent"],
                         capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout == preamble(demo_resources(), writes=True)


def test_deterministic_whatever_the_order_or_the_clock():
    first = preamble(demo_resources())
    assert preamble(list(reversed(demo_resources()))) == first
    assert preamble(demo_resources()) == first


def test_it_describes_tables_keys_enums_verbs_and_the_discipline():
    text = preamble(demo_resources())
    names = [line[4:] for line in text.splitlines() if line.startswith("### ")]
    assert names == sorted(names) == ["emails", "images", "tasks", "time", "web"]
    web = text.split("### web\n")[1]
    assert "SELECT · volatile · required key: query" in web
    assert "`SELECT * FROM web WHERE query = '…'`" in web
    assert "- query text, required key: Search terms" in web
    tasks = text.split("### tasks\n")[1].split("###")[0]
    assert "SELECT INSERT UPDATE DELETE · volatile · primary key: id" in tasks
    assert "- status text: Progress (one of: todo, done)" in tasks
    assert "- title text, not null: What to do" in tasks
    assert "INSERT · volatile" in text.split("### emails\n")[1]
    for words in ("information_schema", "WHERE", "Required keys", "JOIN", "INSERT INTO a",
                  "BEGIN", "SELECT * FROM scratchpad.staged", "COMMIT", "ROLLBACK",
                  "One statement per call", "Do not re-read", "RETURNING", "`EXPLAIN` costs "
                  "nothing", "HINT", "stable", "immutable"):
        assert words in text, words
    assert len(text) < 4000  # a model reads it every turn


def test_read_only_says_so_and_skips_staging():
    text = preamble(demo_resources(), writes=False)
    assert "read-only" in text and "25006" in text
    assert "scratchpad.staged`." not in text.split("## Tables")[0]


async def test_from_a_database(make_db):
    thing = define_resource("thing", columns=[("name", "text")], keys=["name"],
                            volatility="immutable", select=lambda b: [])
    db = await make_db([thing], writes=False)
    text = preamble(db)
    assert "### thing\nSELECT · immutable · required key: name" in text
    assert "read-only" in text
