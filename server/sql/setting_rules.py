"""Which settings a client may change or read, and what each refusal says. No I/O.

The gate applies these rules to ``SET``/``RESET``/``SHOW`` and, identically, to
``set_config(name, value, is_local)`` and ``current_setting(name)``: a call is
judged as the statement that spells the same change or read.

Rules:
- A name is judged by its canonical spelling (``canonical_setting``): lower
  case, with Postgres's old aliases mapped (``sort_mem`` is ``work_mem``), so no
  spelling reaches a setting that its own name may not.
- ``PROTECTED_SETTINGS`` and names with a ``PROTECTED_PREFIXES`` prefix
  (identity, server paths, memory limits, anything that weakens the sandbox)
  cannot be SET, RESET or ``set_config``-ed (42501).
- ``ONE_WAY_SETTINGS`` take only values that narrow what a statement can do
  (``one_way``): ``search_path`` lists only the server's own schemas
  (``known_schemas``) and Postgres's, with ``pg_catalog`` first if at all;
  ``default_transaction_read_only`` and ``transaction_read_only`` may only be
  turned on; ``standard_conforming_strings`` stays on and ``client_encoding``
  stays UTF8, because the gate parses with those rules and the sidecar must read
  the same text the same way. The value must be a literal (or a parameter whose
  text is known); RESET restores the server's.
- ``SESSION_SETTINGS`` are kept by the session itself (``statement_timeout``
  under the server's cap, the client encoding, the virtual transaction's
  settings): SET reaches the session, but ``set_config`` would change only the
  sidecar's copy for one statement, so it is refused (0A000) with a HINT
  naming the SET to use.
- ``SECRET_SETTINGS`` (file paths, commands, connection strings) cannot be read
  with SHOW, ``current_setting`` or ``pg_settings`` (42501).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

from glove_scratchpad import errors
from glove_scratchpad.names import DEFAULT_SCHEMAS, Schemas

__all__ = [
    "FALSE_WORDS",
    "ONE_WAY_SETTINGS",
    "PROTECTED_PREFIXES",
    "PROTECTED_SETTINGS",
    "SECRET_SETTINGS",
    "SESSION_SETTINGS",
    "SETTING_ALIASES",
    "TRUE_WORDS",
    "canonical_setting",
    "known_schemas",
    "one_way",
    "refuse_secret",
    "refuse_set",
    "refuse_set_config",
    "setting_protected",
]

# Cannot be SET, RESET or set_config-ed (names are case-insensitive; prefixes below too).
PROTECTED_SETTINGS = frozenset({
    # identity
    "role", "session_authorization",
    # what weakens the sandbox
    "session_replication_role", "allow_system_table_mods", "allow_in_place_tablespaces",
    "ignore_system_indexes", "ignore_checksum_failure", "ignore_invalid_pages",
    "zero_damaged_pages", "row_security", "lo_compat_privileges", "backslash_quote",
    "jit_provider", "dynamic_library_path", "local_preload_libraries",
    "session_preload_libraries", "shared_preload_libraries", "default_tablespace",
    "temp_tablespaces", "exit_on_error", "backtrace_functions", "check_function_bodies",
    # memory and disk a statement may take
    "work_mem", "maintenance_work_mem", "hash_mem_multiplier", "temp_buffers",
    "temp_file_limit", "logical_decoding_work_mem", "max_stack_depth",
    "vacuum_buffer_usage_limit",
    # server files, commands and connections
    "data_directory", "config_file", "hba_file", "ident_file", "external_pid_file",
    "unix_socket_directories", "unix_socket_group", "unix_socket_permissions",
    "listen_addresses", "port", "krb_server_keyfile", "restore_command",
    "event_source", "cluster_name", "stats_temp_directory",
})
PROTECTED_PREFIXES = ("log_", "debug_", "trace_", "syslog_", "ssl", "archive_", "recovery_",
                      "primary_", "wal_", "promote_", "glove_scratchpad.")

# Cannot be read (SHOW, current_setting, pg_settings): paths, commands, connection strings.
SECRET_SETTINGS = frozenset({
    "data_directory", "config_file", "hba_file", "ident_file", "external_pid_file",
    "unix_socket_directories", "unix_socket_group", "log_directory", "krb_server_keyfile",
    "ssl_cert_file", "ssl_key_file", "ssl_ca_file", "ssl_crl_file", "ssl_crl_dir",
    "ssl_dh_params_file", "ssl_passphrase_command", "archive_command", "archive_library",
    "archive_cleanup_command", "restore_command", "recovery_end_command", "primary_conninfo",
    "primary_slot_name", "stats_temp_directory", "dynamic_library_path",
})

# Postgres still accepts these old names for the settings they became (guc.c,
# map_old_guc_names): ``SET sort_mem`` sets work_mem.
SETTING_ALIASES = {
    "sort_mem": "work_mem",
    "vacuum_mem": "maintenance_work_mem",
    "ssl_ecdh_curve": "ssl_groups",
}

# Settings that may be changed only to values that narrow what a statement can do
# (ONE_WAY_SETTINGS, below, with the rule of each).
# How Postgres spells a boolean setting's true and false (unique prefixes included).
TRUE_WORDS = frozenset({"on", "true", "yes", "1", "t", "y", "tr", "tru", "ye"})
FALSE_WORDS = frozenset({"off", "false", "no", "0", "f", "n", "fa", "fal", "fals", "of"})
_UTF8 = frozenset({"utf8", "utf-8", "unicode"})

_KEPT_WITH_TRANSACTION = ("transactions here are virtual: the session keeps their settings",
                          "Use BEGIN … or SET TRANSACTION … (ISOLATION LEVEL, READ ONLY); "
                          "the session keeps them for the transaction.")

# Settings the session keeps itself, by name: (why set_config cannot change them, the HINT).
SESSION_SETTINGS: dict[str, tuple[str, str]] = {
    "statement_timeout": (
        "the session enforces it, under the server's cap",
        "Use SET statement_timeout = …: it is kept by the session under the server's cap."),
    "client_encoding": (
        "the session encodes what it sends to the client",
        "Use SET client_encoding = 'UTF8': it is kept by the session."),
    "default_transaction_read_only": (
        "the session refuses writes while it is on",
        "Use SET default_transaction_read_only = on: it is kept by the session."),
    "transaction_read_only": _KEPT_WITH_TRANSACTION,
    "transaction_isolation": _KEPT_WITH_TRANSACTION,
    "default_transaction_isolation": _KEPT_WITH_TRANSACTION,
    "transaction_deferrable": _KEPT_WITH_TRANSACTION,
}


def canonical_setting(name: str) -> str:
    """The name Postgres resolves ``name`` to: lower case, old aliases mapped."""
    name = name.strip().lower()
    return SETTING_ALIASES.get(name, name)


def setting_protected(name: str, protected: frozenset[str] = PROTECTED_SETTINGS) -> bool:
    """Whether a canonical setting name may not be SET, RESET or set_config-ed."""
    return name in protected or name.startswith(PROTECTED_PREFIXES)


def known_schemas(schemas: Schemas = DEFAULT_SCHEMAS) -> frozenset[str]:
    """What ``search_path`` may list on a server with ``schemas``: its tables and views,
    and Postgres's own. Not its functions' shells: an unqualified call must not reach one
    past the gate."""
    return frozenset({"pg_catalog", schemas.served, "public", schemas.system,
                      "information_schema", "$user"})


def one_way(name: str, value: str, schemas: Schemas = DEFAULT_SCHEMAS) -> str | None:
    """Why ``value`` may not be set for ``name`` on a server with ``schemas``; None when
    it may (or no rule narrows it)."""
    if name == "search_path":
        return _search_path(value, known_schemas(schemas))
    rule = _ONE_WAY_RULES.get(name)
    return rule(name, value) if rule else None


def _search_path(value: str, known: frozenset[str]) -> str | None:
    schemas = [s.strip().strip('"') for s in value.split(",") if s.strip()]
    unknown = [s for s in schemas if s not in known]
    if unknown:
        return (f'schema "{unknown[0]}" may not be on search_path (it may list '
                f"{', '.join(sorted(known))})")
    if "pg_catalog" in schemas and schemas[0] != "pg_catalog":
        return "pg_catalog must come first on search_path"
    return None


def _only_on(name: str, value: str) -> str | None:
    return None if value.strip().lower() in TRUE_WORDS else f"{name} may only be turned on"


def _stays_on(name: str, value: str) -> str | None:
    return None if value.strip().lower() in TRUE_WORDS else f"{name} must stay on"


def _stays_utf8(name: str, value: str) -> str | None:
    return None if value.strip().lower() in _UTF8 else f"{name} must stay UTF8"


_ONE_WAY_RULES: dict[str, Callable[[str, str], str | None]] = {
    "default_transaction_read_only": _only_on,
    "transaction_read_only": _only_on,
    "standard_conforming_strings": _stays_on,
    "client_encoding": _stays_utf8,
}
ONE_WAY_SETTINGS = frozenset({"search_path", *_ONE_WAY_RULES})


# -- what a refusal says -----------------------------------------------------------------


def refuse_set(name: str, why: str | None = None) -> NoReturn:
    hint = ("This setting takes only values that narrow what a statement can do: choose "
            "one the message allows, or leave it as it is." if name in ONE_WAY_SETTINGS
            else "This setting is fixed by the server for every session; leave it as it is.")
    raise errors.InsufficientPrivilege(
        f'permission denied to set parameter "{name}"' + (f": {why}" if why else ""), hint=hint)


def refuse_set_config(name: str) -> NoReturn:
    """``set_config`` of one of ``SESSION_SETTINGS``: SET reaches the session, this would not."""
    reason, hint = SESSION_SETTINGS[name]
    raise errors.FeatureNotSupported(
        f'set_config() of "{name}" is not supported: {reason}', hint=hint)


def refuse_secret(name: str) -> NoReturn:
    raise errors.InsufficientPrivilege(
        f'permission denied to read parameter "{name}": it holds a path, command or '
        "connection string of the server",
        hint="SHOW another setting; resources never need this one.")
