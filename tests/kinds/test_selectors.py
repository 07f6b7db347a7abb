"""Label and field selectors behave as Kubernetes' labels.Parse / fields.ParseSelector do."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from control.kinds.selectors import (
    FieldSelector,
    LabelSelector,
    SelectorError,
    label_selector_from_object,
    parse_field_selector,
    parse_label_selector,
)

POD = {"app": "web", "tier": "front", "replicas": "3"}


@pytest.mark.parametrize("text, labels, expected", [
    ("", {}, True),
    ("   ", POD, True),
    ("app=web", POD, True),
    ("app==web", POD, True),
    ("app=db", POD, False),
    ("app!=db", POD, True),
    ("app!=web", POD, False),
    ("missing!=x", POD, True),  # != matches objects lacking the key
    ("app in (web,db)", POD, True),
    ("app in (db)", POD, False),
    ("app notin (db)", POD, True),
    ("app notin (web)", POD, False),
    ("missing notin (x)", POD, True),  # notin too
    ("missing in (x)", POD, False),
    ("app", POD, True),
    ("missing", POD, False),
    ("!missing", POD, True),
    ("!app", POD, False),
    ("app=web,tier=front", POD, True),
    ("app=web,tier=back", POD, False),
    ("  app = web ,  tier in ( front , back )  ", POD, True),
    ("replicas>2", POD, True),
    ("replicas>3", POD, False),
    ("replicas<4", POD, True),
    ("app>1", POD, False),  # a non-integer label never satisfies Gt
    ("missing<5", POD, False),
    ("app=", {"app": ""}, True),
    ("app=", POD, False),
    ("app in ()", {"app": ""}, True),
    ("app in (,web)", {"app": ""}, True),
    ("example.com/role=x", {"example.com/role": "x"}, True),
    ("in in (notin)", {"in": "notin"}, True),  # keywords are plain words where a key/value is due
])
def test_label_selector_matching(text: str, labels: dict, expected: bool) -> None:
    assert parse_label_selector(text).matches(labels) is expected


def test_none_labels_are_no_labels() -> None:
    assert parse_label_selector("a!=b").matches(None)
    assert not parse_label_selector("a").matches(None)


@pytest.mark.parametrize("text, message", [
    ("(a)", "found '(', expected: !, identifier, or 'end of string'"),
    ("a=(", "unable to parse requirement: found '(', expected: identifier"),
    ("a b", "unable to parse requirement: found 'b', expected: ="),
    ("a in x", "unable to parse requirement: found 'x', expected: '('"),
    ("a in (x y)", "unable to parse requirement: found 'y', expected: ',', ')' or identifier"),
    ("a in (x", "unable to parse requirement: found '', expected: ',', ')' or identifier"),
    ("a=b c", "found 'c', expected: ',' or 'end of string'"),
    ("a=b,", "found '', expected: identifier after ','"),
    ("!a=b", "found '=', expected: ',' or 'end of string'"),
    ("a>x", "for 'Gt', 'Lt' operators, the value must be an integer"),
    ("a<", "for 'Gt', 'Lt' operators, the value must be an integer"),
    ("a b=c", "unable to parse requirement"),
    ("-a=b", 'key: Invalid value: "-a"'),
    ("Example.com/a=b", "prefix part"),
    ("/a=b", "prefix part must be non-empty"),
    ("a/b/c=d", "qualified name"),
    ("x/=b", "name part must be non-empty"),
    ("a" * 64 + "=b", "no more than 63 characters"),
    ("a=-b", 'values[0][a]: Invalid value: "-b"'),
    ("a=" + "b" * 64, "no more than 63 characters"),
    ("a=b!", "found '!', expected: ',' or 'end of string'"),
])
def test_label_selector_errors(text: str, message: str) -> None:
    with pytest.raises(SelectorError) as err:
        parse_label_selector(text)
    assert message in str(err.value)


def test_selector_error_is_a_value_error() -> None:
    assert issubclass(SelectorError, ValueError)


def test_canonical_string_sorts_by_key_and_values() -> None:
    sel = parse_label_selector("z in (b,a), a!=1, !m, k")
    assert str(sel) == "a!=1,k,!m,z in (a,b)"
    assert parse_label_selector(str(sel)) == sel


def test_long_but_valid_key_with_prefix() -> None:
    key = "sub.example.com/" + "n" * 63
    assert parse_label_selector(f"{key}=v").matches({key: "v"})


# --- object form -----------------------------------------------------------------------------

def test_nil_selector_object_matches_nothing_but_empty_matches_everything() -> None:
    nothing = label_selector_from_object(None)
    assert nothing.matches_nothing and not nothing.matches({}) and not nothing.matches(POD)
    for empty in ({}, {"matchLabels": {}}, {"matchLabels": None, "matchExpressions": []}):
        sel = label_selector_from_object(empty)
        assert not sel.matches_nothing and sel.is_everything and sel.matches(POD) and sel.matches({})


def test_object_form_matches_like_the_string_form() -> None:
    sel = label_selector_from_object({
        "matchLabels": {"app": "web"},
        "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["front", "back"]},
            {"key": "env", "operator": "NotIn", "values": ["prod"]},
            {"key": "replicas", "operator": "Exists"},
            {"key": "legacy", "operator": "DoesNotExist"},
        ],
    })
    assert sel.matches(POD)
    assert not sel.matches({**POD, "legacy": "yes"})
    assert not sel.matches({**POD, "env": "prod"})
    assert sel == parse_label_selector("app=web,tier in (front,back),env notin (prod),replicas,!legacy")


@pytest.mark.parametrize("obj, message", [
    ({"matchExpressions": [{"key": "a", "operator": "Equals", "values": ["x"]}]},
     '"Equals" is not a valid label selector operator'),
    ({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]}, "can't be empty"),
    ({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}, "must be empty"),
    ({"matchLabels": {"a b": "x"}}, 'key: Invalid value: "a b"'),
    ({"matchLabels": {"a": "x y"}}, "a valid label must be an empty string"),
    ({"matchLabels": ["a"]}, "matchLabels"),
    ("app=web", "must be an object"),
])
def test_object_form_errors(obj, message: str) -> None:
    with pytest.raises(SelectorError) as err:
        label_selector_from_object(obj)
    assert message in str(err.value)


# --- field selectors -------------------------------------------------------------------------

def _getter(values: dict[str, str]):
    return values.get


def test_field_selector_terms_and_matching() -> None:
    sel = parse_field_selector("metadata.name=web,status.phase!=Failed,spec.nodeName==n1")
    assert sel.requirements == [("metadata.name", "=", "web"), ("status.phase", "!=", "Failed"),
                                ("spec.nodeName", "=", "n1")]
    assert sel.fields() == {"metadata.name", "status.phase", "spec.nodeName"}
    assert sel.exact("metadata.name") == "web"
    assert sel.exact("status.phase") is None  # a != term cannot narrow a query
    assert sel.exact("nope") is None
    pod = {"metadata.name": "web", "status.phase": "Running", "spec.nodeName": "n1"}
    assert sel.matches(_getter(pod))
    assert not sel.matches(_getter({**pod, "status.phase": "Failed"}))
    assert not sel.matches(_getter({**pod, "metadata.name": "db"}))


def test_missing_field_reads_as_empty_string() -> None:
    assert parse_field_selector("spec.nodeName=").matches(_getter({}))
    assert not parse_field_selector("spec.nodeName!=").matches(_getter({}))
    assert parse_field_selector("spec.nodeName!=").matches(_getter({"spec.nodeName": "n1"}))


def test_field_selector_escapes() -> None:
    sel = parse_field_selector(r"metadata.name=a\,b\=c\\d,x=y")
    assert sel.requirements == [("metadata.name", "=", "a,b=c\\d"), ("x", "=", "y")]
    assert str(sel) == r"metadata.name=a\,b\=c\\d,x=y"


def test_empty_field_selector_matches_everything() -> None:
    for text in ("", ",", " , "):
        sel = parse_field_selector(text)
        assert sel.is_everything and sel.matches(lambda _: None) and sel.fields() == set()


@pytest.mark.parametrize("text, message", [
    ("metadata.name", "invalid selector: 'metadata.name'; can't understand 'metadata.name'"),
    ("=x", "can't understand"),
    (r"a=b\c", r"invalid escape sequence: \c"),
    ("a=b\\", "invalid escape sequence"),
    ("a=b=c", "unescaped character in value: ="),
])
def test_field_selector_errors(text: str, message: str) -> None:
    with pytest.raises(SelectorError) as err:
        parse_field_selector(text)
    assert message in str(err.value)


# --- properties ------------------------------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab=!(),<> in notx1-_./\\\t")), max_size=30))
def test_label_parser_only_ever_raises_selector_error(text: str) -> None:
    try:
        sel = parse_label_selector(text)
    except SelectorError:
        return
    assert parse_label_selector(str(sel)) == sel


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_field_parser_only_ever_raises_selector_error(text: str) -> None:
    try:
        parse_field_selector(text)
    except SelectorError:
        pass


NAMES = st.from_regex(r"[a-z0-9]([a-z0-9._-]{0,10}[a-z0-9])?", fullmatch=True)
REQUIREMENTS = st.one_of(
    st.tuples(NAMES, st.sampled_from(["=", "==", "!="]), NAMES | st.just("")).map(lambda t: f"{t[0]}{t[1]}{t[2]}"),
    st.tuples(NAMES, st.sampled_from(["in", "notin"]), st.lists(NAMES, min_size=1, max_size=3))
      .map(lambda t: f"{t[0]} {t[1]} ({','.join(t[2])})"),
    NAMES, NAMES.map(lambda k: f"!{k}"),
    st.tuples(NAMES, st.sampled_from([">", "<"]), st.integers(0, 99)).map(lambda t: f"{t[0]}{t[1]}{t[2]}"),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(REQUIREMENTS, max_size=4), st.dictionaries(NAMES, NAMES, max_size=4))
def test_generated_selectors_round_trip_and_match_consistently(parts: list[str], labels: dict) -> None:
    sel = parse_label_selector(", ".join(parts))
    again = parse_label_selector(str(sel))
    assert again == sel
    assert again.matches(labels) == sel.matches(labels)
    # An AND: the whole matches exactly when every clause matches on its own.
    assert sel.matches(labels) == all(parse_label_selector(p).matches(labels) for p in parts)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.from_regex(r"[a-z][a-z.]{0,12}", fullmatch=True),
                          st.sampled_from(["=", "!="]), st.text(max_size=12)), max_size=4))
def test_field_selector_round_trips_any_value(terms: list[tuple[str, str, str]]) -> None:
    sel = FieldSelector(tuple(terms))
    assert parse_field_selector(str(sel)) == sel


def test_label_selector_nothing_is_distinct_from_everything() -> None:
    assert LabelSelector.nothing() != LabelSelector()
    assert LabelSelector().matches({"anything": "at-all"})
