"""The config file's keys, checked before anything starts: a misspelt key is an error.

Rules:
- Every key of the file is one a section may have: the sections themselves
  (``[server]``, ``[users.NAME]``, ``[mcp]``, ``[openapi]``, ``[approvals]``), every
  entry of ``[[mcp.servers]]`` and ``[[openapi.apis]]``, and what they declare inside
  (a tool's override, its columns, an API's tables and their paging), down to
  the models that read them.
- An unknown key is a ValueError naming where it is, the key, and the keys it
  may have meant (``difflib.get_close_matches``); every unknown key at once.
- Values are not judged here (their models do that), and never repeated: some
  are secrets.
"""

from __future__ import annotations

import difflib
import types
from collections.abc import Mapping
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel

__all__ = ["check_keys"]

# What the file's [server] table may not set: the file's own tables fill these.
NOT_IN_SERVER = ("users", "mcp_servers", "openapi_apis", "config_dir", "approvals")


def check_keys(raw: Mapping[str, Any], settings: type[BaseModel]) -> None:
    """ValueError when the parsed config file has a key no section knows; ``settings``
    is the model of its ``[server]`` table."""
    from glove_scratchpad.resources.mcp import McpServerConfig
    from glove_scratchpad.resources.openapi._config import ApiConfig

    from .engine.approval_rules import ApprovalRules
    from .net.auth import User

    problems: list[str] = []
    _unknown(raw, ("server", "users", "mcp", "openapi", "approvals"), "the top level",
             problems)
    server = raw.get("server")
    if isinstance(server, Mapping):
        known = [name for name in settings.model_fields if name not in NOT_IN_SERVER]
        _unknown(server, known, "[server]", problems)
    _model(raw.get("approvals"), ApprovalRules, "[approvals]", problems)
    users = raw.get("users")
    if isinstance(users, Mapping):
        for name, user in users.items():
            _model(user, User, f"[users.{name}]", problems)
    for section, entries, model in (("mcp", "servers", McpServerConfig),
                                    ("openapi", "apis", ApiConfig)):
        table = raw.get(section)
        if not isinstance(table, Mapping):
            continue
        _unknown(table, (entries,), f"[{section}]", problems)
        items = table.get(entries)
        for i, entry in enumerate(items if isinstance(items, list) else ()):
            name = entry.get("namespace") if isinstance(entry, Mapping) else None
            which = f"namespace = {name!r}" if isinstance(name, str) else f"number {i + 1}"
            _model(entry, model, f"[[{section}.{entries}]] {which}", problems)
    if problems:
        raise ValueError("the config file: " + "; ".join(problems))


def _unknown(table: Mapping[str, Any], known: Any, where: str, problems: list[str]) -> None:
    known = list(known)
    for key in table:
        if key in known:
            continue
        close = difflib.get_close_matches(str(key), known, n=3)
        meant = f"; did you mean {' or '.join(close)}?" if close else (
            f"; it may have {', '.join(known)}" if len(known) <= 8 else "")
        problems.append(f"{where} has no key {key!r}{meant}")


def _model(value: Any, model: type[BaseModel], where: str, problems: list[str]) -> None:
    """``value``'s keys against ``model``'s fields, and the models inside it."""
    if not isinstance(value, Mapping):
        return  # not a table: the model says what it should be
    keys = [f.alias or name for name, f in model.model_fields.items()]
    if model.model_config.get("extra") != "allow":
        _unknown(value, keys, where, problems)
    for name, field in model.model_fields.items():
        inner = value.get(field.alias or name)
        if inner is not None:
            _inside(inner, field.annotation, f"{where} {field.alias or name}", problems)


def _inside(value: Any, annotation: Any, where: str, problems: list[str]) -> None:
    """The models an annotation holds (a model, a list or dict of them, an optional one)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        _model(value, annotation, where, problems)
        return
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (Union, types.UnionType):
        for arg in args:
            _inside(value, arg, where, problems)
    elif origin is list and args and isinstance(value, list):
        for i, item in enumerate(value):
            _inside(item, args[0], f"{where}[{i + 1}]", problems)
    elif origin is dict and len(args) == 2 and isinstance(value, Mapping):
        for key, item in value.items():
            _inside(item, args[1], f"{where}.{key}", problems)
