"""Statuses as kube-apiserver writes them, and bad values as Go prints them."""

import json

import pytest

from control import errors
from control.api.responses import error_response


def test_status_fields_come_in_kube_apiservers_order():
    status = errors.not_found("apps/deployments", "web").status()
    assert list(status) == ["kind", "apiVersion", "metadata", "status", "message", "reason", "details", "code"]
    assert list(errors.BadRequest("no").status()) == ["kind", "apiVersion", "metadata", "status", "message",
                                                     "reason", "code"]


def test_details_come_in_status_details_order_whoever_built_them():
    # metav1.StatusDetails declares name, group, kind, uid, causes, retryAfterSeconds: the official
    # Python client's e2e test compares a 409's details with kube-apiserver's text.
    reply = error_response(errors.already_exists("apps/deployments", "web"))
    assert b'"details":{"name":"web","group":"apps","kind":"deployments"}' in reply.body
    scrambled = errors.TooManyRequests("x", details={
        "retryAfterSeconds": 10, "causes": [{"message": "m"}], "uid": "u", "kind": "pods", "group": "", "name": "p"})
    assert list(scrambled.status()["details"]) == ["name", "kind", "uid", "causes", "retryAfterSeconds"]
    assert list(errors.invalid("Deployment", "apps", "web", [{"message": "m"}]).status()["details"]) == [
        "name", "group", "kind", "causes"]
    assert errors.not_found("/pods", "p").status()["details"] == {"name": "p", "kind": "pods"}  # no empty group


def test_ordered_details_keeps_what_status_details_does_not_declare():
    assert list(errors.ordered_details({"extra": 1, "kind": "k", "name": "n"})) == ["name", "kind", "extra"]
    assert errors.ordered_details(None) == {} and errors.ordered_details({"group": "", "uid": ""}) == {}


def test_an_error_body_is_compact_json_ending_in_a_newline():
    reply = error_response(errors.conflict("/pods", "x"))
    assert reply.body.endswith(b'"code":409}\n') and reply.body.count(b"\n") == 1
    assert reply.body.startswith(b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":')
    assert json.loads(reply.body)["reason"] == "Conflict" and reply.status == 409


@pytest.mark.parametrize("value, shown", [
    (None, '"null"'), (True, "true"), (False, "false"), ("x", '"x"'), (3, "3"), (2.0, "2"), (2.5, "2.5"),
    ({"b": None, "a": [1]}, '{"a":[1],"b":null}'),
])
def test_go_value_prints_as_go_does(value, shown):
    assert errors.go_value(value) == shown


def test_field_invalid_reads_as_a_go_field_error():
    assert errors.field_invalid("spec.replicas", None, "must be an integer") == (
        'spec.replicas: Invalid value: "null": must be an integer')


@pytest.mark.parametrize("value, shown", [
    (None, ""), ("web", "web"), (True, "true"), (7, "7"), (1.0, "1"), (["a"], '["a"]'),
])
def test_go_text_prints_a_string_field_as_go_formats_it_in_a_sentence(value, shown):
    assert errors.go_text(value) == shown


@pytest.mark.parametrize("value, shown", [
    (None, "[]string(nil)"), ([], "[]string(nil)"), (["All"], '[]string{"All"}'),
    (["a", None, True], '[]string{"a", "", "true"}'), ("All", '"All"'),
])
def test_go_strings_prints_a_string_list_as_go_percent_hash_v(value, shown):
    assert errors.go_strings(value) == shown
