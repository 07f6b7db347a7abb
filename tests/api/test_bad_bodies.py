"""Undecodable bodies are refused as kube-apiserver refuses them, with no Python text in the message."""

import json
import re

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

PYTHON_TEXT = re.compile(r"\bNone\b|\bTrue\b|\bFalse\b|Expecting|line \d+ column|<class|\{'")


def _status(answer) -> dict:
    assert answer["Content-Type"] == "application/json"
    return json.loads(answer.content)


def test_a_body_that_is_not_json_is_an_unrecognized_object(api):
    answer = api.post("/api/v1/namespaces/default/pods", "not json")
    status = _status(answer)
    assert answer.status_code == 400 and status["reason"] == "BadRequest"
    assert status["message"] == ("the object provided is unrecognized (must be of type Pod): couldn't get "
                                 "version/kind; json parse error: invalid character 'o' in literal null "
                                 "(expecting 'u') (6e6f74206a736f6e)")


def test_a_truncated_object_names_the_end_of_input_and_shows_the_text(api):
    status = _status(api.post("/apis/apps/v1/namespaces/default/deployments", '{"kind": "Deployment"'))
    assert status["message"] == ("the object provided is unrecognized (must be of type Deployment): couldn't get "
                                 'version/kind; json parse error: unexpected end of JSON input ({"kind": "Deployment")')


@pytest.mark.parametrize("body", ["[]", '"pod"', "NaN", '{"a": Infinity}', '{"apiVersion": true}', '{"kind": 3}',
                                  "{'a': None}", "", "null"])
def test_no_python_text_in_any_decode_message(api, body):
    answer = api.put("/api/v1/namespaces/default/configmaps/c", body)
    status = _status(answer)
    assert answer.status_code == 400, status
    assert status["message"].startswith("the object provided is unrecognized (must be of type ConfigMap): ")
    said = status["message"].rsplit(" (", 1)[0]  # the excerpt after it is the client's own body
    assert not PYTHON_TEXT.search(said), status["message"]


def test_a_non_string_api_version_fails_as_go_decoding_fails(api):
    status = _status(api.post("/api/v1/namespaces", '{"apiVersion": true}'))
    assert "json: cannot unmarshal bool into Go struct field .apiVersion of type string" in status["message"]


def test_bad_yaml_is_refused_with_go_yamls_words(api):
    answer = api.post("/api/v1/namespaces/default/configmaps", "a: b: c", content_type="application/yaml")
    status = _status(answer)
    assert answer.status_code == 400
    assert status["message"].startswith("the object provided is unrecognized (must be of type ConfigMap): "
                                        "error converting YAML to JSON: yaml: line 1: mapping values are not allowed")


def test_a_scale_body_names_scale(api):
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                  "spec": {"selector": {"matchLabels": {"app": "web"}},
                           "template": {"metadata": {"labels": {"app": "web"}},
                                        "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    assert api.post("/apis/apps/v1/namespaces/default/deployments", json.dumps(deployment)).status_code == 201
    status = _status(api.put("/apis/apps/v1/namespaces/default/deployments/web/scale", "{"))
    assert status["message"].startswith("the object provided is unrecognized (must be of type Scale): ")


def test_a_bad_json_patch_path_shows_no_python_repr(api):
    api.post("/api/v1/namespaces/default/configmaps",
             json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p"}, "data": {"a": "1"}}))
    answer = api.patch("/api/v1/namespaces/default/configmaps/p", json.dumps(
        [{"op": "replace", "path": "/nothing/here", "value": 1}]), content_type="application/json-patch+json")
    status = _status(answer)
    assert answer.status_code == 422 and not PYTHON_TEXT.search(status["message"]), status["message"]
    answer = api.patch("/api/v1/namespaces/default/configmaps/p", json.dumps(
        [{"op": "test", "path": "/data/a", "value": True}]), content_type="application/json-patch+json")
    assert answer.status_code == 422 and not PYTHON_TEXT.search(_status(answer)["message"])


def test_a_binding_target_of_the_wrong_type_is_printed_as_go_prints_it(api):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    assert api.post("/api/v1/namespaces/default/pods", json.dumps(pod)).status_code == 201
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "b"}, "target": {"kind": True, "name": "n"}}
    status = _status(api.post("/api/v1/namespaces/default/pods/b/binding", json.dumps(binding)))
    assert "target.kind: Invalid value: true: must be empty or 'Node'" in status["message"]


def test_a_body_that_is_not_utf8_is_refused(api):
    answer = api.post("/api/v1/namespaces/default/pods", b'{"metadata": {"name": "\xff\xfe"}}')
    status = _status(answer)
    assert answer.status_code == 400 and "invalid UTF-8" in status["message"]


def test_an_object_over_one_and_a_half_mib_is_413_not_500(api):
    body = json.dumps({"metadata": {"name": "huge"}, "data": {"k": "x" * (1600 * 1024)}})
    answer = api.post("/api/v1/namespaces/default/configmaps", body)
    status = json.loads(answer.content)
    assert answer.status_code == 413 and status["reason"] == "RequestEntityTooLarge"
    assert status["message"] == "etcdserver: request is too large"
    assert api.get("/api/v1/namespaces/default/configmaps/huge").status_code == 404
