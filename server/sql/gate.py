"""The gate: layer 1 of the sandbox. A pglast tree in; a refusal, or nothing. No I/O.

Every statement a client sends is judged here, on its parse tree, before any
tool runs or anything reaches the sidecar. Quoting, dollar quotes, ``U&``
escapes and comments are resolved by the parser, so no spelling of a name
escapes these rules. Each refusal is an ``errors.SqlError`` with a real
SQLSTATE and a HINT naming the next step.

Rules:
- Statement kinds are allowlisted: SELECT (VALUES, set operations), INSERT,
  UPDATE, DELETE, EXPLAIN (not ANALYZE), the transaction statements (not
  COMMIT/ROLLBACK PREPARED), SET/RESET/SHOW but of protected settings, DISCARD,
  DEALLOCATE, CLOSE, UNLISTEN, PREPARE (of a statement that passes) and
  EXECUTE. Everything else is refused, each kind with its own message: DDL,
  COPY, DO, CALL, LOCK, LISTEN/NOTIFY, cursors, maintenance, roles and
  privileges, ALTER SYSTEM, MERGE; and SELECT … INTO and FOR UPDATE/SHARE.
- A relation, wherever it is named (FROM, JOIN, LATERAL, subqueries, CTE
  bodies, the target and USING/FROM of a write), is one of: a resource
  (``is_resource(schema, name)``); a CTE visible at that point (an unqualified
  name: earlier siblings of a plain WITH, every sibling of WITH RECURSIVE, the
  CTEs of enclosing queries); a relation of ``information_schema`` (but its
  user-mapping and foreign-server-option views); or one of the ``pg_catalog``
  relations in ``CATALOG_RELATIONS``, which psql, drivers and ORMs read to
  describe the schema. An unqualified ``pg_…`` name is a ``pg_catalog`` one,
  as Postgres resolves it. Only resources may be written.
  ``pg_settings`` is readable only by a top-level SELECT of plain columns whose
  WHERE is exactly ``name = '…'`` (or ``name IN ('…', …)``) naming no secret
  setting: what pgjdbc sends; nothing else of it can be evaluated.
- A function, wherever it is called (including FROM, ORDER BY, attribute
  notation ``x.f`` and ``(expr).f``, which Postgres reads as ``f(x)``), is one
  of ``FUNCTIONS``: built-in scalar, aggregate, window, string, JSON, array,
  range, date/time, math and catalog functions. Sequences, advisory locks,
  transaction ids, large objects, file and admin functions, sleeping, SQL run
  from strings and other connections are refused each with its own message;
  any other name as undefined (42883). ``set_config`` and ``current_setting``
  need a literal setting name, checked like SET and SHOW.
- Settings: ``PROTECTED_SETTINGS`` (identity, server paths, memory limits,
  anything that weakens the sandbox) cannot be SET, RESET or ``set_config``-ed;
  ``SECRET_SETTINGS`` (file paths, commands, connection strings) cannot be
  read with SHOW, ``current_setting`` or ``pg_settings``; SHOW ALL is refused.
  A few settings take values that only narrow: ``search_path`` lists only the
  schemas the gate knows, with ``pg_catalog`` first if at all;
  ``default_transaction_read_only`` and ``transaction_read_only`` may only be
  turned on; ``standard_conforming_strings`` stays on and ``client_encoding``
  stays UTF8, because the gate parses with those rules and the sidecar must
  read the same text the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, NoReturn

from pglast import ast, enums

from glove_scratchpad import errors
from glove_scratchpad.catalog import FN_SCHEMA

__all__ = [
    "CATALOG_RELATIONS",
    "FUNCTIONS",
    "PROTECTED_SETTINGS",
    "SECRET_SETTINGS",
    "check",
]

IsResource = Callable[[str | None, str], bool]
IsFunction = Callable[[str, str], bool]  # (schema, name): a served function (fn.<name>)

DISCOVER = ("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
            "lists the resources.")

# -- relations -------------------------------------------------------------------------

# pg_catalog relations that psql (\d, \dt, \d+, \df, \dn, \l, \du, \dT …), asyncpg's
# and psycopg's type introspection, SQLAlchemy's reflection and pgjdbc's
# DatabaseMetaData read. None holds credentials, file paths, other sessions'
# activity or sampled row values.
CATALOG_RELATIONS = frozenset({
    # tables
    "pg_aggregate", "pg_am", "pg_amop", "pg_amproc", "pg_attrdef", "pg_attribute",
    "pg_auth_members", "pg_cast", "pg_class", "pg_collation", "pg_constraint",
    "pg_conversion", "pg_database", "pg_default_acl", "pg_depend", "pg_description",
    "pg_enum", "pg_event_trigger", "pg_extension", "pg_foreign_data_wrapper",
    "pg_foreign_table", "pg_index", "pg_inherits", "pg_init_privs", "pg_language",
    "pg_namespace", "pg_opclass", "pg_operator", "pg_opfamily", "pg_partitioned_table",
    "pg_policy", "pg_proc", "pg_publication", "pg_publication_namespace",
    "pg_publication_rel", "pg_range", "pg_rewrite", "pg_sequence", "pg_shdescription",
    "pg_statistic_ext", "pg_tablespace", "pg_transform", "pg_trigger", "pg_ts_config",
    "pg_ts_config_map", "pg_ts_dict", "pg_ts_parser", "pg_ts_template", "pg_type",
    # views
    "pg_available_extension_versions", "pg_available_extensions", "pg_indexes",
    "pg_matviews", "pg_policies", "pg_publication_tables", "pg_roles", "pg_rules",
    "pg_tables", "pg_timezone_abbrevs", "pg_timezone_names", "pg_user", "pg_views",
})

# Why some pg_catalog relations are refused, by name or name prefix (the first match wins).
_RELATION_REFUSALS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("pg_authid", "pg_shadow", "pg_user_mapping", "pg_user_mappings"),
     "it holds role credentials"),
    (("pg_settings",),
     "it shows server settings and the paths of the server's files"),
    (("pg_file_settings", "pg_hba_file_rules", "pg_ident_file_mappings", "pg_config",
      "pg_db_role_setting"),
     "it shows the server's configuration files"),
    (("pg_stat_", "pg_statio_", "pg_locks", "pg_prepared_xacts", "pg_prepared_statements",
      "pg_cursors", "pg_backend_memory_contexts", "pg_shmem_allocations", "pg_aios",
      "pg_wait_events"),
     "it shows other sessions and the server's internals"),
    (("pg_statistic", "pg_stats"),
     "column statistics hold sampled row values"),
    (("pg_largeobject",),
     "large objects are not supported"),
    (("pg_replication_", "pg_subscription", "pg_foreign_server"),
     "it shows connection strings to other servers"),
    (("pg_sequences",),
     "sequences are not supported"),
)

# information_schema views that show user-mapping options (passwords) and server options.
_INFO_SCHEMA_REFUSED = frozenset({
    "_pg_user_mappings", "user_mappings", "user_mapping_options", "_pg_foreign_servers",
    "foreign_server_options",
})

# -- functions -------------------------------------------------------------------------

_MATH = """
abs acos acosd acosh asin asind asinh atan atan2 atan2d atand atanh cbrt ceil ceiling cos
cosd cosh cot cotd degrees div erf erfc exp factorial floor gamma gcd lcm lgamma ln log log10
min_scale mod pi pow power radians random random_normal round scale sign sin sind sinh sqrt
tan tand tanh trim_scale trunc width_bucket
"""
_STRING = """
ascii bit_count bit_length btrim casefold char_length character_length chr concat concat_ws
convert convert_from convert_to crc32 crc32c decode encode format get_bit get_byte initcap
is_normalized left length like_escape lower lpad ltrim md5 normalize octet_length overlay
parse_ident position quote_ident quote_literal quote_nullable regexp_count regexp_instr
regexp_like regexp_match regexp_matches regexp_replace regexp_split_to_array
regexp_split_to_table regexp_substr repeat replace reverse right rpad rtrim set_bit set_byte
sha224 sha256 sha384 sha512 similar_escape similar_to_escape split_part starts_with
string_to_array string_to_table strpos substr substring to_ascii to_bin to_hex to_oct
translate unicode_assigned unicode_version unistr upper
"""
_TEXT_SEARCH = """
array_to_tsvector get_current_ts_config json_to_tsvector jsonb_to_tsvector numnode
phraseto_tsquery plainto_tsquery querytree setweight strip to_tsquery to_tsvector ts_delete
ts_filter ts_headline ts_lexize ts_rank ts_rank_cd tsquery_phrase tsvector_to_array
websearch_to_tsquery
"""
_DATETIME = """
age clock_timestamp date_add date_bin date_part date_subtract date_trunc extract isfinite
justify_days justify_hours justify_interval make_date make_interval make_time make_timestamp
make_timestamptz now overlaps statement_timestamp timeofday timezone to_char to_date
to_number to_timestamp transaction_timestamp
"""
_JSON = """
array_to_json json_agg json_agg_strict json_array_element json_array_element_text
json_array_elements json_array_elements_text json_array_length json_build_array
json_build_object json_each json_each_text json_extract_path json_extract_path_text
json_object json_object_agg json_object_agg_strict json_object_agg_unique
json_object_agg_unique_strict json_object_field json_object_field_text json_object_keys
json_populate_record json_populate_recordset json_strip_nulls json_to_record
json_to_recordset json_typeof jsonb_agg jsonb_agg_strict jsonb_array_element
jsonb_array_element_text jsonb_array_elements jsonb_array_elements_text jsonb_array_length
jsonb_build_array jsonb_build_object jsonb_concat jsonb_contained jsonb_contains
jsonb_delete jsonb_delete_path jsonb_each jsonb_each_text jsonb_exists jsonb_exists_all
jsonb_exists_any jsonb_extract_path jsonb_extract_path_text jsonb_insert jsonb_object
jsonb_object_agg jsonb_object_agg_strict jsonb_object_agg_unique
jsonb_object_agg_unique_strict jsonb_object_field jsonb_object_field_text jsonb_object_keys
jsonb_path_exists jsonb_path_exists_tz jsonb_path_match jsonb_path_match_tz jsonb_path_query
jsonb_path_query_array jsonb_path_query_array_tz jsonb_path_query_first
jsonb_path_query_first_tz jsonb_path_query_tz jsonb_populate_record
jsonb_populate_record_valid jsonb_populate_recordset jsonb_pretty jsonb_set jsonb_set_lax
jsonb_strip_nulls jsonb_to_record jsonb_to_recordset jsonb_typeof row_to_json to_json to_jsonb
"""
_ARRAY_RANGE = """
array_append array_cat array_dims array_fill array_length array_lower array_ndims
array_position array_positions array_prepend array_remove array_replace array_reverse
array_sample array_shuffle array_sort array_to_string array_upper cardinality
generate_series generate_subscripts trim_array unnest
datemultirange daterange int4multirange int4range int8multirange int8range isempty
lower_inc lower_inf multirange nummultirange numrange range_merge tsmultirange tsrange
tstzmultirange tstzrange upper_inc upper_inf
"""
_AGGREGATE_WINDOW = """
any_value array_agg avg bit_and bit_or bit_xor bool_and bool_or corr count covar_pop
covar_samp every max min mode percentile_cont percentile_disc range_agg range_intersect_agg
regr_avgx regr_avgy regr_count regr_intercept regr_r2 regr_slope regr_sxx regr_sxy regr_syy
stddev stddev_pop stddev_samp string_agg sum var_pop var_samp variance xmlagg
cume_dist dense_rank first_value lag last_value lead nth_value ntile percent_rank rank
row_number
"""
_TYPES = """
bit bool bpchar bytea char cidr date float4 float8 int2 int4 int8 interval macaddr
macaddr8 money name numeric oid text time timestamp timestamptz timetz varbit varchar xml
gen_random_uuid uuidv4 uuidv7 uuid_extract_timestamp uuid_extract_version
num_nonnulls num_nulls pg_typeof pg_column_size pg_column_compression pg_collation_for
pg_input_is_valid pg_input_error_info pg_size_bytes pg_size_pretty
"""
_NETWORK_GEOMETRY = """
abbrev broadcast family host hostmask inet_merge inet_same_family masklen netmask network
set_masklen macaddr8_set7bit
area bound_box box center circle diagonal diameter height isclosed isopen line lseg npoints
path pclose point polygon popen radius slope width
"""
_XML = """
xml_is_well_formed xml_is_well_formed_content xml_is_well_formed_document xmlcomment
xmlconcat2 xmlexists xmltext xmlvalidate xpath xpath_exists
"""
# What psql, drivers and ORMs call to describe the schema, and session information.
_CATALOG = """
acldefault aclexplode aclcontains makeaclitem array_in col_description current_database
current_schema current_schemas current_setting current_user format_type getdatabaseencoding
getpgusername has_any_column_privilege has_column_privilege has_database_privilege
has_foreign_data_wrapper_privilege has_function_privilege has_language_privilege
has_parameter_privilege has_schema_privilege has_sequence_privilege has_server_privilege
has_table_privilege has_tablespace_privilege has_type_privilege obj_description
pg_advisory_unlock_all pg_available_extension_versions pg_available_extensions pg_basetype
pg_char_to_encoding pg_client_encoding
pg_collation_is_visible pg_column_is_updatable pg_conversion_is_visible pg_database_size
pg_describe_object pg_encoding_max_length pg_encoding_to_char pg_function_is_visible
pg_get_acl pg_get_catalog_foreign_keys pg_get_constraintdef pg_get_expr
pg_get_function_arg_default pg_get_function_arguments pg_get_function_identity_arguments
pg_get_function_result pg_get_function_sqlbody pg_get_functiondef pg_get_indexdef
pg_get_keywords pg_get_object_address pg_get_partition_constraintdef pg_get_partkeydef
pg_get_publication_tables pg_get_replica_identity_index pg_get_ruledef pg_get_serial_sequence
pg_get_statisticsobjdef pg_get_statisticsobjdef_columns pg_get_statisticsobjdef_expressions
pg_get_triggerdef pg_get_userbyid pg_get_viewdef pg_has_role pg_identify_object
pg_identify_object_as_address pg_index_column_has_property pg_index_has_property
pg_indexam_has_property pg_indexes_size pg_is_other_temp_schema pg_my_temp_schema
pg_opclass_is_visible pg_operator_is_visible pg_opfamily_is_visible pg_options_to_table
pg_partition_ancestors pg_partition_root pg_partition_tree pg_relation_is_publishable
pg_relation_is_updatable pg_relation_size pg_statistics_obj_is_visible pg_table_is_visible
pg_table_size pg_total_relation_size pg_ts_config_is_visible pg_ts_dict_is_visible
pg_ts_parser_is_visible pg_ts_template_is_visible pg_type_is_visible regclass
row_security_active session_user set_config shobj_description system_user to_regclass
to_regcollation to_regnamespace to_regoper to_regoperator to_regproc to_regprocedure
to_regrole to_regtype to_regtypemod version
"""

FUNCTIONS = frozenset(" ".join((
    _MATH, _STRING, _TEXT_SEARCH, _DATETIME, _JSON, _ARRAY_RANGE, _AGGREGATE_WINDOW, _TYPES,
    _NETWORK_GEOMETRY, _XML, _CATALOG,
)).split())

# information_schema's own helpers, which pgjdbc calls (``_pg_expandarray``).
_INFO_SCHEMA_FUNCTIONS = frozenset({
    "_pg_char_max_length", "_pg_char_octet_length", "_pg_datetime_precision",
    "_pg_expandarray", "_pg_index_position", "_pg_interval_type", "_pg_numeric_precision",
    "_pg_numeric_precision_radix", "_pg_numeric_scale", "_pg_truetypid", "_pg_truetypmod",
})


class _Refusal:
    """A class of refused functions: its names and name prefixes, and how it is refused."""

    __slots__ = ("error", "hint", "names", "prefixes", "reason")

    def __init__(self, names: str, prefixes: str, error: type[errors.SqlError], reason: str,
                 hint: str) -> None:
        self.names = frozenset(names.split())
        self.prefixes = tuple(prefixes.split())
        self.error, self.reason, self.hint = error, reason, hint

    def matches(self, name: str) -> bool:
        return name in self.names or name.startswith(self.prefixes)


_FUNCTION_REFUSALS = (
    _Refusal("nextval currval setval lastval pg_sequence_last_value pg_get_sequence_data", "",
             errors.FeatureNotSupported, "sequences are not supported",
             "Let the tool assign ids (INSERT … RETURNING), or use gen_random_uuid() "
             "or row_number() OVER ()."),
    _Refusal("", "pg_advisory_ pg_try_advisory_", errors.FeatureNotSupported,
             "advisory locks are not supported (each statement runs on its own pooled "
             "connection)",
             "Drop the lock. Inside BEGIN … COMMIT writes are staged, and COMMIT fires them "
             "in order."),
    _Refusal("pg_current_snapshot pg_visible_in_snapshot pg_last_committed_xact "
             "pg_get_multixact_members mxid_age",
             "txid_ pg_current_xact_id pg_snapshot_ pg_xact_", errors.FeatureNotSupported,
             "transaction ids are not exposed (transactions here are virtual)",
             "Use now() or clock_timestamp() to mark time; scratchpad.staged lists the writes "
             "of the open transaction."),
    _Refusal("loread lowrite", "lo_", errors.FeatureNotSupported,
             "large objects are not supported",
             "Keep binary data in a bytea or text column of a resource."),
    _Refusal("pg_sleep pg_sleep_for pg_sleep_until", "", errors.FeatureNotSupported,
             "a statement may not sleep (it would hold a connection)",
             "Run the statement again later instead."),
    _Refusal("query_to_xml query_to_xml_and_xmlschema query_to_xmlschema cursor_to_xml "
             "cursor_to_xmlschema ts_stat ts_rewrite",
             "table_to_xml schema_to_xml database_to_xml", errors.InsufficientPrivilege,
             "it runs SQL given as text, or reads a table by name, which the gate cannot check",
             "Write the query itself; xmlelement(), xmlforest(), json_agg() or to_jsonb() "
             "shape its rows."),
    _Refusal("", "dblink postgres_fdw", errors.InsufficientPrivilege,
             "it connects to other databases",
             "Data comes from resources. " + DISCOVER),
    _Refusal("pg_notify pg_listening_channels pg_notification_queue_usage", "",
             errors.FeatureNotSupported, "LISTEN and NOTIFY are not supported",
             "Poll a resource instead."),
    _Refusal("pg_read_file pg_read_binary_file pg_stat_file pg_file_write pg_file_rename "
             "pg_file_unlink pg_file_sync pg_logdir_ls pg_current_logfile pg_config "
             "pg_tablespace_location pg_relation_filepath pg_relation_filenode "
             "pg_filenode_relation pg_show_all_settings pg_show_all_file_settings "
             "pg_hba_file_rules pg_ident_file_mappings pg_settings_get_flags",
             "pg_ls_ pg_control_ pg_split_walfile_name pg_walfile_name",
             errors.InsufficientPrivilege,
             "it reads the server's files or configuration",
             "Data comes from resources. " + DISCOVER),
    _Refusal("pg_reload_conf pg_rotate_logfile pg_terminate_backend pg_cancel_backend "
             "pg_promote pg_switch_wal pg_create_restore_point pg_backup_start pg_backup_stop "
             "pg_export_snapshot pg_import_system_collations pg_nextoid pg_log_standby_snapshot "
             "pg_log_backend_memory_contexts pg_sync_replication_slots "
             "pg_stop_making_pinned_objects "
             "brin_summarize_new_values brin_summarize_range brin_desummarize_range "
             "gin_clean_pending_list amvalidate currtid2 pg_backend_pid pg_blocking_pids "
             "pg_safe_snapshot_blocking_pids pg_isolation_test_session_is_blocked pg_lock_status "
             "pg_cursor pg_prepared_statement pg_prepared_xact pg_get_backend_memory_contexts "
             "pg_get_shmem_allocations pg_get_shmem_allocations_numa pg_get_aios "
             "pg_get_loaded_modules pg_get_wait_events pg_conf_load_time "
             "pg_postmaster_start_time inet_client_addr inet_client_port inet_server_addr "
             "inet_server_port current_query pg_trigger_depth setseed pg_jit_available "
             "pg_get_replication_slots pg_is_in_recovery pg_is_wal_replay_paused "
             "fmgr_c_validator fmgr_internal_validator fmgr_sql_validator plpgsql_validator "
             "plpgsql_inline_handler plpgsql_call_handler",
             "pg_stat_ pg_logical_ pg_replication_ pg_create_ pg_drop_replication "
             "pg_copy_ pg_wal_ pg_current_wal pg_last_wal pg_last_xact pg_get_wal "
             "pg_available_wal binary_upgrade_ pg_restore_ pg_clear_ pg_tablespace_ pg_show_",
             errors.InsufficientPrivilege,
             "it administers the server or shows other sessions",
             "This database answers queries over resources. " + DISCOVER),
)

# Functions whose arguments are checked (below); attribute notation (``x.f``) cannot be.
_CHECKED_FUNCTIONS = frozenset({"set_config", "current_setting"})

# -- settings --------------------------------------------------------------------------

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
_PROTECTED_PREFIXES = ("log_", "debug_", "trace_", "syslog_", "ssl", "archive_", "recovery_",
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

# Settings that may be changed only to values that narrow what a statement can do.
_KNOWN_SCHEMAS = ("pg_catalog", "public", "scratchpad", "information_schema", "$user")
_TRUE = frozenset({"on", "true", "yes", "1", "t", "y", "tr", "tru", "ye"})
_UTF8 = frozenset({"utf8", "utf-8", "unicode"})


def _one_way(name: str, value: str) -> str | None:
    """Why ``value`` may not be set for a one-way setting; None when it may."""
    v = value.strip().lower()
    if name == "search_path":
        schemas = [s.strip().strip('"') for s in value.split(",") if s.strip()]
        unknown = [s for s in schemas if s not in _KNOWN_SCHEMAS]
        if unknown:
            return f'schema "{unknown[0]}" may not be on search_path'
        if "pg_catalog" in schemas and schemas[0] != "pg_catalog":
            return "pg_catalog must come first on search_path"
        return None
    if name in ("default_transaction_read_only", "transaction_read_only"):
        return None if v in _TRUE else f"{name} may only be turned on"
    if name == "standard_conforming_strings":
        return None if v in _TRUE else "standard_conforming_strings must stay on"
    if name == "client_encoding":
        return None if v in _UTF8 else "client_encoding must stay UTF8"
    return None


_ONE_WAY = frozenset({"search_path", "default_transaction_read_only", "transaction_read_only",
                      "standard_conforming_strings", "client_encoding"})

# -- statements ------------------------------------------------------------------------

_ALLOWED = (ast.SelectStmt, ast.InsertStmt, ast.UpdateStmt, ast.DeleteStmt, ast.ExplainStmt,
            ast.TransactionStmt, ast.VariableSetStmt, ast.VariableShowStmt, ast.DiscardStmt,
            ast.DeallocateStmt, ast.ClosePortalStmt, ast.UnlistenStmt, ast.PrepareStmt,
            ast.ExecuteStmt)

_DDL_HINT = ("The tables here are the server's resources; use a CTE (WITH name AS (…)) or a "
             "subquery for intermediate results. " + DISCOVER)

_NAMES = {
    "CreateStmt": "CREATE TABLE", "IndexStmt": "CREATE INDEX", "ViewStmt": "CREATE VIEW",
    "CommentStmt": "COMMENT ON", "SecLabelStmt": "SECURITY LABEL", "TruncateStmt": "TRUNCATE",
    "RuleStmt": "CREATE RULE", "CreateTrigStmt": "CREATE TRIGGER",
    "CreateSeqStmt": "CREATE SEQUENCE", "AlterSeqStmt": "ALTER SEQUENCE",
    "CreatedbStmt": "CREATE DATABASE", "DropdbStmt": "DROP DATABASE",
    "CompositeTypeStmt": "CREATE TYPE", "CreateEnumStmt": "CREATE TYPE",
    "CreateRangeStmt": "CREATE TYPE", "CreatePLangStmt": "CREATE LANGUAGE",
    "CreateEventTrigStmt": "CREATE EVENT TRIGGER", "AlterEventTrigStmt": "ALTER EVENT TRIGGER",
    "CreateFdwStmt": "CREATE FOREIGN DATA WRAPPER", "AlterFdwStmt": "ALTER FOREIGN DATA WRAPPER",
    "CreateAmStmt": "CREATE ACCESS METHOD", "CreateStatsStmt": "CREATE STATISTICS",
    "AlterStatsStmt": "ALTER STATISTICS", "CreateTableSpaceStmt": "CREATE TABLESPACE",
    "DropTableSpaceStmt": "DROP TABLESPACE", "RenameStmt": "ALTER … RENAME",
    "AlterOwnerStmt": "ALTER … OWNER TO", "AlterObjectSchemaStmt": "ALTER … SET SCHEMA",
    "AlterObjectDependsStmt": "ALTER … DEPENDS ON", "ImportForeignSchemaStmt":
    "IMPORT FOREIGN SCHEMA", "ReplicaIdentityStmt": "ALTER TABLE … REPLICA IDENTITY",
    "AlterTSConfigurationStmt": "ALTER TEXT SEARCH CONFIGURATION",
    "AlterTSDictionaryStmt": "ALTER TEXT SEARCH DICTIONARY",
    "RefreshMatViewStmt": "REFRESH MATERIALIZED VIEW", "CopyStmt": "COPY", "DoStmt": "DO",
    "CallStmt": "CALL", "LockStmt": "LOCK", "ListenStmt": "LISTEN", "NotifyStmt": "NOTIFY",
    "ClusterStmt": "CLUSTER", "ReindexStmt": "REINDEX", "CheckPointStmt": "CHECKPOINT",
    "LoadStmt": "LOAD", "AlterSystemStmt": "ALTER SYSTEM", "GrantStmt": "GRANT",
    "GrantRoleStmt": "GRANT", "CreateRoleStmt": "CREATE ROLE", "AlterRoleStmt": "ALTER ROLE",
    "AlterRoleSetStmt": "ALTER ROLE … SET", "DropRoleStmt": "DROP ROLE",
    "ReassignOwnedStmt": "REASSIGN OWNED", "DropOwnedStmt": "DROP OWNED",
    "AlterDefaultPrivilegesStmt": "ALTER DEFAULT PRIVILEGES", "MergeStmt": "MERGE",
    "DeclareCursorStmt": "DECLARE CURSOR", "FetchStmt": "FETCH",
    "ConstraintsSetStmt": "SET CONSTRAINTS", "AlterDatabaseSetStmt": "ALTER DATABASE … SET",
    "AlterTableMoveAllStmt": "ALTER TABLE … SET TABLESPACE",
    "AlterTableSpaceOptionsStmt": "ALTER TABLESPACE", "DefineStmt": "CREATE",
}
_DDL_PREFIXES = ("Create", "Alter", "Drop", "Define", "Rename", "Comment", "SecLabel",
                 "Truncate", "Index", "View", "Rule", "CompositeType", "ImportForeignSchema",
                 "ReplicaIdentity", "RefreshMatView")
_ROLES = frozenset({"GrantStmt", "GrantRoleStmt", "CreateRoleStmt", "AlterRoleStmt",
                    "AlterRoleSetStmt", "DropRoleStmt", "ReassignOwnedStmt", "DropOwnedStmt",
                    "AlterDefaultPrivilegesStmt"})
_MAINTENANCE = frozenset({"VacuumStmt", "ClusterStmt", "ReindexStmt", "CheckPointStmt",
                          "LoadStmt"})


def _object_word(objtype: Any) -> str:
    return objtype.name.removeprefix("OBJECT_").replace("_", " ") if objtype is not None else ""


def _statement_name(node: Any) -> str:
    kind = type(node).__name__
    if isinstance(node, ast.DropStmt):
        return f"DROP {_object_word(node.removeType)}"
    if isinstance(node, ast.AlterTableStmt):
        return f"ALTER {_object_word(node.objtype)}"
    if isinstance(node, ast.CreateTableAsStmt):
        return ("CREATE MATERIALIZED VIEW" if node.objtype == enums.ObjectType.OBJECT_MATVIEW
                else "CREATE TABLE AS")
    if isinstance(node, ast.CreateFunctionStmt):
        return "CREATE PROCEDURE" if node.is_procedure else "CREATE FUNCTION"
    if isinstance(node, ast.DefineStmt):
        return f"CREATE {_object_word(node.kind)}"
    if isinstance(node, ast.VacuumStmt):
        return "VACUUM" if node.is_vacuumcmd else "ANALYZE"
    if kind in _NAMES:
        return _NAMES[kind]
    words = "".join(" " + c if c.isupper() else c for c in kind.removesuffix("Stmt")).split()
    return " ".join(words).upper()


def _refuse_statement(node: Any) -> NoReturn:
    kind = type(node).__name__
    name = _statement_name(node)
    if isinstance(node, ast.CopyStmt):
        if node.filename is not None or node.is_program:
            raise errors.InsufficientPrivilege(
                "COPY to or from a file or program is not allowed",
                hint="Read with SELECT and write with INSERT; the client holds the data.")
        raise errors.FeatureNotSupported(
            "COPY is not supported", hint="Read with SELECT and write with INSERT … VALUES.")
    if isinstance(node, ast.DoStmt | ast.CallStmt):
        raise errors.InsufficientPrivilege(
            f"{name} is not allowed: it runs procedural code the gate cannot check",
            hint="Write it as one SQL statement: CTEs, CASE and subqueries go a long way.")
    if isinstance(node, ast.ListenStmt | ast.NotifyStmt):
        raise errors.FeatureNotSupported(
            "LISTEN and NOTIFY are not supported", hint="Poll a resource instead.")
    if isinstance(node, ast.LockStmt):
        raise errors.FeatureNotSupported(
            "LOCK is not supported: resources have no locks",
            hint="Drop the LOCK. Inside BEGIN … COMMIT writes are staged, and COMMIT fires "
            "them in order.")
    if isinstance(node, ast.DeclareCursorStmt | ast.FetchStmt):
        raise errors.FeatureNotSupported(
            "cursors are not supported", hint="Page with LIMIT and OFFSET in a plain SELECT.")
    if isinstance(node, ast.MergeStmt):
        raise errors.FeatureNotSupported(
            "MERGE is not supported", hint="Use INSERT, UPDATE and DELETE on the resource.")
    if isinstance(node, ast.AlterSystemStmt):
        raise errors.InsufficientPrivilege(
            "ALTER SYSTEM is not allowed: the server's configuration is fixed",
            hint="SET a setting for this session instead, where it is allowed.")
    if kind in _ROLES:
        raise errors.InsufficientPrivilege(
            f"{name} is not allowed: roles and privileges are fixed by the server",
            hint="Which resources you may read and write is set by the server. " + DISCOVER)
    if kind in _MAINTENANCE:
        raise errors.InsufficientPrivilege(
            f"{name} is not allowed: the server maintains its own database",
            hint="Nothing to do: resources hold no rows between statements.")
    if kind.startswith(_DDL_PREFIXES) or kind in ("CreatedbStmt", "DropdbStmt"):
        raise errors.InsufficientPrivilege(
            f"{name} is not allowed: the schema is defined by the server's resources",
            hint=_DDL_HINT)
    raise errors.InsufficientPrivilege(
        f"{name} is not allowed here",
        hint="This database answers SELECT, INSERT, UPDATE, DELETE, EXPLAIN, "
        "BEGIN/COMMIT/ROLLBACK, SET and SHOW. " + DISCOVER)


# -- the walk --------------------------------------------------------------------------


class _Scope:
    """The CTE names visible at one point of a statement."""

    __slots__ = ("ctes", "parent")

    def __init__(self, parent: _Scope | None, ctes: Iterable[str] = ()) -> None:
        self.parent = parent
        self.ctes = frozenset(ctes)

    def has_cte(self, name: str) -> bool:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.ctes:
                return True
            scope = scope.parent
        return False


def _names(strings: Any) -> list[str]:
    return [str(s.sval) for s in strings or () if isinstance(s, ast.String)]


def _literal(node: Any) -> str | None:
    """The text of a string (or number) literal, through casts; None for anything else."""
    while isinstance(node, ast.TypeCast):
        node = node.arg
    if isinstance(node, ast.A_Const) and not node.isnull:
        val = node.val
        if isinstance(val, ast.String):
            return val.sval
        if isinstance(val, ast.Integer):
            return str(val.ival)
        if isinstance(val, ast.Float):
            return val.fval
        if isinstance(val, ast.Boolean):
            return "on" if val.boolval else "off"
    return None


def _setting_protected(name: str, protected: frozenset[str]) -> bool:
    return name in protected or name.startswith(_PROTECTED_PREFIXES)


def _refuse_set(name: str, why: str | None = None) -> NoReturn:
    raise errors.InsufficientPrivilege(
        f'permission denied to set parameter "{name}"' + (f": {why}" if why else ""),
        hint="This setting is fixed by the server for every session; leave it as it is.")


def _refuse_secret(name: str) -> NoReturn:
    raise errors.InsufficientPrivilege(
        f'permission denied to read parameter "{name}": it holds a path, command or '
        "connection string of the server",
        hint="SHOW another setting; resources never need this one.")


class _Gate:
    def __init__(self, is_resource: IsResource, protected: frozenset[str],
                 secret: frozenset[str], params: Sequence[str | bytes | None] | None,
                 is_function: IsFunction | None = None) -> None:
        self.is_resource = is_resource
        self.is_function = is_function or (lambda schema, name: False)
        self.protected = protected
        self.secret = secret
        self.params = params
        self.settings_read: Any = None  # the one pg_settings RangeVar a pinned read may name

    # -- statements -----------------------------------------------------------------

    def statement(self, node: Any, top: bool = True) -> None:
        if not isinstance(node, _ALLOWED):
            _refuse_statement(node)
        root = _Scope(None)
        if isinstance(node, ast.SelectStmt):
            if top:
                self.settings_read = _pinned_settings_read(node, self.secret)
            self.select(node, root)
        elif isinstance(node, ast.InsertStmt | ast.UpdateStmt | ast.DeleteStmt):
            self.write(node, root)
        elif isinstance(node, ast.ExplainStmt):
            for opt in node.options or ():
                if opt.defname == "analyze":
                    raise errors.FeatureNotSupported(
                        "EXPLAIN ANALYZE is not supported: it would run the statement",
                        hint="Use EXPLAIN without ANALYZE to see the plan; it calls nothing.")
            self.statement(node.query, top)
        elif isinstance(node, ast.PrepareStmt):
            self.statement(node.query, top)
        elif isinstance(node, ast.ExecuteStmt):
            self.visit(node.params, root)
        elif isinstance(node, ast.TransactionStmt):
            k = enums.TransactionStmtKind
            if node.kind in (k.TRANS_STMT_COMMIT_PREPARED, k.TRANS_STMT_ROLLBACK_PREPARED):
                raise errors.FeatureNotSupported(
                    "two-phase commit is not supported: transactions here are virtual",
                    hint="COMMIT or ROLLBACK the open transaction instead.")
        elif isinstance(node, ast.VariableSetStmt):
            self.set(node)
        elif isinstance(node, ast.VariableShowStmt):
            name = str(node.name).lower()
            if name == "all":
                raise errors.InsufficientPrivilege(
                    "SHOW ALL is not allowed: some settings hold the server's file paths",
                    hint="SHOW one setting by name, e.g. SHOW TimeZone.")
            if name in self.secret:
                _refuse_secret(name)
        # DISCARD, DEALLOCATE, CLOSE and UNLISTEN name nothing to check.

    def set(self, node: Any) -> None:
        kind = node.kind
        k = enums.VariableSetKind
        if kind == k.VAR_RESET_ALL:
            return
        if kind == k.VAR_SET_MULTI:
            if node.name == "TRANSACTION SNAPSHOT":
                raise errors.FeatureNotSupported(
                    "SET TRANSACTION SNAPSHOT is not supported: transactions here are virtual",
                    hint="Drop it; each statement reads the resources afresh.")
            return  # SET TRANSACTION …, SET SESSION CHARACTERISTICS: kept by nothing
        name = node.name.lower()
        if name in _ONE_WAY:
            if kind in (k.VAR_SET_VALUE, k.VAR_SET_CURRENT) and node.args:
                texts = [_literal(a) for a in node.args]
                if any(t is None for t in texts):
                    _refuse_set(name, "its value must be a literal")
                why = _one_way(name, ", ".join(t for t in texts if t is not None))
                if why:
                    _refuse_set(name, why)
            return
        if _setting_protected(name, self.protected):
            _refuse_set(name)

    def write(self, node: Any, scope: _Scope) -> None:
        inner = self.with_clause(node.withClause, scope)
        try:
            self.target(node.relation)
        except errors.SqlError as exc:
            _locate(exc, node.relation)
            raise
        for slot in node.__slots__:
            if slot not in ("withClause", "relation"):
                self.visit(getattr(node, slot, None), inner)

    def select(self, node: Any, scope: _Scope) -> None:
        if node.intoClause is not None:
            raise errors.InsufficientPrivilege(
                "SELECT … INTO is not allowed: it creates a table",
                hint="Drop INTO …; use a CTE (WITH name AS (SELECT …)) for intermediate results.")
        if node.lockingClause:
            raise errors.FeatureNotSupported(
                "SELECT … FOR UPDATE/SHARE is not supported: resources have no row locks",
                hint="Drop the FOR UPDATE/SHARE clause.")
        inner = self.with_clause(node.withClause, scope)
        for slot in node.__slots__:
            if slot != "withClause":
                self.visit(getattr(node, slot, None), inner)

    def with_clause(self, clause: Any, scope: _Scope) -> _Scope:
        if clause is None:
            return scope
        names = [cte.ctename for cte in clause.ctes]
        for i, cte in enumerate(clause.ctes):
            # A plain WITH sees its earlier siblings; WITH RECURSIVE sees them all.
            visible = names if clause.recursive else names[:i]
            body_scope = _Scope(scope, visible)
            body = cte.ctequery
            if isinstance(body, ast.SelectStmt):
                self.select(body, body_scope)
            elif isinstance(body, ast.InsertStmt | ast.UpdateStmt | ast.DeleteStmt):
                self.write(body, body_scope)
            else:
                _refuse_statement(body)
            self.visit((cte.search_clause, cte.cycle_clause), body_scope)
        return _Scope(scope, names)

    # -- nodes ----------------------------------------------------------------------

    def visit(self, node: Any, scope: _Scope) -> None:
        if isinstance(node, tuple | list):
            for item in node:
                self.visit(item, scope)
            return
        if not isinstance(node, ast.Node):
            return
        n: Any = node  # pglast's field types are loose; read them as Any
        if isinstance(n, ast.SelectStmt):
            self.select(n, scope)
            return
        if isinstance(n, ast.InsertStmt | ast.UpdateStmt | ast.DeleteStmt):
            self.write(n, scope)
            return
        try:
            if isinstance(n, ast.RangeVar):
                self.relation(n, scope)
                return
            self.expression(n)
        except errors.SqlError as exc:
            _locate(exc, n)
            raise
        for slot in n.__slots__:
            self.visit(getattr(n, slot, None), scope)

    def expression(self, n: Any) -> None:
        """The node's own check: a function call, spelled or in attribute notation."""
        if isinstance(n, ast.FuncCall):
            self.function(n)
        elif isinstance(n, ast.ColumnRef):
            # x.f is f(x) when x has no column f (with 3 or 4 names, only the last).
            fields = n.fields or ()
            if len(fields) >= 2 and isinstance(fields[-1], ast.String):
                self.attribute(str(fields[-1].sval))
        elif isinstance(n, ast.A_Indirection):
            for name in _names(n.indirection):  # (expr).f is f(expr)
                self.attribute(name)
        elif isinstance(n, ast.RangeTableSample):
            method = _names(n.method)
            if method not in (["system"], ["bernoulli"], ["pg_catalog", "system"],
                              ["pg_catalog", "bernoulli"]):
                raise errors.UndefinedFunction(
                    f'tablesample method {".".join(method)} does not exist',
                    hint="Use TABLESAMPLE SYSTEM (percent) or BERNOULLI (percent).")
        elif type(n).__name__.endswith("Stmt"):
            _refuse_statement(n)  # no other statement nests in the ones allowed

    def relation(self, rv: Any, scope: _Scope) -> None:
        if rv is self.settings_read:
            return
        schema, name = rv.schemaname, rv.relname
        if rv.catalogname is not None:
            raise errors.FeatureNotSupported(
                f'cross-database references are not implemented: "{rv.catalogname}.'
                f'{schema}.{name}"', hint="Name the relation without its database.")
        if schema is None:
            if scope.has_cte(name) or name in CATALOG_RELATIONS:
                return
            if name.startswith("pg_"):
                _refuse_catalog(name)
            if self.is_resource(None, name):
                return
            _undefined_relation(name)
        if schema == "pg_catalog":
            if name not in CATALOG_RELATIONS:
                _refuse_catalog(name)
            return
        if schema == "information_schema":
            if name in _INFO_SCHEMA_REFUSED:
                raise errors.InsufficientPrivilege(
                    f'permission denied for view information_schema.{name}: it shows '
                    "connection options of other servers",
                    hint="Read information_schema.tables and .columns to describe resources.")
            return
        if self.is_resource(schema, name):
            return
        if schema.startswith("pg_"):
            _refuse_catalog(f"{schema}.{name}")
        _undefined_relation(f"{schema}.{name}")

    def target(self, rv: Any) -> None:
        """The relation a write changes: only a resource (Postgres never takes a CTE here)."""
        schema, name = rv.schemaname, rv.relname
        shown = name if schema is None else f"{schema}.{name}"
        if rv.catalogname is not None:
            self.relation(rv, _Scope(None))
        if (schema is None and name.startswith("pg_")) or schema == "information_schema" or (
                schema is not None and schema.startswith("pg_")):
            raise errors.InsufficientPrivilege(
                f"permission denied for relation {shown}: only resources can be written",
                hint=DISCOVER)
        if not self.is_resource(schema, name):
            _undefined_relation(shown)

    def function(self, fc: Any) -> None:
        parts = _names(fc.funcname)
        name = parts[-1]
        shown = ".".join(parts)
        schema = parts[-2] if len(parts) >= 2 else None
        if len(parts) > 2:
            raise errors.FeatureNotSupported(
                f"cross-database references are not implemented: {shown}",
                hint="Call the function without a database name.")
        if schema == "information_schema" and name in _INFO_SCHEMA_FUNCTIONS:
            return
        if schema == FN_SCHEMA or (schema is None and name not in FUNCTIONS
                                   and self.is_function(FN_SCHEMA, name)):
            _served_function(name, schema, self.is_function)
            return
        if schema not in (None, "pg_catalog"):
            _undefined_function(shown)
        _refuse_function(name)
        if name not in FUNCTIONS:
            _undefined_function(shown)
        if name in _CHECKED_FUNCTIONS:
            self.setting_function(name, fc)

    def attribute(self, name: str) -> None:
        """``x.name`` and ``(expr).name``: Postgres calls ``name(x)`` when x has no such column."""
        _refuse_function(name)
        if name in _CHECKED_FUNCTIONS or (name.startswith("pg_") and name not in FUNCTIONS):
            raise errors.InsufficientPrivilege(
                f'"{name}" cannot be used in attribute notation here',
                hint=f"Call it as {name}(…) with literal arguments, or rename the column.")

    def argument(self, node: Any) -> tuple[bool, str | None]:
        """(whether its value is known here, its text): a literal, or a ``$n`` with a value."""
        while isinstance(node, ast.TypeCast):
            node = node.arg
        if isinstance(node, ast.ParamRef):
            number = int(node.number or 0)
            if self.params is None or not 1 <= number <= len(self.params):
                return False, None
            value = self.params[number - 1]
            return (True, value) if value is None or isinstance(value, str) else (False, None)
        if isinstance(node, ast.A_Const) and node.isnull:
            return True, None
        text = _literal(node)
        return text is not None, text

    def setting_function(self, name: str, fc: Any) -> None:
        params = (("setting_name", "new_value", "is_local") if name == "set_config"
                  else ("setting_name", "missing_ok"))
        args: dict[str, Any] = {}
        for i, arg in enumerate(fc.args or ()):
            if isinstance(arg, ast.NamedArgExpr):
                args[str(arg.name)] = arg.arg
            elif i < len(params):
                args[params[i]] = arg
        known, setting = self.argument(args.get("setting_name"))
        if not known:
            raise errors.InsufficientPrivilege(
                f"{name}() needs a literal setting name here",
                hint=f"Write {name}('name', …) with the setting's name as a string literal.")
        if setting is None:
            return  # NULL: current_setting gives NULL, set_config refuses it
        setting = setting.strip().lower()
        if name == "current_setting":
            if setting in self.secret:
                _refuse_secret(setting)
            return
        if setting in _ONE_WAY:
            value = self.argument(args.get("new_value"))[1]
            why = "its value must be a literal" if value is None else _one_way(setting, value)
            if why:
                _refuse_set(setting, why)
        elif _setting_protected(setting, self.protected):
            _refuse_set(setting)


def _locate(exc: errors.SqlError, node: Any) -> None:
    """Point the error at the node, as Postgres does (1-based, in characters)."""
    location = getattr(node, "location", None)
    if exc.position is None and isinstance(location, int) and location >= 0:
        exc.position = location + 1


def _refuse_catalog(name: str) -> NoReturn:
    base = name.rsplit(".", 1)[-1]
    reason = next((why for prefixes, why in _RELATION_REFUSALS if base.startswith(prefixes)),
                  "clients here read only the catalogs that describe the schema")
    hint = ("SHOW a setting by name instead." if base == "pg_settings" else
            "information_schema and pg_class, pg_attribute, pg_type, pg_namespace … describe "
            "the resources. " + DISCOVER)
    raise errors.InsufficientPrivilege(f"permission denied for relation {name}: {reason}",
                                       hint=hint)


def _undefined_relation(name: str) -> NoReturn:
    raise errors.UndefinedTable(f'relation "{name}" does not exist', hint=DISCOVER)


def _served_function(name: str, schema: str | None, is_function: IsFunction) -> None:
    """``fn.<name>``: a served function, or 42883 saying how to list them."""
    if schema is None:
        raise errors.UndefinedFunction(
            f"function {name}() does not exist",
            hint=f"Functions are in schema {FN_SCHEMA}: call {FN_SCHEMA}.{name}(…).")
    if not is_function(FN_SCHEMA, name):
        raise errors.UndefinedFunction(
            f"function {FN_SCHEMA}.{name}() does not exist",
            hint=f"\\df {FN_SCHEMA}.* lists the functions (\\df+ with their arguments), as "
            f"does SELECT routine_name FROM information_schema.routines WHERE routine_schema "
            f"= '{FN_SCHEMA}'.")


def _undefined_function(name: str) -> NoReturn:
    raise errors.UndefinedFunction(
        f"function {name}() does not exist or is not allowed here",
        hint="Built-in scalar, aggregate, window, string, date/time, math, JSON, array and "
        "catalog functions are available; resources are tables, not functions. " + DISCOVER)


def _refuse_function(name: str) -> None:
    for refusal in _FUNCTION_REFUSALS:
        if name not in FUNCTIONS and refusal.matches(name):
            raise refusal.error(f"function {name}() is not allowed: {refusal.reason}",
                                hint=refusal.hint)


def _plain_column(node: Any, names: Iterable[str]) -> str:
    """The column a ColumnRef names when it is ``col`` or ``<alias>.col``; else ""."""
    if not isinstance(node, ast.ColumnRef):
        return ""
    fields: Any = node.fields or ()
    if len(fields) not in (1, 2) or not all(isinstance(f, ast.String | ast.A_Star)
                                            for f in fields):
        return ""
    if len(fields) == 2 and str(getattr(fields[0], "sval", "")) not in names:
        return ""
    last = fields[-1]
    return str(last.sval) if isinstance(last, ast.String) else "*"


# pg_settings columns a pinned read may name: not sourcefile/sourceline (a path), not *.
_SETTINGS_COLUMNS = frozenset({
    "name", "setting", "unit", "category", "short_desc", "extra_desc", "context", "vartype",
    "source", "min_val", "max_val", "enumvals", "boot_val", "reset_val", "pending_restart",
})


def _pinned_settings_read(node: Any, secret: frozenset[str]) -> Any:
    """The pg_settings RangeVar of ``SELECT cols FROM pg_settings WHERE name = '…'``, else None.

    Only plain columns are read and the WHERE is the only expression evaluated on
    the view's rows, so no value of another setting can leak through an error.
    """
    if (node.op != enums.SetOperation.SETOP_NONE or node.withClause or node.intoClause
            or node.lockingClause or node.groupClause or node.havingClause
            or node.windowClause or node.distinctClause or node.valuesLists
            or not node.fromClause or len(node.fromClause) != 1):
        return None
    rv = node.fromClause[0]
    if not (isinstance(rv, ast.RangeVar) and rv.relname == "pg_settings"
            and rv.schemaname in (None, "pg_catalog") and rv.catalogname is None):
        return None
    names = {"pg_settings", str(rv.alias.aliasname) if rv.alias else "pg_settings"}
    for target in node.targetList or ():
        if not isinstance(target, ast.ResTarget) or (
                _plain_column(target.val, names) not in _SETTINGS_COLUMNS):
            return None
    for sort in node.sortClause or ():
        if _plain_column(sort.node, names) not in _SETTINGS_COLUMNS:
            return None
    for limit in (node.limitCount, node.limitOffset):
        if limit is not None and _literal(limit) is None:
            return None
    where: Any = node.whereClause
    col: Any
    values: list[Any]
    if not (isinstance(where, ast.A_Expr) and where.name and where.name[-1].sval == "="):
        return None
    if where.kind == enums.A_Expr_Kind.AEXPR_OP:
        col, values = where.lexpr, [where.rexpr]
        if _plain_column(col, names) != "name":
            col, values = where.rexpr, [where.lexpr]
    elif where.kind == enums.A_Expr_Kind.AEXPR_IN:
        col, values = where.lexpr, list(where.rexpr or ())
    else:
        return None
    if _plain_column(col, names) != "name" or not values:
        return None
    for value in values:
        text = _literal(value)
        if text is None or text.lower() in secret:
            return None
    return rv


# -- the entry point -------------------------------------------------------------------


def check(
    node: Any,
    *,
    is_resource: IsResource,
    params: Sequence[str | bytes | None] | None = None,
    protected_settings: frozenset[str] = PROTECTED_SETTINGS,
    secret_settings: frozenset[str] = SECRET_SETTINGS,
    is_function: IsFunction | None = None,
) -> None:
    """Refuse ``node`` (a RawStmt's ``stmt``) with an ``errors.SqlError``, or return None.

    ``is_resource(schema, name)`` says whether a relation names a resource;
    ``schema`` is None for an unqualified name. ``params`` are the statement's
    parameter values when it is about to run: ``str`` for a text-format value,
    None for NULL, ``bytes`` for a binary-format one (not read). A setting name
    given as ``$n`` (SQLAlchemy's ``current_setting($1)``) is checked against its
    text, and refused when there is none. ``is_function(schema, name)`` says whether
    ``fn.<name>`` is a served function (by default none is).
    """
    _Gate(is_resource, protected_settings, secret_settings, params,
          is_function).statement(node)
