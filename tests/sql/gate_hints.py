"""The next step each refusal of ``gate_samples.REFUSED`` names in its HINT: words the
HINT must hold, by the refusals that share them. A new refusal sample names its own."""

from __future__ import annotations

_LISTS = "SELECT table_name FROM information_schema.tables WHERE table_schema = " \
         "current_schema() lists the resources"

NEXT_STEPS: dict[str, tuple[str, ...]] = {
    "Use your driver's prepared statements (the extended protocol":
        ("PREPARE", "EXECUTE", "EXPLAIN EXECUTE"),
    "Use FORMAT, HEADER, DELIMITER, NULL, QUOTE, ESCAPE, FORCE_QUOTE or ENCODING":
        ("COPY option",),
    "write with the statement alone":
        ("COPY of a DELETE",),
    "SELECT * FROM scratchpad.resources lists them":
        ("COPY FROM not a resource",),
    "Use COPY … TO STDOUT or FROM STDIN (psql's \\copy)":
        ("COPY a file",),
    "Write it as one SQL statement":
        ("DO",),
    "Poll a resource instead: run the SELECT again when you need fresh rows":
        ("LISTEN", "NOTIFY", "notify function"),
    "Drop the LOCK":
        ("LOCK",),
    "Use INSERT, UPDATE and DELETE on the resource":
        ("MERGE", "MERGE in WITH"),
    "SET a setting for this session instead":
        ("ALTER SYSTEM",),
    "Which resources you may read and write is set by the server. " + _LISTS:
        ("roles",),
    "Nothing to do: resources hold no rows between statements":
        ("maintenance",),
    "use a CTE (WITH name AS (…)) or a subquery for intermediate results. " + _LISTS:
        ("DDL",),
    "answers SELECT, INSERT, UPDATE, DELETE, EXPLAIN, BEGIN/COMMIT/ROLLBACK, SET and SHOW":
        ("other statement",),
    "COMMIT fires them in order, ROLLBACK discards them all":
        ("PREPARE TRANSACTION",),
    "COMMIT or ROLLBACK the open transaction instead":
        ("COMMIT PREPARED",),
    "Drop INTO …; use a CTE (WITH name AS (SELECT …))":
        ("SELECT INTO",),
    "Drop the FOR UPDATE/SHARE clause":
        ("FOR UPDATE", "FOR SHARE nested"),
    "Read first, then INSERT only what is new":
        ("ON CONFLICT",),
    "Use TABLESAMPLE SYSTEM (percent) or BERNOULLI (percent)":
        ("tablesample method",),
    "Name the relation without its database":
        ("cross-database relation", "write to another database"),
    "pg_class, pg_attribute, pg_type, pg_namespace … describe the resources. " + _LISTS:
        ("catalog relation", "qualified catalog relation", "pg_ schema relation",
         "cursor over a catalog"),
    "SHOW a setting by name instead":
        ("pg_settings", "pg_settings, a qualified column",
         "pg_settings, another relation's column", "pg_settings, ordered by an expression",
         "pg_settings, a LIMIT not literal", "pg_settings, = ANY",
         "pg_settings, another column"),
    "Read information_schema.tables and .columns to describe resources":
        ("information_schema view",),
    _LISTS:
        ("undefined relation", "undefined qualified relation", "write to a catalog",
         "write to a non-resource"),
    "name it with its schema":
        ("system view without its schema",),
    "Call the function without a database name":
        ("cross-database function",),
    "resources are tables, not functions. " + _LISTS:
        ("undefined function", "function in another schema"),
    "call fn.echo(…)":
        ("served function unqualified",),
    "\\df fn.* lists the functions":
        ("served function undefined",),
    "Let the tool assign ids (INSERT … RETURNING), or use gen_random_uuid()":
        ("sequences",),
    "Drop the lock":
        ("advisory locks",),
    "Use now() or clock_timestamp() to mark time":
        ("transaction ids",),
    "Keep binary data in a bytea or text column of a resource":
        ("large objects",),
    "Run the statement again later instead":
        ("sleep",),
    "Write the query itself":
        ("SQL from text",),
    "Data comes from resources. " + _LISTS:
        ("other databases", "server files"),
    "This database answers queries over resources. " + _LISTS:
        ("administration",),
    "Call it as set_config(…) with literal arguments, or rename the column":
        ("attribute notation",),
    "Call it as pg_nope(…) with literal arguments, or rename the column":
        ("attribute notation pg_",),
    "Call it alone, with a transaction id from scratchpad.journal":
        ("restage not alone", "restage of an expression", "EXPLAIN restage"),
    "SELECT scratchpad.restage(17, force => true) stages a write in doubt again":
        ("restage forced by a number", "restage forced by another name"),
    "Name the row by its key: UPDATE t SET":
        ("WHERE CURRENT OF",),
    "Run the write as a statement of its own, then declare the cursor over a read":
        ("cursor over a write",),
    "Call it alone: SELECT scratchpad.approve(12, 'why')":
        ("approve with a number comment",),
    "Call it alone: SELECT scratchpad.deny(12, 'why')":
        ("deny of an expression",),
    "Call it alone: SELECT scratchpad.refresh(":
        ("refresh of a number",),
    "SELECT pg_cancel_backend(pid), with a pid from scratchpad.activity":
        ("pg_backend_pid with an argument", "pg_cancel_backend of text",
         "pg_backend_pid not alone"),
    "fixed by the server for every session; leave it as it is":
        ("SET protected", "SET alias of protected", "RESET protected", "set_config protected",
         "set_config protected, value later"),
    "choose one the message allows, or leave it as it is":
        ("SET one-way", "set_config one-way", "set_config one-way not literal",
         "set_config one-way, a number", "set_config one-way value as a binary parameter"),
    "Drop it; each statement reads the resources afresh":
        ("SET TRANSACTION SNAPSHOT",),
    "SHOW one setting by name, e.g. SHOW TimeZone":
        ("SHOW ALL",),
    "SHOW another setting":
        ("SHOW secret", "current_setting secret"),
    "Write set_config('name', …) with the setting's name as a string literal":
        ("setting name not literal",),
    "Use SET statement_timeout = …: it is kept by the session":
        ("set_config statement_timeout", "set_config session setting, value later"),
    "Use SET client_encoding = 'UTF8': it is kept by the session":
        ("set_config client_encoding",),
    "Use SET default_transaction_read_only = on: it is kept by the session":
        ("set_config default_transaction_read_only",),
    "Use BEGIN … or SET TRANSACTION … (ISOLATION LEVEL, READ ONLY)":
        ("set_config transaction_read_only", "set_config transaction_isolation",
         "set_config default_transaction_isolation", "set_config transaction_deferrable"),
}

# Each refusal sample's next step, by its category.
NEXT_STEP: dict[str, str] = {
    category: words for words, categories in NEXT_STEPS.items() for category in categories}
