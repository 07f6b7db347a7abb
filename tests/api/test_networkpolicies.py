"""networking.k8s.io/v1 NetworkPolicy through the hub: upstream's defaults, its 422s with nothing
stored, kubectl's table, the short name in discovery."""

import json

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

POLICIES = "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def _policy(name, **spec):
    return json.dumps({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": name},
                       "spec": {"podSelector": {}, **spec}})


def test_default_deny_is_stored_with_upstream_defaults_and_listed(api):
    made = api.post(POLICIES, _policy("default-deny-ingress", policyTypes=["Ingress"]))
    assert made.status_code == 201, made.content
    allow = api.post(POLICIES, _policy("allow-db", podSelector={"matchLabels": {"role": "db"}},
                                       egress=[{"ports": [{"port": 53}]}]))
    stored = json.loads(allow.content)
    assert stored["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert stored["spec"]["egress"][0]["ports"][0] == {"port": 53, "protocol": "TCP"}
    assert stored["metadata"]["generation"] == 1
    table = json.loads(api.get(POLICIES, HTTP_ACCEPT=TABLE).content)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Pod-Selector", "Age"]
    assert [r["cells"][:2] for r in table["rows"]] == [["allow-db", "role=db"], ["default-deny-ingress", "<none>"]]
    resources = json.loads(api.get("/apis/networking.k8s.io/v1").content)["resources"]
    assert next(r for r in resources if r["name"] == "networkpolicies")["shortNames"] == ["netpol"]


def test_bad_policies_are_422_and_nothing_is_stored(api):
    out_of_range = api.post(POLICIES, _policy("far", ingress=[{"ports": [{"port": 70000}]}]))
    assert out_of_range.status_code == 422, out_of_range.content
    assert json.loads(out_of_range.content)["message"] == (
        'NetworkPolicy.networking.k8s.io "far" is invalid: spec.ingress[0].ports[0].port: Invalid value: 70000: '
        'must be between 1 and 65535, inclusive')
    not_cidr = api.post(POLICIES, _policy("blocky", egress=[{"to": [{"ipBlock": {"cidr": "10.0.0.300/24"}}]}]))
    assert not_cidr.status_code == 422, not_cidr.content
    status = json.loads(not_cidr.content)
    assert status["reason"] == "Invalid" and status["details"]["causes"] == [{
        "reason": "FieldValueInvalid", "field": "spec.egress[0].to[0].ipBlock.cidr",
        "message": 'Invalid value: "10.0.0.300/24": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'}]
    assert json.loads(api.get(POLICIES).content)["items"] == []
