"""Every refusal reads as kube-apiserver writes it: bad manifests of every kind come back as a
Kubernetes Status (4xx) whose message has Go's spelling of values (`"null"`, `true`, `"x"`, `5`)
and never Python's (`None`, `True`, `'x'`, `{'a': 1}`) nor a traceback."""

import json
import re

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

PYTHON_TEXT = re.compile(
    r"\bNone\b|\bTrue\b|\bFalse\b|Traceback|<class|"
    r"(?:Invalid|Unsupported|Duplicate) value: '|\{'|\['|\('"  # repr quoting of a value
    r"|unterminated subpattern|at position \d"  # Python's re error text
)

NS = "/api/v1/namespaces/default"
APPS = "/apis/apps/v1/namespaces/default"
HPA = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def _deployment(name="web", **spec):
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}, **spec}}


def _hpa(**spec):
    base = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 3}
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"},
            "spec": {**base, **spec}}


def _crd(schema=None, **spec):
    body = {"group": "kitchen.example.com", "scope": "Namespaced",
            "names": {"plural": "pans", "singular": "pan", "kind": "Pan", "listKind": "PanList"},
            "versions": [{"name": "v1", "served": True, "storage": True,
                          "schema": {"openAPIV3Schema": schema or {"type": "object"}}}], **spec}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "pans.kitchen.example.com"}, "spec": body}


BAD_WRITES = {
    "pod with a boolean grace period": ("POST", f"{NS}/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "x"}], "terminationGracePeriodSeconds": -3,
                 "restartPolicy": "Sometimes"}}),
    "service with a null protocol and a bad type": ("POST", f"{NS}/services", {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
        "spec": {"type": "Magic", "ports": [{"port": 0, "protocol": "HTTP"}]}}),
    "event without a type": ("POST", f"{NS}/events", {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}, "reason": "R", "type": "Loud"}),
    "deployment with a word for maxUnavailable": ("POST", f"{APPS}/deployments", _deployment(
        replicas=-1, strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "lots"}})),
    "hpa with zero bounds and slashes": ("POST", HPA, _hpa(
        minReplicas=0, maxReplicas=0,
        scaleTargetRef={"apiVersion": "apps/v1", "kind": "Deploy/ment", "name": "a/b"},
        metrics=[{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                            "averageUtilization": 0}}}],
        behavior={"scaleUp": {"stabilizationWindowSeconds": -1, "selectPolicy": "Sideways",
                              "policies": [{"type": "Pods", "value": 0, "periodSeconds": 0}]}})),
    "lease with a zero duration": ("POST", LEASES, {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
        "spec": {"leaseDurationSeconds": 0, "leaseTransitions": -1}}),
    "crd with a broken pattern and a boolean scope": ("POST", CRDS, _crd(
        scope=True, schema={"type": "object", "properties": {"a": {"type": "string", "pattern": "("},
                                                             "b": {"type": "string", "pattern": "a**"}}})),
    "crd with a default of the wrong type": ("POST", CRDS, _crd(
        schema={"type": "object", "properties": {"n": {"type": "integer", "default": "many"},
                                                 "t": {"type": "string", "enum": ["x"], "default": True}}})),
    "configmap put without a name": ("PUT", f"{NS}/configmaps/named", {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}),
    "configmap put with a boolean name": ("PUT", f"{NS}/configmaps/named", {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": True}}),
}


def _refusal(answer) -> dict:
    assert answer["Content-Type"] == "application/json"
    status = json.loads(answer.content)
    assert 400 <= answer.status_code < 500 and status["kind"] == "Status", status
    return status


def _texts(status: dict) -> list[str]:
    causes = (status.get("details") or {}).get("causes") or []
    return [status["message"], *(c.get("message", "") for c in causes)]


@pytest.mark.parametrize("case", sorted(BAD_WRITES))
def test_a_bad_manifest_is_refused_in_go_spelling(api, case):
    method, path, body = BAD_WRITES[case]
    status = _refusal(api.request(method, path, json.dumps(body)))
    for text in _texts(status):
        assert not PYTHON_TEXT.search(text), f"{case}: {text}"


def test_an_immutable_selector_is_printed_as_go_prints_a_label_selector(api):
    assert api.post(f"{APPS}/deployments", json.dumps(_deployment())).status_code == 201
    changed = _deployment(selector={"matchLabels": {"app": "web", "tier": "front"}})
    changed["spec"]["template"]["metadata"]["labels"]["tier"] = "front"
    status = _refusal(api.put(f"{APPS}/deployments/web", json.dumps(changed)))
    assert ('spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web", '
            '"tier":"front"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable'
            in status["message"])


def test_a_broken_pattern_is_worded_as_go_regexp_words_it(api):
    status = _refusal(api.post(CRDS, json.dumps(_crd(
        schema={"type": "object", "properties": {"a": {"type": "string", "pattern": "("}}}))))
    assert ("must be a valid regular expression, but isn't: error parsing regexp: missing closing ): `(`"
            in status["message"])


def test_a_name_missing_from_the_body_is_empty_not_none(api):
    status = _refusal(api.put(f"{NS}/configmaps/named", json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                                                                      "metadata": {}})))
    assert status["message"] == "the name of the object () does not match the name on the URL (named)"


def test_delete_options_dry_run_is_printed_as_a_go_string_list(api):
    api.post(f"{NS}/configmaps", json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}))
    status = _refusal(api.delete(f"{NS}/configmaps/c", json.dumps({"dryRun": ["Some", "All"]})))
    assert 'dryRun: Unsupported value: []string{"Some", "All"}: supported values: "All"' in status["message"]


def test_a_precondition_on_a_boolean_uid_prints_it_as_go(api):
    api.post(f"{NS}/configmaps", json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}))
    status = _refusal(api.delete(f"{NS}/configmaps/c", json.dumps({"preconditions": {"uid": True}})))
    assert not PYTHON_TEXT.search(status["message"]), status["message"]
