"""Functions made real in the sidecar: one shell function per served ``Fn``.

Each function has a shell ``fn.<name>(args jsonb DEFAULT NULL, <named params>
DEFAULT NULL …) RETURNS jsonb`` with its description as the comment, so
``information_schema.routines``, ``pg_proc`` and psql's ``\\df+ fn.*`` describe
functions natively, and Parse/Describe of a statement that calls one works.

The server evaluates every call before the statement runs and rewrites it to
its result, so a shell never runs as the statement's own. It does run in one
place: the server's evaluation of a call's arguments, a statement ``SELECT
fn.<name>(<the arguments as written>)`` run with ``EVALUATING`` set for its
transaction, where it returns ``jsonb_build_array(args, <named params>)``. So
Postgres itself matches named arguments, casts values to the declared types
and words every mistake. Anywhere else it raises: a call the server did not
evaluate is an error, never a silent NULL. The shells are VOLATILE, so the
planner never folds them (EXPLAIN calls nothing).
"""

from __future__ import annotations

from collections.abc import Iterable

from glove_scratchpad import errors
from glove_scratchpad.names import FN_SCHEMA, quote_literal
from glove_scratchpad.resources import Fn
from glove_scratchpad.resources._fns import ARGS

__all__ = ["EVALUATING", "FN_SCHEMA", "fn_ddl", "fns_ddl"]

# Set (transaction-local) only while the server evaluates calls' arguments.
EVALUATING = "glove_scratchpad.evaluating"


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def fn_ddl(fn: Fn, schema: str = FN_SCHEMA) -> list[str]:
    """CREATE FUNCTION and COMMENT ON FUNCTION for one function's shell."""
    name = f"{_ident(schema)}.{_ident(fn.name)}"
    params = [f"{ARGS} jsonb DEFAULT NULL"]
    params += [f"{_ident(p.name)} {p.pg_type} DEFAULT NULL" for p in fn.params]
    values = ", ".join(f"${i + 1}" for i in range(len(params)))
    shown = f"{schema}.{fn.name}"
    body = (
        "BEGIN\n"
        f"  IF current_setting({quote_literal(EVALUATING)}, true) = 'on' THEN\n"
        f"    RETURN jsonb_build_array({values});\n"
        "  END IF;\n"
        f"  RAISE EXCEPTION 'function {shown}() was not evaluated by the server'\n"
        f"    USING ERRCODE = '{errors.InternalError.sqlstate}', HINT = 'Calls of fn.*"
        " functions are evaluated before the statement runs; send the statement again.';\n"
        "END"
    )
    types = ", ".join(["jsonb", *(p.pg_type for p in fn.params)])
    return [
        f"CREATE FUNCTION {name}({', '.join(params)}) RETURNS jsonb LANGUAGE plpgsql VOLATILE"
        f" AS $_gs_$\n{body}\n$_gs_$",
        f"COMMENT ON FUNCTION {name}({types}) IS {quote_literal(fn.summary())}",
    ]


def fns_ddl(fns: Iterable[Fn], schema: str = FN_SCHEMA) -> list[str]:
    """The schema of the functions, rebuilt: DROP, CREATE, then every shell."""
    out = [f"DROP SCHEMA IF EXISTS {_ident(schema)} CASCADE", f"CREATE SCHEMA {_ident(schema)}",
           f"COMMENT ON SCHEMA {_ident(schema)} IS "
           + quote_literal("Functions: call fn.<name>(args jsonb) or fn.<name>(x => …); each "
                      "returns jsonb. \\df+ fn.* lists them.")]
    for fn in fns:
        out.extend(fn_ddl(fn, schema))
    return out
