"""The gate's allowlists of relations and functions, and what each refusal says. No I/O.

Data, kept apart from the walker (``gate``) that applies it, so that what is
allowed can be read, reviewed and tested in one place.

Rules:
- A relation is a resource, a CTE in scope, a relation of ``information_schema``
  (but ``INFO_SCHEMA_REFUSED``), or a ``pg_catalog`` relation in
  ``CATALOG_RELATIONS``: what psql, drivers and ORMs read to describe the schema.
  Any other ``pg_…`` relation is refused with the reason ``RELATION_REFUSALS``
  gives for it (42501); any other name does not exist (42P01).
- A function is one of ``FUNCTIONS`` (or an ``information_schema`` helper in
  ``INFO_SCHEMA_FUNCTIONS``, or a served ``fn.<name>``). A name that one of
  ``FUNCTION_REFUSALS`` matches is refused with its own SQLSTATE, reason and
  HINT, unless ``FUNCTIONS`` lists it (``pg_advisory_unlock_all``, which
  connection pools send); any other name is undefined (42883).
- ``SYSTEM_FUNCTIONS`` (``scratchpad.restage``, ``refresh``, ``approve``,
  ``deny``) are the server's own, each a statement of its own: judged in
  ``system_calls``, and named here for the gate's importers.
- ``CHECKED_FUNCTIONS`` read or change settings: the gate checks their
  arguments like SHOW and SET (``setting_rules``), so they cannot be called in
  attribute notation, where it cannot.
- Names are lower case, as the parser folds them.
"""

from __future__ import annotations

from typing import Any, NoReturn

from glove_scratchpad import errors

from .system_calls import (
    SYSTEM_FUNCTIONS,
    is_number_or_param,
    lone_call,
    refuse_system_function,
    system_call,
)

__all__ = [
    "AGGREGATES",
    "BACKEND_FUNCTIONS",
    "BACKEND_HINT",
    "CATALOG_RELATIONS",
    "CHECKED_FUNCTIONS",
    "DISCOVER",
    "FUNCTIONS",
    "FUNCTION_REFUSALS",
    "INFO_SCHEMA_FUNCTIONS",
    "INFO_SCHEMA_REFUSED",
    "POLL_HINT",
    "RELATION_REFUSALS",
    "SYSTEM_FUNCTIONS",
    "FunctionRefusal",
    "backend_call",
    "refuse_catalog",
    "refuse_function",
    "refuse_system_function",
    "system_call",
    "undefined_function",
    "undefined_relation",
]

DISCOVER = ("SELECT table_name FROM information_schema.tables WHERE table_schema = "
            "current_schema() lists the resources.")
POLL_HINT = ("Poll a resource instead: run the SELECT again when you need fresh rows; "
             "there is no channel to listen on.")

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
RELATION_REFUSALS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("pg_authid", "pg_shadow", "pg_user_mapping", "pg_user_mappings"),
     "it holds role credentials"),
    (("pg_settings",),
     "it shows server settings and the paths of the server's files"),
    (("pg_file_settings", "pg_hba_file_rules", "pg_ident_file_mappings", "pg_config",
      "pg_db_role_setting"),
     "it shows the server's configuration files"),
    # pg_cursors is not here: the engine answers it with the session's own cursors.
    (("pg_stat_", "pg_statio_", "pg_locks", "pg_prepared_xacts", "pg_prepared_statements",
      "pg_backend_memory_contexts", "pg_shmem_allocations", "pg_aios", "pg_wait_events"),
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
INFO_SCHEMA_REFUSED = frozenset({
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

# Aggregate and window functions: a LIMIT over them is not a limit on the rows read.
AGGREGATES = frozenset(_AGGREGATE_WINDOW.split())

FUNCTIONS = frozenset(" ".join((
    _MATH, _STRING, _TEXT_SEARCH, _DATETIME, _JSON, _ARRAY_RANGE, _AGGREGATE_WINDOW, _TYPES,
    _NETWORK_GEOMETRY, _XML, _CATALOG,
)).split())

# information_schema's own helpers, which pgjdbc calls (``_pg_expandarray``).
INFO_SCHEMA_FUNCTIONS = frozenset({
    "_pg_char_max_length", "_pg_char_octet_length", "_pg_datetime_precision",
    "_pg_expandarray", "_pg_index_position", "_pg_interval_type", "_pg_numeric_precision",
    "_pg_numeric_precision_radix", "_pg_numeric_scale", "_pg_truetypid", "_pg_truetypmod",
})


# The server's own sessions' functions: each answered by the server, alone.
BACKEND_FUNCTIONS = frozenset({"pg_backend_pid", "pg_cancel_backend"})
BACKEND_HINT = ("Call it alone: SELECT pg_backend_pid(); SELECT pg_cancel_backend(pid), "
                "with a pid from scratchpad.activity.")


class FunctionRefusal:
    """A class of refused functions: its names and name prefixes, and how it is refused."""

    __slots__ = ("error", "hint", "names", "prefixes", "reason")

    def __init__(self, names: str, prefixes: str, error: type[errors.SqlError], reason: str,
                 hint: str) -> None:
        self.names = frozenset(names.split())
        self.prefixes = tuple(prefixes.split())
        self.error, self.reason, self.hint = error, reason, hint

    def matches(self, name: str) -> bool:
        return name in self.names or name.startswith(self.prefixes)


FUNCTION_REFUSALS = (
    FunctionRefusal(
        "nextval currval setval lastval pg_sequence_last_value pg_get_sequence_data", "",
        errors.FeatureNotSupported, "sequences are not supported",
        "Let the tool assign ids (INSERT … RETURNING), or use gen_random_uuid() "
        "or row_number() OVER ()."),
    FunctionRefusal(
        "", "pg_advisory_ pg_try_advisory_", errors.FeatureNotSupported,
        "advisory locks are not supported (each statement runs on its own pooled "
        "connection)",
        "Drop the lock. Inside BEGIN … COMMIT writes are staged, and COMMIT fires them "
        "in order."),
    FunctionRefusal(
        "pg_current_snapshot pg_visible_in_snapshot pg_last_committed_xact "
        "pg_get_multixact_members mxid_age",
        "txid_ pg_current_xact_id pg_snapshot_ pg_xact_", errors.FeatureNotSupported,
        "transaction ids are not exposed (transactions here are virtual)",
        "Use now() or clock_timestamp() to mark time; scratchpad.staged lists the writes "
        "of the open transaction."),
    FunctionRefusal(
        "loread lowrite", "lo_", errors.FeatureNotSupported,
        "large objects are not supported",
        "Keep binary data in a bytea or text column of a resource."),
    FunctionRefusal(
        "pg_backend_pid pg_cancel_backend", "", errors.FeatureNotSupported,
        "the server answers it only as a statement of its own: its sessions are not the "
        "sidecar's backends", BACKEND_HINT),
    FunctionRefusal(
        "pg_sleep pg_sleep_for pg_sleep_until", "", errors.FeatureNotSupported,
        "a statement may not sleep (it would hold a connection)",
        "Run the statement again later instead."),
    FunctionRefusal(
        "query_to_xml query_to_xml_and_xmlschema query_to_xmlschema cursor_to_xml "
        "cursor_to_xmlschema ts_stat ts_rewrite",
        "table_to_xml schema_to_xml database_to_xml", errors.InsufficientPrivilege,
        "it runs SQL given as text, or reads a table by name, which the gate cannot check",
        "Write the query itself; xmlelement(), xmlforest(), json_agg() or to_jsonb() "
        "shape its rows."),
    FunctionRefusal(
        "", "dblink postgres_fdw", errors.InsufficientPrivilege,
        "it connects to other databases",
        "Data comes from resources. " + DISCOVER),
    FunctionRefusal(
        "pg_notify pg_listening_channels pg_notification_queue_usage", "",
        errors.FeatureNotSupported, "LISTEN and NOTIFY are not supported", POLL_HINT),
    FunctionRefusal(
        "pg_read_file pg_read_binary_file pg_stat_file pg_file_write pg_file_rename "
        "pg_file_unlink pg_file_sync pg_logdir_ls pg_current_logfile pg_config "
        "pg_tablespace_location pg_relation_filepath pg_relation_filenode "
        "pg_filenode_relation pg_show_all_settings pg_show_all_file_settings "
        "pg_hba_file_rules pg_ident_file_mappings pg_settings_get_flags",
        "pg_ls_ pg_control_ pg_split_walfile_name pg_walfile_name",
        errors.InsufficientPrivilege,
        "it reads the server's files or configuration",
        "Data comes from resources. " + DISCOVER),
    FunctionRefusal(
        "pg_reload_conf pg_rotate_logfile pg_terminate_backend "
        "pg_promote pg_switch_wal pg_create_restore_point pg_backup_start pg_backup_stop "
        "pg_export_snapshot pg_import_system_collations pg_nextoid pg_log_standby_snapshot "
        "pg_log_backend_memory_contexts pg_sync_replication_slots "
        "pg_stop_making_pinned_objects "
        "brin_summarize_new_values brin_summarize_range brin_desummarize_range "
        "gin_clean_pending_list amvalidate currtid2 pg_blocking_pids "
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

# Functions whose arguments the gate checks like SET and SHOW; attribute notation (``x.f``),
# which passes no arguments to check, is refused for them.
CHECKED_FUNCTIONS = frozenset({"set_config", "current_setting"})


# -- what a refusal says -----------------------------------------------------------------


def refuse_catalog(name: str) -> NoReturn:
    """A ``pg_catalog`` (or other ``pg_…`` schema) relation not in ``CATALOG_RELATIONS``."""
    base = name.rsplit(".", 1)[-1]
    reason = next((why for prefixes, why in RELATION_REFUSALS if base.startswith(prefixes)),
                  "clients here read only the catalogs that describe the schema")
    hint = ("SHOW a setting by name instead." if base == "pg_settings" else
            "information_schema and pg_class, pg_attribute, pg_type, pg_namespace … describe "
            "the resources. " + DISCOVER)
    raise errors.InsufficientPrivilege(f"permission denied for relation {name}: {reason}",
                                       hint=hint)


def undefined_relation(name: str, system_view: str | None = None) -> NoReturn:
    """``system_view``: the system view (schema.name) an unqualified ``name`` meant."""
    hint = (f"{system_view} is a system view: name it with its schema."
            if system_view else DISCOVER)
    if system_view:
        raise errors.UndefinedTable(f'relation "{name}" does not exist', hint=hint)
    # table_name: the engine adds the tables the name's words find (scratchpad.search).
    raise errors.UndefinedTable(f'relation "{name}" does not exist', hint=hint, table_name=name)


def undefined_function(name: str) -> NoReturn:
    raise errors.UndefinedFunction(
        f"function {name}() does not exist or is not allowed here",
        hint="Built-in scalar, aggregate, window, string, date/time, math, JSON, array and "
        "catalog functions are available; resources are tables, not functions. " + DISCOVER)


def refuse_function(name: str) -> None:
    """Refuse ``name`` when one of ``FUNCTION_REFUSALS`` matches it and ``FUNCTIONS`` does not."""
    if name in FUNCTIONS:
        return
    for refusal in FUNCTION_REFUSALS:
        if refusal.matches(name):
            raise refusal.error(f"function {name}() is not allowed: {refusal.reason}",
                                hint=refusal.hint)


def backend_call(node: Any) -> Any:
    """The call of ``SELECT pg_backend_pid()`` or ``SELECT pg_cancel_backend(<a number, or
    $n>)`` when that is the whole statement (an alias allowed), else None. The server
    answers them itself: its sessions are not the sidecar's backends."""
    found = lone_call(node)
    if found is None:
        return None
    call, names, arg = found
    if not names or names[-1] not in BACKEND_FUNCTIONS or names[:-1] not in ([], ["pg_catalog"]):
        return None
    if names[-1] == "pg_backend_pid" and call.args:
        raise errors.UndefinedFunction("function pg_backend_pid() takes no argument",
                                       hint=BACKEND_HINT)
    if names[-1] == "pg_cancel_backend" and not is_number_or_param(arg):
        raise errors.FeatureNotSupported(
            "pg_cancel_backend() takes one pid here: a number, or $1", hint=BACKEND_HINT)
    return call
