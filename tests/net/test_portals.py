"""Portal paging and tags, and start-up's pure parts: no sockets, no sidecar."""

from __future__ import annotations

import pytest

from glove_scratchpad.server.engine.result import Result
from glove_scratchpad.server.net.portals import ClientStatement, Portal, with_count
from glove_scratchpad.server.net.startup import parameter_status, startup_settings, trusted_peer
from glove_scratchpad.wire import CommandComplete, FieldDescription, PortalSuspended


def _portal(n_rows: int, tag: str = "SELECT 5") -> Portal:
    fields = (FieldDescription("n", type_oid=20),)
    portal = Portal(ClientStatement("", None, ()), [], ())
    portal.result = Result(tag, fields=fields, data_rows=[f"row {i}" for i in range(n_rows)])
    return portal


def test_all_rows_at_once_keep_the_statements_tag():
    rows, end = _portal(5).fetch(0)
    assert list(rows) == [f"row {i}" for i in range(5)] and end == CommandComplete("SELECT 5")


def test_a_fetch_that_fills_max_rows_suspends_and_the_last_counts_its_own_rows():
    portal = _portal(5)
    assert [(len(r), e) for r, e in (portal.fetch(2), portal.fetch(2))] == [
        (2, PortalSuspended()), (2, PortalSuspended())]
    rows, end = portal.fetch(2)
    assert list(rows) == ["row 4"] and end == CommandComplete("SELECT 1")
    assert portal.fetch(2) == ((), CommandComplete("SELECT 0"))  # a finished portal


def test_exactly_max_rows_left_suspends_without_looking_ahead():
    portal = _portal(2, "SELECT 2")
    assert portal.fetch(2)[1] == PortalSuspended()
    assert portal.fetch(2) == ([], CommandComplete("SELECT 0"))


def test_row_description_follows_the_portals_formats_and_is_kept():
    portal = _portal(1)
    portal.formats = (1,)
    fields = portal.result.fields  # type: ignore[union-attr]
    described = portal.row_description(fields)
    assert [f.format for f in described.fields] == [1]
    assert portal.row_description(fields) is described


@pytest.mark.parametrize(("tag", "count", "out"), [
    ("INSERT 0 5", 2, "INSERT 0 2"), ("SELECT 3", 0, "SELECT 0"), ("BEGIN", 4, "BEGIN")])
def test_with_count(tag, count, out):
    assert with_count(tag, count) == out


def test_startup_settings_come_from_parameters_and_options_by_canonical_name():
    params = {"user": "u", "datestyle": "ISO", "options": "-c search_path=x --timezone=UTC "
              "-c work_mem=1GB", "application_name": "app"}
    assert startup_settings(params) == {"DateStyle": "ISO", "search_path": "x",
                                        "TimeZone": "UTC", "application_name": "app"}


@pytest.mark.parametrize(("peer", "trusted"), [
    (("127.0.0.1", 5), True), (("::1", 5, 0, 0), True), (None, True), ("", True),
    (("10.0.0.2", 5), False), (("not-an-address", 5), False)])
def test_only_loopback_and_unix_sockets_are_trusted(peer, trusted):
    assert trusted_peer(peer) is trusted


def test_parameter_status_describes_this_server_then_the_session():
    sidecar = {"server_version": "18.0", "is_superuser": "on", "max_connections": "100"}
    status = parameter_status(sidecar, "ann", {"TimeZone": "UTC"}, writes=False)
    assert status["server_version"] == "18.0" and "max_connections" not in status
    assert status["is_superuser"] == "off" and status["session_authorization"] == "ann"
    assert status["default_transaction_read_only"] == "on" and status["TimeZone"] == "UTC"
