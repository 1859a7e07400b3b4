"""Which writes need a person's approval, and why: ``[approvals]`` and the resources' own
flags. No I/O.

Rules:
- A write (one resource, one verb) needs approval when its resource was defined with
  ``approval=True``, or when ``resource.verb`` matches a glob of ``require``
  (``emails.insert``, ``gh_*.delete``, ``js_items.*``).
- A session that has read an untrusted resource (``untrusted`` globs, or
  ``define_resource(..., untrusted=True)``) is *tainted* from then on: with
  ``after_untrusted = "approve"`` (the default) every write it sends later needs
  approval, whatever its resource; ``"deny"`` refuses such writes outright;
  ``"allow"`` only says so. The taint names the resource and when it was read.
- The reason is one line a person reads (EXPLAIN, ``scratchpad.staged``, the
  request): the rule that matched, or the untrusted read.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from glove_scratchpad.resources import Resource

__all__ = ["ApprovalRules", "Taint"]


@dataclass(frozen=True, slots=True)
class Taint:
    """The untrusted read that taints a session: which resource, and when."""

    resource: str
    at: float  # time.time()

    def said(self) -> str:
        when = dt.datetime.fromtimestamp(self.at, dt.UTC).isoformat(timespec="seconds")
        return f"the session read untrusted {self.resource} at {when}"


class ApprovalRules(BaseModel):
    """``[approvals]``: which writes a person approves, who may, and how long COMMIT waits."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    require: list[str] = Field(default_factory=list, description="resource.verb globs "
                               "whose writes need approval (emails.insert, gh_*.delete)")
    untrusted: list[str] = Field(default_factory=list, description="Resources (globs) whose "
                                 "rows come from outside: reading one taints the session")
    after_untrusted: Literal["approve", "deny", "allow"] = Field(
        default="approve", description="What a tainted session's later writes get: approve (each "
        "needs approval), deny (refused), allow (sent, as before)")
    approvers: list[str] = Field(default_factory=list, description="Roles that may approve; "
                                 "never the role that asked")
    wait_s: float = Field(default=300.0, ge=0, description="Seconds COMMIT waits for a decision; "
                          "then the request stays pending")
    notify: str | None = Field(default=None,
                               description="A URL each new request is POSTed to (JSON)")

    def active(self, resources: dict[str, Resource]) -> bool:
        """Whether any write could ever need approval here."""
        return bool(self.require or self.untrusted) or any(
            getattr(r, "approval", False) or getattr(r, "untrusted", False)
            for r in resources.values())

    def untrusted_resource(self, resource: Resource) -> bool:
        return bool(getattr(resource, "untrusted", False)) or any(
            fnmatch.fnmatchcase(resource.name, p) for p in self.untrusted)

    def rule(self, resource: Resource, verb: str) -> str | None:
        """The rule that makes a write need approval, said; or None."""
        if getattr(resource, "approval", False):
            return f"{resource.name} is defined with approval=True"
        target = f"{resource.name}.{verb}"
        for pattern in self.require:
            if fnmatch.fnmatchcase(target, pattern):
                return f"rule require = {pattern!r} matches {target}"
        return None

    def why(self, resource: Resource, verb: str, taint: Taint | None) -> str | None:
        """Why a write needs approval (None: it does not), taint or rule."""
        said = self.rule(resource, verb)
        if said is None and taint is not None and self.after_untrusted == "approve":
            said = taint.said() + "; every later write needs approval (after_untrusted)"
        return said

    def denied(self, taint: Taint | None) -> str | None:
        """Why a tainted session's write is refused outright (``after_untrusted = "deny"``)."""
        if taint is None or self.after_untrusted != "deny":
            return None
        return taint.said() + ", and after_untrusted = 'deny' refuses its writes"
