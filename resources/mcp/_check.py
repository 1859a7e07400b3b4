"""A tool's answer checked against its ``outputSchema``, with no regular expression that backtracks.

The SDK checks a tool's structured content against its output schema on the
event loop, with Python's ``re``: a pattern such as ``^(a+)+$`` and an answer of
``"a" * 29 + "!"`` held every session for seconds. Here:

- ``pattern``, ``patternProperties`` and the ``additionalProperties`` that
  depend on them run on RE2 (``google-re2``), whose time is linear in the
  text. A pattern RE2 cannot run (a backreference, a lookaround) is refused:
  it is not checked, and the answer is taken as it is. ``unevaluatedProperties``
  is not checked (its rules would run the patterns on ``re``).
- The check runs in a worker thread, within a time bound: one that does not
  finish in time fails the call; the event loop never waits for it.

``OutputCheck`` is one tool's compiled check; ``check`` gives the first
mismatch found (as jsonschema's ``best_match``), or None. What it says quotes
the answer, so it is the server's text: DETAIL, labelled, never the message.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Iterator, Mapping
from typing import Any

import re2  # type: ignore[import-untyped]
from jsonschema import SchemaError, ValidationError, validators
from jsonschema.exceptions import best_match
from jsonschema.protocols import Validator
from referencing import Registry

__all__ = ["Mismatch", "OutputCheck"]

log = logging.getLogger(__name__)

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a pattern RE2 refuses is ours to report, not absl's to print


class Mismatch(Exception):
    """A tool's answer that does not fit its output schema, or could not be checked."""


@functools.lru_cache(maxsize=512)
def _compiled(pattern: str) -> Any:
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error:
        log.warning("outputSchema pattern %.200r is not checked: RE2 cannot run it", pattern)
        return None


def _search(pattern: str, text: str) -> bool | None:
    """Whether ``pattern`` is found in ``text``; None when the pattern is refused."""
    compiled = _compiled(pattern)
    return None if compiled is None else compiled.search(text) is not None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and _search(pattern, instance) is False:
        yield ValidationError(f"{instance[:80]!r} does not match {pattern[:200]!r}")


def _pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    known = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    # A refused pattern counts as matching: what cannot be checked is not an error.
    extras = [
        key for key in instance
        if key not in known and not any(_search(p, key) is not False for p in patterns)
    ]
    if validator.is_type(additional, "object"):
        for key in extras:
            yield from validator.descend(instance[key], additional, path=key)
    elif additional is False and extras:
        shown = ", ".join(repr(k[:80]) for k in extras[:5])
        yield ValidationError(f"Additional properties are not allowed ({shown} unexpected)")


def _unchecked(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    return iter(())


_KEYWORDS = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "unevaluatedProperties": _unchecked,
}


class OutputCheck:
    """One tool's output schema, compiled once, checked off the event loop."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema = dict(schema)
        self._validator: Validator | None = None

    def _compile(self) -> Validator:
        if self._validator is None:
            base = validators.validator_for(self.schema)
            try:
                base.check_schema(self.schema)
            except SchemaError as exc:
                raise Mismatch(
                    f"its outputSchema is not a valid JSON Schema: {exc.message[:300]}"
                ) from None
            cls = validators.extend(base, _KEYWORDS)
            # An empty registry: a $ref resolves within the schema, never by fetching.
            self._validator = cls(self.schema, registry=Registry())
        return self._validator

    def _first_error(self, content: Any) -> tuple[str, str] | None:
        error = best_match(self._compile().iter_errors(content))
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path) or "(the whole answer)"
        return where[:200], error.message[:300]

    async def check(self, content: Any, *, within: float) -> tuple[str, str] | None:
        """The first mismatch of ``content`` against the schema: where, and what the check
        said (which quotes the answer), or None.

        Raises ``Mismatch`` when the schema is unusable or the check takes
        longer than ``within`` seconds.
        """
        try:
            async with asyncio.timeout(within):
                return await asyncio.to_thread(self._first_error, content)
        except TimeoutError:
            raise Mismatch(
                f"its answer could not be checked against its outputSchema within {within:g} s"
            ) from None
