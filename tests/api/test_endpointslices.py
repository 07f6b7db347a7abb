"""discovery.k8s.io/v1 EndpointSlice through the hub: defaults and generation, upstream's 422s with
nothing stored, the immutable addressType, and kubectl's table."""

import json

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

PATH = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def _slice(name="web-abc", address_type="IPv4", endpoints=None, ports=None):
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": name, "labels": {"kubernetes.io/service-name": "web"}},
            "addressType": address_type,
            "endpoints": endpoints if endpoints is not None else [
                {"addresses": ["10.244.1.5"], "conditions": {"ready": True}, "nodeName": "node-1"}],
            "ports": ports if ports is not None else [{"name": "http", "port": 8080}]}


def test_created_with_defaults_generation_and_shown_in_kubectls_columns(api):
    made = api.post(PATH, json.dumps(_slice()))
    assert made.status_code == 201, made.content
    body = json.loads(made.content)
    assert body["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    assert body["metadata"]["generation"] == 1
    table = json.loads(api.get(PATH, HTTP_ACCEPT=TABLE).content)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "AddressType", "Ports", "Endpoints", "Age"]
    assert table["rows"][0]["cells"][:4] == ["web-abc", "IPv4", "8080", "10.244.1.5"]
    listed = json.loads(api.get(f"{PATH}?labelSelector=kubernetes.io/service-name=web").content)
    assert [i["metadata"]["name"] for i in listed["items"]] == ["web-abc"]


def test_bad_slices_are_422_with_upstreams_messages_and_nothing_is_stored(api):
    bad = api.post(PATH, json.dumps(_slice(address_type="IP", endpoints=[{"addresses": ["127.0.0.1"]}])))
    assert bad.status_code == 422, bad.content
    status = json.loads(bad.content)
    assert status["kind"] == "Status" and status["reason"] == "Invalid"
    assert [(c["field"], c["message"]) for c in status["details"]["causes"]] == [
        ("addressType", 'Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"')]
    loopback = api.post(PATH, json.dumps(_slice(endpoints=[{"addresses": ["127.0.0.1"]}])))
    assert loopback.status_code == 422 and "may not be in the loopback range" in json.loads(loopback.content)["message"]
    many = api.post(PATH, json.dumps(_slice(endpoints=[{"addresses": [f"10.0.{i // 250}.{i % 250 + 1}"]}
                                                       for i in range(1001)])))
    assert many.status_code == 422 and "Too many: 1001: must have at most 1000 items" in json.loads(many.content)["message"]
    assert json.loads(api.get(PATH).content)["items"] == []


def test_address_type_is_immutable_and_a_content_change_bumps_generation(api):
    made = json.loads(api.post(PATH, json.dumps(_slice())).content)
    changed = api.put(f"{PATH}/web-abc", json.dumps({**made, "addressType": "IPv6"}), content_type="application/json")
    assert changed.status_code == 422, changed.content
    assert 'addressType: Invalid value: "IPv6": field is immutable' in json.loads(changed.content)["message"]
    moved = {**made, "endpoints": [{"addresses": ["10.244.1.6"], "conditions": {"ready": False}}]}
    updated = api.put(f"{PATH}/web-abc", json.dumps(moved), content_type="application/json")
    assert updated.status_code == 200, updated.content
    assert json.loads(updated.content)["metadata"]["generation"] == 2
