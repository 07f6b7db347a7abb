"""control.safeyaml: budgets checked on the event stream before anything is built, go-yaml's words,
plain JSON out."""

from __future__ import annotations

import time

import pytest

from control import safeyaml
from control.safeyaml import Budget, BudgetExceeded, load_documents, read_stream


def laughs(levels: int) -> str:
    text = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    for i in range(levels):
        this, previous = chr(98 + i), chr(97 + i)
        text += f"{this}: &{this} [{', '.join(['*' + previous] * 9)}]\n"
    return text


def test_plain_json_out_timestamps_stay_strings_keys_become_strings():
    assert load_documents("a: 2024-01-01\n2: yes\ntrue: [x]\n---\n---\nb: 1.5\n") == [
        {"a": "2024-01-01", "2": True, "true": ["x"]}, {"b": 1.5}]


def test_a_billion_laughs_is_refused_from_the_event_stream_at_once():
    started = time.perf_counter()
    outcome = read_stream(laughs(9))  # 9**10 strings if it were built
    assert outcome == safeyaml.Outcome("undecodable", "yaml: document contains excessive aliasing")
    assert time.perf_counter() - started < 1.0


def test_a_few_aliases_are_fine_as_go_yaml_allows_them():
    document = load_documents("base: &base {image: nginx}\nweb: *base\napi: *base\n")[0]
    assert document == {"base": {"image": "nginx"}, "web": {"image": "nginx"}, "api": {"image": "nginx"}}
    assert load_documents(laughs(2))[0]["c"] == [[["lol"] * 9] * 9] * 9  # 729 strings: under the ratio's floor


def test_the_alias_ratio_follows_go_yaml():
    assert safeyaml.allowed_alias_ratio(1000) == 0.99
    assert safeyaml.allowed_alias_ratio(4_000_000) == 0.10
    assert safeyaml.allowed_alias_ratio(2_200_000) == pytest.approx(0.545)


def test_an_alias_inside_its_own_anchor_is_refused():
    assert read_stream("a: &x [1, *x]\n").value == "yaml: anchor 'x' value contains itself"


def test_depth_is_bounded_before_building():
    assert read_stream("[" * 101 + "]" * 101).value == "yaml: exceeded max depth of 100"
    assert read_stream("{a: " * 10 + "1" + "}" * 10, Budget(max_depth=9)).value == "yaml: exceeded max depth of 9"
    assert read_stream("[" * 100 + "]" * 100).verdict == "ok"


def test_nodes_are_counted_with_aliases_expanded():
    text = "a: &a [1, 2, 3, 4]\nb: [*a, *a, *a]\n"  # 1 + (1 + 5) + (1 + 1 + 3 * 5) = 24 nodes
    assert read_stream(text, Budget(max_nodes=24)).verdict == "ok"
    refused = read_stream(text, Budget(max_nodes=23))
    assert refused == safeyaml.Outcome("too_large", "the YAML holds more than 23 nodes (aliases expanded)")
    with pytest.raises(BudgetExceeded):
        load_documents(text, Budget(max_nodes=23))


def test_bad_yaml_keeps_go_yamls_words():
    assert read_stream("a: b: c").value.startswith("yaml: line 1: mapping values are not allowed")
    assert read_stream("a: .nan\n").value == "yaml: NaN and Infinity are not valid JSON numbers"
    assert read_stream("a: *nowhere\n").value.startswith("yaml: line 1: found undefined alias")
