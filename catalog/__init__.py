"""The sidecar Postgres, where resources become real tables.

``Catalog`` owns the connection pool and the shell tables; the sidecar classes
start (or find) the Postgres it runs on. Nothing here knows the wire.
"""

from ._catalog import (
    INSERT_SCHEMA,
    SERVED_SCHEMA,
    SYSTEM_SCHEMA,
    Catalog,
    qualified,
    quote_ident,
    shell_ddl,
)
from ._fns import EVALUATING, FN_SCHEMA, fn_ddl, fns_ddl
from ._rows import populate_sql, rows_params, rows_to_json
from ._sidecar import EmbeddedSidecar, ExternalSidecar, Sidecar, SidecarBusy, default_data_dir

__all__ = [
    "EVALUATING",
    "FN_SCHEMA",
    "INSERT_SCHEMA",
    "SERVED_SCHEMA",
    "SYSTEM_SCHEMA",
    "Catalog",
    "EmbeddedSidecar",
    "ExternalSidecar",
    "Sidecar",
    "SidecarBusy",
    "default_data_dir",
    "fn_ddl",
    "fns_ddl",
    "populate_sql",
    "qualified",
    "quote_ident",
    "rows_params",
    "rows_to_json",
    "shell_ddl",
]
