"""Operations -> tables: which operations make which table, with which columns. No I/O.

The automatic mapping (``auto = true``), over the operations ``include`` and
``exclude`` leave:

- **Reads.** A GET whose 2xx JSON response is an array, or an object holding one
  array (``items``, ``data``…), is a table whose rows are the array's items; a GET
  that returns one object is a one-row table. A GET with no response schema (or
  one that says nothing) is a one-row table whose answer is one column, ``body``
  (``_lenient.body_type``: jsonb, text or bytea).
- **List and get are one table.** A GET on an item path (``/things/{id}``) and the
  GET on its collection (``/things``) whose items share a schema are one table,
  named after the collection: its keys are the collection's, the item's parameter
  is the row's own field that names the item (``_overrides.item_field``: the field
  of its name, the field it ends with, ``issue_number`` is ``number``, or ``id``
  for ``/sessions/{session}``; or as ``item_key`` declares), the table's primary
  key, and ``WHERE id = …`` routes the call to the item operation. With no such
  field, the parameter is the call's argument alone, and no key.
- **Arguments.** Path parameters and required query parameters are required
  keys; optional query parameters (and header parameters other than credentials)
  are filters. Paging parameters are the server's, never columns.
- **Writes.** POST on the collection is the table's insert (the body's properties
  are insertable columns; the created object serves RETURNING); PATCH (else PUT)
  on the item is its update, DELETE its delete. A write on a one-row table's own
  path is that table's.
- **Reads have no effects.** A SELECT sends GET (HEAD, OPTIONS) only, unless the
  operation is declared a read: in ``reads`` (the API's), or as a hand table's
  ``select`` (the user's choice). A declared POST that returns rows (a search) is
  a table whose body properties are its keys (required) and filters; any other
  write, a POST that returns a list among them, is a table of that write alone,
  its path parameters its keys.
- **Names** come from the operationId (FastAPI's ``<name>_<path>_<method>`` as
  ``<name>``), else from the path, as snake_case, unique within the namespace,
  shortened deterministically past 63 bytes.
- **Accounted for.** ``include``, ``exclude`` and ``reads`` that match no operation
  are errors; ``_selection.not_served`` names every operation no table sends, with its reason.
- **Amended**: a ``[[openapi.apis.tables]]`` entry that names no operation amends
  the automatic table of its name (``rows``, ``rows_schema``, ``params``, ``paging``;
  its ``columns`` apply afterwards, ``_overrides.amend``).
- **Columns**: a parameter and a row field of the same name are one column; a
  body property and a row field of the same name but not the same type are two,
  the body's named ``<name>_input``. ``[[openapi.apis.tables]] params`` gives a
  parameter a column of its own.
"""

from __future__ import annotations

import collections

from .._resource import ResourceDefinitionError
from .._schema import sql_name, walking
from ._config import ApiConfig, TableConfig
from ._lenient import body_type, fastapi_name, param_type, says_nothing, with_values
from ._overrides import declared_field, item_field, row_schema
from ._paging import Paging, detect
from ._plan import NOT_COLUMNS, SAFE_METHODS, Col, TablePlan
from ._schemas import column_name, describe, pg_type_of, row_fields, shape
from ._selection import selected
from ._spec import Operation, Parameter, Schema, Spec

__all__ = ["plan_tables"]

# Where a list's rows are, in a response object holding more than one array.
_ROW_FIELDS = ("items", "data", "results", "values", "entries", "records", "list", "nodes",
               "hits", "objects", "elements", "rows")


def _rows_of(schema: Schema | None, rows: str | None = None, row: Schema | None = None
             ) -> tuple[tuple[str, ...], Schema, bool] | None:
    """Where a response's rows are, their schema (``row``: declared, ``rows_schema``), and
    whether it is one row; None when the response is no JSON."""
    if schema is None:
        return None
    if rows:  # declared: a field or a dotted path
        node = schema
        for part in rows.split("."):
            props, _, _ = shape(node)
            if part not in props:
                raise ResourceDefinitionError(f"rows = {rows!r}: the response has no {part!r}")
            node = props[part]
        inner = node.sub(node.get("items")) if node.get("type") == "array" else node
        if row is not None:  # the document is wrong there: rows, unless it says one object
            return tuple(rows.split(".")), row, bool(shape(node)[0])
        return tuple(rows.split(".")), inner, node.get("type") != "array"
    if row is not None:  # where the rows are, as the document says; what they are, declared
        found = _rows_of(schema)
        return None if found is None else (found[0], row, found[2])
    if schema.get("type") == "array":
        return (), schema.sub(schema.get("items")), False
    # A wrapper of rows: an object holding one array of objects, beside a few scalars
    # (a count, a cursor) or under a name rows go by (items, data, results…).
    props, _, _ = shape(schema)
    arrays = [n for n, s in props.items() if s.get("type") == "array"
              and (shape(s.sub(s.get("items")))[0] or n in _ROW_FIELDS)
              and not _same_rows(s.sub(s.get("items")), schema)]  # a tree's children
    named = [n for n in _ROW_FIELDS if n in arrays]
    others = [s for n, s in props.items() if n not in arrays]
    few = len(others) <= 4 and not any(s.get("type") == "array" for s in others)
    if named or (len(arrays) == 1 and few):
        inner = props[(named or arrays)[0]]
        return ((named or arrays)[0],), inner.sub(inner.get("items")), False
    return (), schema, True


def _same_rows(a: Schema, b: Schema) -> bool:
    if a.ref is not None and a.ref == b.ref:
        return True
    pa, _, _ = shape(a)
    pb, _, _ = shape(b)
    return bool(pa) and set(pa) == set(pb)


def _words(path: str) -> str:
    return "_".join(p for p in path.split("/") if p and not p.startswith("{")) or "root"


class _Builder:
    def __init__(self, config: ApiConfig, spec: Spec) -> None:
        self.config = config
        self.spec = spec
        self.taken: set[str] = set()
        # The entries that amend an automatic table, by the table's name; the item keys
        # every entry declares.
        self.amends = {f"{config.namespace}_{t.name}": t for t in config.tables if t.amends}
        self.item_keys = {f"{config.namespace}_{t.name}": t.item_key for t in config.tables}
        self.short: dict[str, str] = {}  # FastAPI operationIds: the short name of each
        # The headers credentials travel in (the document's apiKey schemes, the config's
        # headers): a header parameter of one of those names is never a column either.
        self.not_columns = NOT_COLUMNS | {h.lower() for h in config.headers} | {
            h.lower() for role in config.roles.values() for h in role.headers} | {
            str(s.get("name") or "").lower() for s in spec.security_schemes().values()
            if s.get("type") == "apiKey" and s.get("in") == "header"}

    def name(self, op: Operation, given: str | None = None,
             taken: set[str] | None = None) -> str:
        ns = self.config.namespace
        if given is not None:
            name = f"{ns}_{given}"
            if name in self.taken or len(name.encode()) > 63:
                raise ResourceDefinitionError(
                    f"API {ns!r}: table {given!r}: {name} is taken, or longer than 63 bytes")
            self.taken.add(name)
            return name
        base = op.operation_id or f"{op.method.lower()}_{_words(op.path)}"
        base = self.short.get(base, base)
        return sql_name(f"{ns}_{base}", fallback=f"{ns}_op",
                        taken=self.taken if taken is None else taken)

    # -- columns -------------------------------------------------------------------

    def add_param(self, table: TablePlan, p: Parameter, renames: dict[str, str],
                  taken: set[str], role: str) -> Col | None:
        """A parameter's column (shared with a row field of its name), or None for one
        the server sets itself (paging, credentials)."""
        if p.location == "header" and p.name.lower() in self.not_columns:
            return None
        if p.name in table.paging.parameters:
            return None
        found = table.by_param(p.name)
        if found is not None:
            return found
        wanted = renames.get(p.name)
        pg_type = param_type(p)
        named = column_name(p.name, set())
        same = None if wanted else next((c for c in table.columns if c.prop is not None
                                         and c.param is None and c.name == named), None)
        if same is not None and same.pg_type == pg_type:
            col = same  # one column: the argument, and the rows' own field of its name
        else:
            # A row field of the name but another type means something else: the
            # parameter gets a column of its own.
            name = wanted or column_name(p.name if same is None else f"{p.name}_param", taken)
            if wanted:
                taken.add(name)
            col = Col(name, pg_type, describe(p.schema))
            table.columns.append(col)
        col.param, col.location, col.array = p.name, p.location, p.is_array
        col.kind = str(p.schema.get("type")) if p.schema.get("type") in ("array",
                                                                           "object") else ""
        text = with_values(p.description or col.description, describe(p.schema),
                            col.description)
        col.description = f"{'Required key' if role == 'key' else 'Optional filter'}: " \
            f"the {p.location} parameter {p.name}. {text}".strip()
        if role != "key" and col.prop is None:  # no row holds it: it is the call's
            col.description += " Rows carry the value = (or IN) gives it; without one, NULL."
        (table.keys if role == "key" else table.filters).append(col.name)
        return col

    def add_rows(self, table: TablePlan, schema: Schema, taken: set[str]) -> None:
        for f in row_fields(schema, taken):
            table.columns.append(Col(f.column, f.pg_type, f.description, f.nullable,
                                     prop=f.prop or None, required=f.required,
                                     whole=not f.prop))

    def add_body(self, table: TablePlan, op: Operation, taken: set[str]) -> None:
        """A write's request body properties as insertable (or settable) columns.

        A property of the body alone is NULL in every row read (the API never gives it
        back), so its column is nullable; its description says the write needs it."""
        if op.body is None:
            return
        props, required, _ = shape(op.body)
        for name, sub in props.items():
            pg_type = pg_type_of(sub)
            # The column another write already sends as this property, else the read's.
            same = next((c for c in table.columns if c.body == name), None) or next(
                (c for c in table.columns if c.prop == name), None)
            if same is not None and same.body in (None, name) and same.pg_type == pg_type:
                same.body = name
                continue
            column = column_name(f"{name}_input" if same is not None else name, taken)
            text = describe(sub)
            if same is not None:
                text = f"Written as the request body's {name} (reads give {same.name}). {text}"
            if name in required:
                reads = "; reads give NULL" if table.select is not None else ""
                text = f"Required by {op.label}{reads}. {text}"
            table.columns.append(Col(column, pg_type, text.strip(), body=name))

    # -- tables --------------------------------------------------------------------

    def select_table(self, op: Operation, item: Operation | None, name: str | None = None,
                     hand: TableConfig | None = None) -> TablePlan | None:
        if hand is None and name is None:  # an automatic table: amended by its name?
            hand = self.amends.get(self.name(op, taken=set(self.taken)))
        found = _rows_of(op.response, hand.rows if hand else None,
                         row_schema(self.spec, hand, self.config.namespace))
        if found is None:
            return None
        rows, schema, one_row = found
        table = TablePlan(self.name(op, name), op.summary, select=op, rows=rows,
                          one_row=one_row)
        paging = hand.paging if hand else None
        table.paging = Paging() if one_row else detect(
            op, paging.style if paging else None, paging.param if paging else None,
            paging.size if paging else None, paging.field if paging else None,
            paging.header if paging else None)
        renames = dict(hand.params) if hand else {}
        taken: set[str] = set(renames.values())
        self.add_rows(table, schema, taken)
        body_keys = op.method != "GET"
        for p in op.parameters:
            self.add_param(table, p, renames, taken,
                           "key" if p.required and p.location != "header" else "filter")
        if body_keys and op.body is not None:  # a search: its body's fields are arguments
            props, required, _ = shape(op.body)
            for prop, sub in props.items():
                shared = next((c for c in table.columns if c.prop is not None and c.name
                               == column_name(prop, set()) and c.pg_type == pg_type_of(sub)),
                              None)
                col = shared or Col(column_name(prop, taken), pg_type_of(sub), describe(sub))
                if shared is None:
                    table.columns.append(col)
                col.body = prop
                (table.keys if prop in required else table.filters).append(col.name)
        if item is not None:
            self.add_item(table, item, renames, taken)
        table.description = op.summary or (self.spec.title + " " + op.label).strip()
        return table

    def add_item(self, table: TablePlan, item: Operation, renames: dict[str, str],
                 taken: set[str]) -> None:
        """The item GET of a list-and-get table: its parameter is the row's own field that
        names the item (``item_key``, else ``item_field``), the key of each row, and
        ``= value`` routes a call to it. With no such field it is the call's argument
        alone: no key, since the listed rows cannot say it."""
        params = [p for p in item.path_parameters if table.by_param(p.name) is None]
        if len(params) != 1:
            return
        p = params[0]
        col = table.column(renames.get(p.name, "")) if p.name in renames else None
        declared = self.item_keys.get(table.name, {}).get(p.name)
        if col is None and declared is not None:
            col = declared_field(table.columns, table.name, p.name, declared)
        if col is None:
            col = item_field(table.columns, p.name, item.path)
        if col is None:
            col = Col(renames.get(p.name) or column_name(p.name, taken), pg_type_of(p.schema))
            table.columns.append(col)
        col.param, col.location = p.name, "path"
        col.description = (f"The item path parameter {p.name}: WHERE {col.name} = … reads "
                           f"one row by {item.label}. {col.description}").strip()
        table.item, table.item_column = item, col.name
        table.filters.append(col.name)
        if col.prop is not None:
            table.primary_key = [col.name]
        else:
            col.description += (" The listed rows do not say it: NULL but in a row read by "
                                "it. Declare item_key to name the rows' field it is.")

    def body_table(self, op: Operation, name: str | None = None) -> TablePlan:
        """A GET whose answer has no schema: one row, its body one column (jsonb, text or
        bytea, by the media types the document names), its parameters keys and filters."""
        table = TablePlan(self.name(op, name), op.summary or op.label, select=op,
                          one_row=True)
        taken: set[str] = set()
        kind = body_type(op)
        said = {"jsonb": "as JSON (a body that is not JSON: a JSON string of its text)",
                "text": "as text", "bytea": "as bytes"}[kind]
        col = Col(column_name("body", taken), kind, f"The whole answer of {op.label}, {said}; "
                  "NULL when it is empty. The document gives it no schema.")
        table.columns.append(col)
        table.whole = col.name
        for p in op.parameters:
            self.add_param(table, p, {}, taken,
                           "key" if p.required and p.location != "header" else "filter")
        return table

    def write_table(self, op: Operation, name: str | None = None) -> TablePlan:
        """A table of one write alone: its path parameters are its keys."""
        table = TablePlan(self.name(op, name), op.summary or op.label, volatility="volatile")
        taken: set[str] = set()
        found = _rows_of(op.response)
        if found is not None and op.method == "POST":
            self.add_rows(table, found[1], taken)  # what RETURNING reads
        for p in op.parameters:
            if p.location == "path" or p.required:
                self.add_param(table, p, {}, taken, "key")
        self.add_body(table, op, taken)
        setattr(table, {"POST": "insert", "DELETE": "delete"}.get(op.method, "update"), op)
        return table

    def add_write(self, table: TablePlan, op: Operation, verb: str) -> None:
        taken = {c.name for c in table.columns}
        for p in op.path_parameters:  # an insert's path parameters come from its rows
            if table.by_param(p.name) is None:
                self.add_param(table, p, {}, taken, "key")
        if verb in ("insert", "update"):
            self.add_body(table, op, taken)
        setattr(table, verb, op)


def plan_tables(spec: Spec, config: ApiConfig) -> list[TablePlan]:
    """The tables of one API: those assembled by hand, then the automatic ones. One walk
    of its schemas, memoized and bounded (``SchemaTooLarge``)."""
    with walking():
        return _plan_tables(spec, config)


def _plan_tables(spec: Spec, config: ApiConfig) -> list[TablePlan]:
    b = _Builder(config, spec)
    ops = list(spec.operations())
    by_label = {op.label: op for op in ops}
    by_id = {op.operation_id: op for op in ops if op.operation_id}
    tables: list[TablePlan] = []
    used: set[str] = set()
    # A misspelt pattern would leave operations unserved (or served), silently.
    for key in ("reads", "include", "exclude"):
        for pattern in getattr(config, key):
            if not any(selected(op, [pattern]) for op in ops):
                raise ResourceDefinitionError(
                    f"API {config.namespace!r}: {key} names {pattern!r}, which matches no "
                    "operation of the document (write a tag, an operationId, 'METHOD /path' "
                    "as the document writes it, or a path glob such as '/things/*')")
    shorts = {op.operation_id: fastapi_name(op) for op in ops if fastapi_name(op)}
    counts = collections.Counter(shorts.values())
    b.short = {long: short for long, short in shorts.items()  # type: ignore[misc]
               if short and counts[short] == 1 and short not in by_id}
    for hand in config.tables:
        if hand.amends:
            continue  # an automatic table's, amended as it is made
        tables.append(_hand_table(b, hand, by_label, by_id))
        used |= {op.label for op in tables[-1].operations}
    if not config.auto:
        return tables
    chosen = [op for op in ops if op.label not in used
              and (not config.include or selected(op, config.include))
              and not selected(op, config.exclude)]
    gets = {op.path: op for op in chosen if op.method == "GET"}
    lists: dict[str, TablePlan] = {}
    items: set[str] = set()
    for path, op in gets.items():
        parent, _, last = path.rpartition("/")
        if not (last.startswith("{") and parent in gets):
            continue
        mine, theirs = _rows_of(op.response), _rows_of(gets[parent].response)
        if mine and theirs and mine[2] and not theirs[2] and _same_rows(mine[1], theirs[1]):
            items.add(path)
    for path, op in gets.items():
        if path in items:
            continue
        item = next((gets[p] for p in items if p.rpartition("/")[0] == path), None)
        table = None if says_nothing(op.response) else b.select_table(op, item)
        if table is None:  # no schema to read rows by: the answer is the row
            tables.append(b.body_table(op))
            continue
        tables.append(table)
        lists[path] = table
        if item is not None:
            lists[item.path] = table
    for op in chosen:
        if op.method == "GET":
            continue
        if selected(op, config.reads):  # declared a read: a search, never a write
            searched = b.select_table(op, None)
            if searched is not None:
                searched.volatility, searched.declared_read = "volatile", True
                tables.append(searched)
                continue
        table = lists.get(op.path)
        parent, _, last = op.path.rpartition("/")
        if table is None and op.method != "POST" and last.startswith("{") and parent in lists:
            # A write on an item of a list that has no item GET: the list's, by that key.
            owner = lists[parent]
            if not owner.one_row and owner.item is None and not owner.primary_key:
                b.add_item(owner, op, {}, {c.name for c in owner.columns})
                owner.item = None  # no item GET: the parameter only names each row
                table = lists[op.path] = owner
        verb = _verb_on(table, op)
        if table is not None and verb is not None:
            b.add_write(table, op, verb)
            continue
        # A POST that returns rows may be a search, or a batch that deletes: undeclared,
        # it is a write, which no SELECT sends.
        tables.append(b.write_table(op))
    return tables


def _verb_on(table: TablePlan | None, op: Operation) -> str | None:
    """The verb a write is of a table on its path, or None when it is a table's own."""
    if table is None or table.select is None:
        return None
    on_item = op.path != table.select.path and op.path.rpartition("/")[0] == table.select.path
    on_collection = op.path == table.select.path
    if op.method == "POST" and on_collection and not table.one_row and table.insert is None:
        return "insert"
    if op.method in ("PATCH", "PUT") and (on_item or (on_collection and table.one_row)) and (
            table.update is None or (op.method == "PATCH" and table.update.method == "PUT")):
        return "update"
    if op.method == "DELETE" and (on_item or (on_collection and table.one_row)):
        return "delete" if table.delete is None else None
    return None


def _find(label: str | None, by_label: dict[str, Operation], by_id: dict[str, Operation],
          api: str, table: str) -> Operation | None:
    if label is None:
        return None
    method, _, path = label.partition(" ")
    found = by_label.get(f"{method.upper()} {path}") if path else None
    found = found or by_id.get(label)
    if found is None:
        raise ResourceDefinitionError(
            f"API {api!r}, table {table!r}: no operation {label!r} in the document (write "
            "'METHOD /path' as the document writes it, or an operationId)")
    return found


def _hand_table(b: _Builder, hand: TableConfig, by_label: dict[str, Operation],
                by_id: dict[str, Operation]) -> TablePlan:
    ns = b.config.namespace
    ops = {verb: _find(getattr(hand, verb), by_label, by_id, ns, hand.name)
           for verb in ("select", "insert", "update", "delete")}
    select = ops["select"]
    if select is not None:
        table = b.select_table(select, None, hand.name, hand)
        if table is not None and select.method not in SAFE_METHODS:
            table.declared_read = True  # named as the select by the user: a read
        if table is None:
            raise ResourceDefinitionError(
                f"API {ns!r}, table {hand.name!r}: {select.label} has no JSON response to "
                "read rows from")
        # A write on an item path of the select's: routed by its own path parameter.
        for verb in ("update", "delete"):
            op = ops[verb]
            if op is not None and not table.primary_key:
                extra = [p for p in op.path_parameters if table.by_param(p.name) is None]
                if len(extra) == 1:
                    b.add_item(table, op, dict(hand.params), {c.name for c in table.columns})
                    table.item = None  # not a read: only the key of each row
    else:
        first = next(op for op in ops.values() if op is not None)
        table = b.write_table(first, hand.name)
        for verb in ("insert", "update", "delete"):
            setattr(table, verb, None)
    for verb in ("insert", "update", "delete"):
        op = ops[verb]
        if op is not None:
            b.add_write(table, op, verb)
    if hand.volatility:
        table.volatility = hand.volatility
    table.ttl = hand.ttl
    return table
