"""The README's example resource and the tour run as written."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

from glove_scratchpad.server.loader import load_resources

ROOT = Path(__file__).resolve().parents[2]


async def test_readme_define_a_resource_example_serves(tmp_path, make_db):
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```python\n(# my_resources\.py\n.*?)```", readme, re.S)
    assert block, "the README's 'Define a resource' example is missing"
    path = tmp_path / "my_resources.py"
    path.write_text(block.group(1))
    resources = load_resources([str(path)])
    assert [r.name for r in resources] == ["github_pr"]
    db = await make_db(resources)
    r = await db.execute("SELECT title FROM github_pr WHERE merged")
    assert r.rows == [("Add parser",)]
    r = await db.execute("INSERT INTO github_pr (number, title, merged) "
                         "VALUES (3, 'Docs', false) RETURNING number")
    assert (r.command_tag, r.rows) == ("INSERT 0 1", [(3,)])


def test_a_dotted_module_serves_its_resources_list():
    names = [r.name for r in load_resources(["glove_scratchpad.resources.demo"])]
    assert names == ["time", "tasks", "emails", "web", "images"]


async def test_the_tour_walks_every_step():
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(ROOT / "examples" / "tour.py"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    text = out.decode()
    assert proc.returncode == 0, text
    for step in ("discover", "invoke", "compose", "dry-run", "stage", "preview", "commit",
                 "roll back"):
        assert f"-- {step}" in text
    assert "NOTICE: fired #1: emails.insert(1 row)" in text
    assert "NOTICE: discarded 1 staged write" in text
    assert "HINT:  Add it to the WHERE clause" in text
