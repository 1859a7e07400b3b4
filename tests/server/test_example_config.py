"""examples/glove-scratchpad.toml names every setting the server reads, with its true
default and its environment variable, and loads as a config once uncommented."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from glove_scratchpad.resources.mcp import McpServerConfig
from glove_scratchpad.server.config import ENV_PREFIX, ServerConfig, load_config
from glove_scratchpad.server.engine.approval_rules import ApprovalRules
from glove_scratchpad.server.net.auth import User

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "glove-scratchpad.toml"
# Set by the file's other tables ([users.NAME], [[mcp.servers]], [[openapi.apis]]) or by
# the server itself (the config file's folder), not by a [server] key.
NOT_KEYS = {"config_dir", "users", "mcp_servers", "openapi_apis", "approvals"}
SETTING = re.compile(r"^# (\w+) = (.+)$")


def _sections() -> dict[str, list[str]]:
    """The example's lines by the table they follow (commented tables count)."""
    out: dict[str, list[str]] = {"": []}
    name = ""
    for line in EXAMPLE.read_text().splitlines():
        table = re.fullmatch(r"#? ?\[\[?([\w.]+)\]\]?", line)
        if table:
            name = table.group(1)
            out.setdefault(name, [])
            continue
        out[name].append(line)
    return out


def test_every_setting_is_there_with_its_default_and_its_variable():
    lines = _sections()["server"]
    found = {}
    for i, line in enumerate(lines):
        m = SETTING.match(line)
        if m:
            comment = " ".join(x.lstrip("# ") for x in lines[max(0, i - 4):i]
                               if x.startswith("# ") and not SETTING.match(x))
            found[m.group(1)] = (tomllib.loads(f"v = {m.group(2)}")["v"], comment)
    fields = ServerConfig.model_fields
    assert set(found) == set(fields) - NOT_KEYS
    for name, (value, comment) in found.items():
        field = fields[name]
        default = field.get_default(call_default_factory=True)
        if default is None:
            assert "Unset by default" in comment, name
        elif name != "resources":
            assert value == default, (name, value, default)
        if name != "resources":
            assert ENV_PREFIX + name.upper() in comment, name
        assert field.description and field.description.split()[0] in comment, name


def test_uncommented_it_is_a_config_the_server_loads(tmp_path):
    sections = _sections()
    text = ["[server]", *(line[2:] for line in sections["server"] if SETTING.match(line))]
    path = tmp_path / "all.toml"
    path.write_text("\n".join(text) + "\n")
    config = load_config(path, environ={})
    assert config.metrics_port == 9187 and config.retention_days == 30
    for table, model in (("users.ann", User), ("mcp.servers", McpServerConfig),
                         ("approvals", ApprovalRules)):
        keys = {m.group(1) for line in sections[table] if (m := SETTING.match(line))}
        assert keys and keys <= set(model.model_fields), (table, keys)
