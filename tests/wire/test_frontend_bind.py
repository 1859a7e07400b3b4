"""Bind has a one-pass decoder; it must agree with the field-by-field one on every body."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from glove_scratchpad.wire import Bind, BindTemplate, RemoteProtocolError
from glove_scratchpad.wire._codec import Reader, decode_with

names = st.text(st.characters(blacklist_characters="\0", codec="utf-8"), max_size=8)
values = st.lists(st.one_of(st.none(), st.binary(max_size=12)), max_size=5)
formats = st.lists(st.sampled_from([0, 1]), max_size=5)


def _field_by_field(body: bytes) -> Bind | str:
    r = Reader(body, "Bind")
    try:
        msg = Bind(*[f.decode(r) for f in Bind.layout])
        r.finish()
    except RemoteProtocolError:
        return "error"
    if len(msg.param_formats) not in (0, 1, len(msg.params)):
        return "error"
    return msg


def _fast(body: bytes) -> Bind | str:
    try:
        return decode_with(Bind, body)
    except RemoteProtocolError:
        return "error"


@settings(max_examples=300, deadline=None)
@given(portal=names, statement=names, params=values, fmts=formats, results=formats)
def test_bind_round_trips(portal, statement, params, fmts, results):
    param_formats = tuple(fmts[: len(params)]) if len(fmts) >= len(params) else ()
    msg = Bind(portal, statement, param_formats, tuple(params), tuple(results))
    body = msg.encode()[5:]
    assert decode_with(Bind, body) == msg == _field_by_field(body)


@settings(max_examples=500, deadline=None)
@given(portal=names, params=values, cut=st.integers(0, 60), junk=st.binary(max_size=6))
def test_bind_damaged_bodies_decode_alike(portal, params, cut, junk):
    body = Bind(portal, "s", (), tuple(params), (1,)).encode()[5:]
    for damaged in (body[:cut], body + junk, body[:cut] + junk + body[cut:]):
        assert _fast(damaged) == _field_by_field(damaged)


@settings(max_examples=300)
@given(names, names, formats, values, formats)
def test_a_bind_template_encodes_what_bind_does(portal, statement, param_formats, params,
                                                result_formats):
    template = BindTemplate(portal, statement, tuple(param_formats))
    assert template.encode(tuple(params), tuple(result_formats)) == Bind(
        portal, statement, tuple(param_formats), tuple(params), tuple(result_formats)).encode()
