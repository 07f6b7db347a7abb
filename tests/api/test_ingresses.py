"""networking.k8s.io/v1 Ingress and IngressClass through the hub: the bootstrap `kitchen` class
given to Ingresses naming none, upstream's 422s with nothing stored, kubectl's tables, the status
subresource, and the controller immutable on an IngressClass."""

import json

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

INGRESSES = "/apis/networking.k8s.io/v1/namespaces/default/ingresses"
CLASSES = "/apis/networking.k8s.io/v1/ingressclasses"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def _ingress(name, path="/testpath", path_type="Prefix", **spec):
    return json.dumps({
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": name},
        "spec": {"rules": [{"http": {"paths": [{"path": path, "pathType": path_type, "backend": {
            "service": {"name": "test", "port": {"number": 80}}}}]}}], **spec}})


def test_the_kitchen_class_is_the_default_and_given_to_an_ingress(api):
    table = json.loads(api.get(CLASSES, HTTP_ACCEPT=TABLE).content)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Controller", "Parameters", "Age"]
    assert [r["cells"][:3] for r in table["rows"]] == [["kitchen", "kubekitchen.dev/ingress", "<none>"]]
    made = api.post(INGRESSES, _ingress("front"))
    assert made.status_code == 201, made.content
    assert json.loads(made.content)["spec"]["ingressClassName"] == "kitchen"
    named = json.loads(api.post(INGRESSES, _ingress("named", ingressClassName="nginx-example")).content)
    assert named["spec"]["ingressClassName"] == "nginx-example"


def test_bad_ingresses_are_422_and_nothing_is_stored(api):
    relative = api.post(INGRESSES, _ingress("relative", path="testpath"))
    assert relative.status_code == 422, relative.content
    assert json.loads(relative.content)["message"] == (
        'Ingress.networking.k8s.io "relative" is invalid: spec.rules[0].http.paths[0].path: Invalid value: '
        '"testpath": must be an absolute path')
    unknown = api.post(INGRESSES, _ingress("unknown", path_type="Regex"))
    assert unknown.status_code == 422 and json.loads(unknown.content)["message"].endswith(
        'pathType: Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix"')
    assert api.get(f"{INGRESSES}/relative").status_code == 404 and api.get(f"{INGRESSES}/unknown").status_code == 404
    for shapeless in ({"rules": 5}, {"rules": [{"http": {"paths": "soup"}}]}, {"tls": [{"hosts": 3}]},
                      {"defaultBackend": {"service": {"name": 7, "port": {"number": "80"}}}}):
        answer = api.post(INGRESSES, json.dumps({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                                                 "metadata": {"name": "shapeless"}, "spec": shapeless}))
        assert answer.status_code in (400, 422) and json.loads(answer.content)["kind"] == "Status", answer.content
    assert api.get(f"{INGRESSES}/shapeless").status_code == 404


def test_table_and_status_subresource(api):
    body = json.loads(_ingress("tls", tls=[{"hosts": ["menu.example"], "secretName": "menu-tls"}]))
    body["spec"]["rules"][0]["host"] = "menu.example"
    body["status"] = {"loadBalancer": {"ingress": [{"ip": "6.6.6.6"}]}}
    made = json.loads(api.post(INGRESSES, json.dumps(body)).content)
    assert made["status"] == {"loadBalancer": {}}  # the client may not write the status on create
    made["status"] = {"loadBalancer": {"ingress": [{"ip": "192.168.49.2"}]}}
    written = api.put(f"{INGRESSES}/tls/status", json.dumps(made), content_type="application/json")
    assert written.status_code == 200, written.content
    table = json.loads(api.get(INGRESSES, HTTP_ACCEPT=TABLE).content)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Class", "Hosts", "Address", "Ports", "Age"]
    assert [r["cells"][:5] for r in table["rows"]] == [["tls", "kitchen", "menu.example", "192.168.49.2", "80, 443"]]


def test_an_ingress_class_controller_cannot_change(api):
    made = api.post(CLASSES, json.dumps({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
                                         "metadata": {"name": "nginx"}, "spec": {"controller": "k8s.io/ingress-nginx"}}))
    assert made.status_code == 201, made.content
    changed = api.patch(f"{CLASSES}/nginx", json.dumps({"spec": {"controller": "example.com/other"}}),
                        content_type="application/merge-patch+json")
    assert changed.status_code == 422, changed.content
    assert json.loads(changed.content)["message"] == (
        'IngressClass.networking.k8s.io "nginx" is invalid: spec.controller: Invalid value: "example.com/other": '
        "field is immutable")
