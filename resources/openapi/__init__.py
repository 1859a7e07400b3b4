"""HTTP APIs as tables: an OpenAPI document in the config becomes tables.

``[[openapi.apis]]`` (``ApiConfig``) names a document (OpenAPI 3.0, 3.1 or Swagger
2.0, JSON or YAML, a file or a URL); ``OpenApiBridge`` reads it and maps its
operations to tables named ``<namespace>_<table>``, by the rules of ``_mapping``
(docs/openapi.md), beside the tables ``[[openapi.apis.tables]]`` assembles by hand.

The modules, in the order they depend on one another (none imports a later one):

- ``_config``: the ``[[openapi.apis]]`` models;
- ``_fetch``: one document read within its limits (fetched, bounded, parsed);
- ``_spec``: the document, its references (``referencing``), its operations;
- ``_schemas``: schemas -> columns;
- ``_paging``: paging styles, recognised or declared;
- ``_overrides``: what a table's entry says where the document is wrong, checked;
- ``_lenient``: what a document that says little means (types, media, names);
- ``_selection``: the operations a config selects, and those no table sends;
- ``_plan``: a table as the mapping plans it (``TablePlan``, its columns ``Col``);
- ``_mapping``: operations -> tables (``plan_tables``);
- ``_values``: values into requests, answers with no schema into columns;
- ``_http``: one API's requests: credentials, retries, rate, errors, redaction;
- ``_answers``: what an API answers, read as rows;
- ``_explain``: the requests a table's call would send, for EXPLAIN;
- ``_table``: one table as a resource, its resolvers making the requests;
- ``_bridge``: ``OpenApiBridge``, every API of the config.

This package knows nothing of the sidecar or the wire.
"""

from ._bridge import OpenApiBridge
from ._config import ApiConfig, PagingConfig, RoleConfig, TableConfig

__all__ = ["ApiConfig", "OpenApiBridge", "PagingConfig", "RoleConfig", "TableConfig"]
