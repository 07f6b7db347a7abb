"""control.jsontext: orjson's speed, json's answers (every text, every value)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from control import jsontext

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2 ** 80), 2 ** 80),
                    st.floats(allow_nan=False, allow_infinity=False), st.text())
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(st.text(), inner, max_size=4)), max_leaves=20)


def _same(a, b) -> bool:
    """Equal as JSON values, and of the same Python types (1 is not 1.0, -0.0 is not 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_what_it_writes_reads_back_as_json_reads_jsons_own_text(value) -> None:
    text = jsontext.dumps(value)
    assert _same(jsontext.loads(text), json.loads(json.dumps(value, separators=(",", ":"))))
    assert _same(json.loads(text), jsontext.loads(text))


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_it_reads_every_text_json_writes_as_json_does(value) -> None:
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False), json.dumps(value, indent=1)):
        assert _same(jsontext.loads(text), json.loads(text))
        assert _same(jsontext.loads(text.encode()), json.loads(text))


@pytest.mark.parametrize("text", [
    "123456789012345678901234567890",  # beyond 64 bits: orjson would give a float
    "-9223372036854775809",  # below -2**63: so would it
    "[18446744073709551616]",
    '{"n": -98765432109876543210}',
    '"\\ud800"',  # a lone surrogate escape
    '{"a": "\\udc00x"}',
    "1e400",  # overflows a double: json gives inf
    '{"a":1,"a":2}',  # the last one wins
    "-0", "-0.0", "1.0", "1E2",
])
def test_the_texts_orjson_reads_otherwise_are_read_by_json(text) -> None:
    assert _same(jsontext.loads(text), json.loads(text))


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", "{", "\ufeff{}", "\"a\x01\"", "[1,]", "{\"a\":1,}", '{"a":}', "[" * 2000 + "]" * 2000, ""])
def test_what_json_refuses_it_refuses_the_same_way(text) -> None:
    with pytest.raises((ValueError, RecursionError)) as expected:
        json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    with pytest.raises(expected.type):
        jsontext.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))


@pytest.mark.parametrize("value", ["\ud800", {"k": "x\udfff"}, 2 ** 70, -(2 ** 65), {1: "a"}])
def test_values_orjson_cannot_write_are_written_by_json(value) -> None:
    assert jsontext.dumps(value) == json.dumps(value, separators=(",", ":"))


def test_the_text_is_compact_and_keeps_characters_as_go_writes_them() -> None:
    assert jsontext.dumps({"a": [1, 2.5], "b": "é<>&"}) == '{"a":[1,2.5],"b":"é<>&"}'


def test_nan_is_written_as_null_not_as_text_no_reader_takes() -> None:
    assert jsontext.dumps([math.nan, math.inf]) == "[null,null]"


def test_size_is_the_utf8_length_of_the_text() -> None:
    assert jsontext.size('{"a":"x"}') == 9
    assert jsontext.size(jsontext.dumps({"a": "한"})) == len("{\"a\":\"한\"}".encode()) == 11
