"""The sidecar Postgres, where resources become real tables.

``Catalog`` owns the shell tables; the sidecar classes start (or find) the
Postgres it runs on; ``Pool`` and ``SidecarConnection`` run statements on it
over the project's own client codec (``glove_scratchpad.wire``); ``Audit``
records tool calls there, and ``Journal`` every write a COMMIT makes. Nothing
here knows the server or its clients.
"""

from glove_scratchpad.names import DEFAULT_NAME, DEFAULT_SCHEMAS, Schemas, check_name, schema_names

from ._access import reconnecting, translate, unreachable
from ._approvals import APPROVAL_COLUMNS, ApprovalStore
from ._audit import AUDIT_COLUMNS, Audit
from ._cache import CACHE_LOCK, CacheStore, cache_schema
from ._catalog import (
    INSERT_SCHEMA,
    SERVED_SCHEMA,
    SYSTEM_SCHEMA,
    Catalog,
    NameInUse,
    NotOurs,
    qualified,
    quote_ident,
    shell_ddl,
)
from ._claim import INSTANCE_LOCK, LIVE_LOCK
from ._client import SidecarConnection, Step, StepResult
from ._copy import CopyChannel, copy_in, copy_out
from ._fns import EVALUATING, FN_SCHEMA, fn_ddl, fns_ddl
from ._journal import (
    FINAL_STATUSES,
    JOURNAL_COLUMNS,
    LOST_POLL,
    Journal,
    JournalEntry,
    as_json,
)
from ._pool import Pool
from ._rows import populate_sql, rows_params, rows_to_json
from ._search import SYNONYMS, name_words
from ._sidecar import EmbeddedSidecar, ExternalSidecar, Sidecar, SidecarBusy, default_data_dir
from ._values import decode_row, decode_value, encode_param, result_format
from ._views import CURRENT as CURRENT_VIEW_SOURCE
from ._views import (
    SYSTEM_VIEWS,
    ViewSource,
    column_line,
    resource_filters,
    resource_group,
    resource_row,
    short_description,
)

__all__ = [
    "APPROVAL_COLUMNS",
    "AUDIT_COLUMNS",
    "CACHE_LOCK",
    "CURRENT_VIEW_SOURCE",
    "DEFAULT_NAME",
    "DEFAULT_SCHEMAS",
    "EVALUATING",
    "FINAL_STATUSES",
    "FN_SCHEMA",
    "INSERT_SCHEMA",
    "INSTANCE_LOCK",
    "JOURNAL_COLUMNS",
    "LIVE_LOCK",
    "LOST_POLL",
    "SERVED_SCHEMA",
    "SYNONYMS",
    "SYSTEM_SCHEMA",
    "SYSTEM_VIEWS",
    "ApprovalStore",
    "Audit",
    "CacheStore",
    "Catalog",
    "CopyChannel",
    "EmbeddedSidecar",
    "ExternalSidecar",
    "Journal",
    "JournalEntry",
    "NameInUse",
    "NotOurs",
    "Pool",
    "Schemas",
    "Sidecar",
    "SidecarBusy",
    "SidecarConnection",
    "Step",
    "StepResult",
    "ViewSource",
    "as_json",
    "cache_schema",
    "check_name",
    "column_line",
    "copy_in",
    "copy_out",
    "decode_row",
    "decode_value",
    "default_data_dir",
    "encode_param",
    "fn_ddl",
    "fns_ddl",
    "name_words",
    "populate_sql",
    "qualified",
    "quote_ident",
    "reconnecting",
    "resource_filters",
    "resource_group",
    "resource_row",
    "result_format",
    "rows_params",
    "rows_to_json",
    "schema_names",
    "shell_ddl",
    "short_description",
    "translate",
    "unreachable",
]
