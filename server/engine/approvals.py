"""The server's approvals service: the rules, each session's untrusted reads, the requests'
store, and the wake-up of a COMMIT that waits.

Rules:
- A session is tainted by its first read of an untrusted resource (``read``): the
  taint lives as long as the session (held by its transaction object, weakly), and
  the reads of the statement running count too (``taint``'s ``touched``), so an
  ``INSERT … SELECT`` from an untrusted table is gated as it fires.
- A decision wakes a COMMIT of this process at once (``wake``); one of another worker
  finds it in the store, which it reads every ``POLL_S`` while it waits.
- ``notify``: each new request is POSTed (JSON) to the configured URL, in the
  background; a failure is logged and changes nothing.
- Only ``approvers`` decide, and never on a request of their own role.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Callable, Iterable
from typing import Any

from glove_scratchpad import errors, metrics
from glove_scratchpad.background import hold
from glove_scratchpad.catalog import ApprovalStore, as_json
from glove_scratchpad.resources import Resource

from .approval_rules import ApprovalRules, Taint

__all__ = ["POLL_S", "Approvals"]

log = logging.getLogger(__name__)

POLL_S = 0.25  # seconds between a waiting COMMIT's looks at the store (another worker's decision)
NOTIFY_TIMEOUT = 5.0  # seconds a notification's POST may take
_NOTIFYING: set[asyncio.Task[Any]] = set()


class Approvals:
    """Approvals as every session of a server shares them."""

    def __init__(self, store: ApprovalStore, rules: ApprovalRules,
                 resources: dict[str, Resource]) -> None:
        self.store, self.rules = store, rules
        self._resources = resources
        self.active = store.enabled and rules.active(resources)
        # A session's taint, by its transaction object (one per session, for its life).
        self._taints: weakref.WeakKeyDictionary[Any, Taint] = weakref.WeakKeyDictionary()
        self._decided: dict[int, asyncio.Event] = {}  # requests a COMMIT here waits for

    # -- untrusted reads ------------------------------------------------------------

    def _untrusted(self, touched: Iterable[Any]) -> str | None:
        for t in touched:
            resource = self._resources.get(t.resource)
            if t.verb == "select" and resource is not None and \
                    self.rules.untrusted_resource(resource):
                return resource.name
        return None

    def read(self, session: Any, touched: Iterable[Any]) -> None:
        """A statement of ``session`` read these (``Result.touched``): an untrusted one
        taints it, from now on."""
        if not self.active or session in self._taints:
            return
        name = self._untrusted(touched)
        if name is not None:
            self._taints[session] = Taint(name, time.time())

    def taint(self, session: Any, touched: Iterable[Any] = ()) -> Taint | None:
        """The untrusted read that taints ``session``: an earlier one, or one of the
        statement running (``touched``)."""
        found = self._taints.get(session)
        if found is None and self.active:
            name = self._untrusted(touched)
            found = None if name is None else Taint(name, time.time())
        return found

    def reason(self, session: Any, touched: Iterable[Any] = ()
               ) -> Callable[[str, str], str | None] | None:
        """Why a write of ``session`` (resource, verb) needs approval; None: none ever does."""
        if not self.active:
            return None
        taint = self.taint(session, touched)

        def why(resource: str, verb: str) -> str | None:
            found = self._resources.get(resource)
            return None if found is None else self.rules.why(found, verb, taint)
        return why

    def refuse_tainted(self, session: Any, touched: Iterable[Any] = ()) -> None:
        """``after_untrusted = "deny"``: a tainted session's write is refused (42501)."""
        if not self.active:
            return
        said = self.rules.denied(self.taint(session, touched))
        if said is not None:
            raise errors.InsufficientPrivilege(
                f"this write is refused: {said}", hint="Writes after an untrusted read are "
                "not allowed on this server: send them from a session that has not read one.")

    def explain_lines(self, session: Any, target: Resource | None, verb: str,
                      reads: Iterable[str]) -> list[str]:
        """EXPLAIN's line of a write: whether COMMIT will need approval for it, and why."""
        if not self.active or target is None:
            return []
        taint = self.taint(session, [_Read(n) for n in reads])
        if self.rules.denied(taint) is not None and self.rules.rule(target, verb) is None:
            return [f"Approval: refused: {self.rules.denied(taint)}"]
        why = self.rules.why(target, verb, taint)
        if why is None:
            return ["Approval: not needed"]
        return [f"Approval: needed before it fires: {why}; COMMIT becomes a request that a "
                f"person approves (approvers: {', '.join(self.rules.approvers) or 'none'})"]

    # -- who decides ----------------------------------------------------------------

    def check_approver(self, user: str, system: str, asked_by: str | None = None) -> None:
        """42501 unless ``user`` may decide (on a request ``asked_by``)."""
        if user not in self.rules.approvers:
            raise errors.InsufficientPrivilege(
                f"permission denied: role {user!r} is not an approver",
                hint=f"An approver decides: one of the roles [approvals] approvers names. "
                f"SELECT id, status FROM {system}.approvals follows your own requests.")
        if asked_by is not None and asked_by == user:
            raise errors.InsufficientPrivilege(
                f"permission denied: role {user!r} asked for this request, and cannot "
                "decide it", hint="Another approver decides it.")

    def is_approver(self, user: str) -> bool:
        return user in self.rules.approvers

    # -- waiting ----------------------------------------------------------------------

    def wake(self, rid: int) -> None:
        event = self._decided.get(rid)
        if event is not None:
            event.set()

    async def wait(self, rid: int, seconds: float) -> dict[str, Any] | None:
        """The request once decided, or None after ``seconds`` with no decision."""
        event = self._decided[rid] = asyncio.Event()
        deadline = time.monotonic() + seconds
        try:
            while True:
                row = await self.store.get(rid)
                if row is not None and row["status"] != "pending":
                    return row
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                try:
                    async with asyncio.timeout(min(POLL_S, left)):
                        await event.wait()
                except TimeoutError:
                    pass
        finally:
            self._decided.pop(rid, None)

    async def count(self) -> None:
        """The metrics' pending gauge, from the store (which every worker shares)."""
        if metrics.enabled() and self.store.enabled:
            try:
                metrics.approvals_pending(await self.store.pending())
            except Exception as exc:  # a gauge is not worth failing a statement over
                log.warning("could not count the pending approvals: %s", type(exc).__name__)

    def notify(self, request: dict[str, Any]) -> None:
        """POST a new request to ``notify`` (in the background)."""
        url = self.rules.notify
        if url:
            hold(_post(url, request), _NOTIFYING)


class _Read:
    """A resource a statement reads, as ``Touched`` says it (EXPLAIN's, before any call)."""

    __slots__ = ("resource",)
    verb = "select"

    def __init__(self, resource: str) -> None:
        self.resource = resource


async def _post(url: str, request: dict[str, Any]) -> None:
    import httpx

    try:
        async with httpx.AsyncClient(timeout=NOTIFY_TIMEOUT) as client:
            await client.post(url, content=as_json(request),
                              headers={"content-type": "application/json"})
    except Exception as exc:  # told in the log; the request stands
        log.warning("could not notify %s of approval request %s: %s", url,
                    request.get("id"), type(exc).__name__)
