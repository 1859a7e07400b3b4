"""Several HTTP APIs as one list of resources, each from its OpenAPI document.

Rules:

- ``load`` reads every API's document and maps its operations to tables, at start.
  A mistake of the configuration (a local document that cannot be read, a hand
  table naming an operation the document lacks, no server to call) is an error
  that names the API: a configuration to fix.
- What the upstream serves is not the configuration: a document that cannot be
  fetched, breaks a limit (``DocumentRefused``, ``SchemaTooLarge``) or cannot be
  mapped costs that API's tables only, and an automatic table that cannot be made
  costs itself only: ``failures`` says why, a warning names the API, and the other
  APIs' tables are served.
- Comments lose the characters Postgres refuses (``_sources.scrubbed``).
- An API's tables share one HTTP client (a pool of connections) and one rate;
  ``aclose`` closes the clients.
- Two APIs with one namespace are refused.
- A config entry that is wrong is one ValueError naming the entry, each key that is
  wrong and why; never the values given (a header's value is a credential). The
  credentials of ``spec`` and ``base_url`` are secrets from the start: a document
  that cannot be fetched is an error without them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from glove_scratchpad.redaction import redact_secrets, remember_url

from .._resource import Resource, ResourceDefinitionError
from .._schema import SchemaTooLarge
from .._sources import scrubbed
from ._config import ApiConfig
from ._http import Api
from ._mapping import plan_tables
from ._overrides import amend
from ._selection import not_served
from ._spec import Limits, Spec, UpstreamError
from ._table import ApiTable

__all__ = ["OpenApiBridge"]

log = logging.getLogger(__name__)


class OpenApiBridge:
    """HTTP APIs as tables.

        bridge = OpenApiBridge(configs, base=Path("."))
        db = await Database.create(resources=await bridge.load(), ...)
        ...
        await bridge.aclose()
    """

    def __init__(self, apis: Iterable[ApiConfig | Mapping[str, Any]], base: Path) -> None:
        self.configs = [a if isinstance(a, ApiConfig) else _validated(a, i)
                        for i, a in enumerate(apis)]
        seen: set[str] = set()
        for config in self.configs:
            if config.namespace in seen:
                raise ValueError(f"two OpenAPI APIs have the namespace {config.namespace!r}")
            seen.add(config.namespace)
            remember_url(config.spec)
            remember_url(config.base_url)
        self.base = base
        self.apis: list[Api] = []
        # The operations not served, by API, each with its reason (the start log's line).
        self.unserved: dict[str, list[tuple[str, str]]] = {}
        self.failures: dict[str, Exception] = {}  # APIs left out, by namespace, and why
        self.by_api: dict[str, list[Resource]] = {}  # the tables of each API served

    async def load(self) -> list[Resource]:
        """Every API's tables. Documents are read (or fetched) in a worker thread: the
        event loop goes on serving meanwhile."""
        return await asyncio.to_thread(self._load)

    def _load(self) -> list[Resource]:
        out: list[Resource] = []
        for config in self.configs:
            try:
                tables = self._tables(config)
            except (UpstreamError, SchemaTooLarge) as exc:
                self._left_out(config, exc)
                continue
            except ResourceDefinitionError as exc:  # the configuration's; it may quote the
                raise ResourceDefinitionError(redact_secrets(str(exc))) from None  # URL
            except ValueError:  # the configuration's
                raise
            except Exception as exc:  # what a hostile document trips over
                self._left_out(config, exc, trace=True)
                continue
            self.by_api[config.namespace] = tables
            out.extend(tables)
        for namespace, left in self.unserved.items():
            if left:
                log.info("API %r: %d operations not served: %s", namespace, len(left),
                         "; ".join(f"{label} ({why})" for label, why in left))
        return out

    def _left_out(self, config: ApiConfig, exc: Exception, *, trace: bool = False) -> None:
        self.failures[config.namespace] = exc
        log.warning("API %r is not served: its tables (%s_*) are left out: %s",
                    config.namespace, config.namespace, exc, exc_info=trace)

    def _tables(self, config: ApiConfig) -> list[Resource]:
        spec = Spec.load(config.spec, self.base, Limits(
            allow_refs=tuple(config.allow_refs), load_timeout=config.load_timeout,
            max_document_bytes=config.max_document_bytes), config.document_headers())
        base_url = config.base_url or spec.base_url()
        if not base_url:
            raise ResourceDefinitionError(
                f"API {config.namespace!r}: its document names no server: set base_url")
        api = Api(config, base_url)
        self.apis.append(api)
        schemes = spec.security_schemes()
        hand = {f"{config.namespace}_{t.name}" for t in config.tables}
        out = []
        plans = amend(plan_tables(spec, config), config)
        left = self.unserved[config.namespace] = []
        for plan in plans:
            if not plan.columns:  # no parameter, no body, no rows: nothing a row holds
                left += [(op.label, "no parameter, request body or response schema: "
                          "nothing a row would hold") for op in plan.operations]
                continue
            try:
                out.append(ApiTable(api, plan, schemes).resource())
            except ResourceDefinitionError as exc:
                if plan.name in hand:
                    raise
                log.warning("API %r: table %s is not served: %s", config.namespace,
                            plan.name, exc)
                left += [(op.label, f"its table {plan.name} could not be made")
                         for op in plan.operations]
        left += not_served(spec, config, {op.label for plan in plans for op in plan.operations})
        return scrubbed(out, f"API {config.namespace!r}")

    async def aclose(self) -> None:
        for api in self.apis:
            await api.aclose()


def _validated(entry: Mapping[str, Any], index: int) -> ApiConfig:
    try:
        return ApiConfig.model_validate(entry)
    except ValidationError as exc:
        name = entry.get("namespace") if isinstance(entry, Mapping) else None
        which = f"namespace = {name!r}" if isinstance(name, str) else f"number {index + 1}"
        problems = []
        for error in exc.errors():
            where = ".".join(str(part) for part in error["loc"]) or "the entry"
            if error["type"] == "extra_forbidden":
                problems.append(f"{where} is not a key of it (see docs/openapi.md)")
            else:
                problems.append(f"{where}: {error['msg'].removeprefix('Value error, ')}")
        raise ValueError(f"[[openapi.apis]] {which}: " + "; ".join(problems)) from None
