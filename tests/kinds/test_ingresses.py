"""Ingress validation, printing and status reset as upstream's (messages compared whole)."""

from control.kinds.ingresses import INGRESS, ingress_cells, validate_ingress, validate_ingress_update


def _ingress(spec, **meta):
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": "front", "namespace": "default", **meta}, "spec": spec}


def _rule(path="/soup", path_type="Prefix", host="menu.example", backend=None):
    backend = backend if backend is not None else {"service": {"name": "soup", "port": {"number": 80}}}
    http_path = {"path": path, "backend": backend}
    if path_type is not None:
        http_path["pathType"] = path_type
    return {"host": host, "http": {"paths": [http_path]}}


def _messages(causes):
    return [f"{c['field']}: {c['message']}" for c in causes]


def test_a_good_ingress_has_no_causes():
    assert validate_ingress(_ingress({"rules": [_rule()], "tls": [{"hosts": ["menu.example"], "secretName": "t"}],
                                      "ingressClassName": "kitchen"})) == []
    assert validate_ingress(_ingress({"defaultBackend": {"resource": {"apiGroup": "k8s.example.com",
                                                                      "kind": "StorageBucket", "name": "static"}}})) == []


def test_rules_or_a_default_backend_is_required():
    assert _messages(validate_ingress(_ingress({}))) == [
        "spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified"]


def test_paths_must_be_absolute_and_typed():
    assert _messages(validate_ingress(_ingress({"rules": [_rule(path="soup")]}))) == [
        'spec.rules[0].http.paths[0].path: Invalid value: "soup": must be an absolute path']
    assert _messages(validate_ingress(_ingress({"rules": [_rule(path_type="Regex")]}))) == [
        'spec.rules[0].http.paths[0].pathType: Unsupported value: "Regex": supported values: "Exact", '
        '"ImplementationSpecific", "Prefix"']
    assert _messages(validate_ingress(_ingress({"rules": [_rule(path_type=None)]}))) == [
        "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"]
    assert _messages(validate_ingress(_ingress({"rules": [_rule(path="/a//b/.")]}))) == [
        "spec.rules[0].http.paths[0].path: Invalid value: \"/a//b/.\": must not contain '//'",
        "spec.rules[0].http.paths[0].path: Invalid value: \"/a//b/.\": cannot end with '/.'"]
    # ImplementationSpecific may leave the path empty
    assert validate_ingress(_ingress({"rules": [_rule(path="", path_type="ImplementationSpecific")]})) == []


def test_backends_name_a_service_port_once():
    both = {"service": {"name": "soup", "port": {"name": "http", "number": 80}}}
    neither = {"service": {"name": "soup", "port": {}}}
    assert _messages(validate_ingress(_ingress({"rules": [_rule(backend=both)]}))) == [
        'spec.rules[0].http.paths[0].backend: Invalid value: "": cannot set both port name & port number']
    assert _messages(validate_ingress(_ingress({"rules": [_rule(backend=neither)]}))) == [
        "spec.rules[0].http.paths[0].backend: Required value: port name or number is required"]
    assert _messages(validate_ingress(_ingress({"defaultBackend": {}}))) == [
        'spec.defaultBackend: Invalid value: "": resource or service backend is required']
    bad = {"service": {"name": "9soup", "port": {"number": 70000}}}
    assert _messages(validate_ingress(_ingress({"defaultBackend": bad}))) == [
        "spec.defaultBackend.service.name: Invalid value: \"9soup\": a DNS-1035 label must consist of lower case "
        "alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character "
        "(e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        "spec.defaultBackend.service.port.number: Invalid value: 70000: must be between 1 and 65535, inclusive"]


def test_hosts_are_names_wildcards_allowed_ips_not():
    assert validate_ingress(_ingress({"rules": [_rule(host="*.menu.example")]})) == []
    assert _messages(validate_ingress(_ingress({"rules": [_rule(host="10.0.0.1")]}))) == [
        'spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address']
    assert _messages(validate_ingress(_ingress({"rules": [_rule(host="a.*.example")]})))[0].startswith(
        'spec.rules[0].host: Invalid value: "a.*.example": a wildcard DNS-1123 subdomain must start with \'*.\'')


def test_class_annotation_must_agree_on_create_only():
    ing = _ingress({"rules": [_rule()], "ingressClassName": "kitchen"},
                   annotations={"kubernetes.io/ingress.class": "nginx"})
    assert _messages(validate_ingress(ing)) == [
        'annotations.kubernetes.io/ingress.class: Invalid value: "nginx": must match `ingressClassName` when both '
        "are specified"]
    assert validate_ingress_update(ing, ing) == []


def test_an_update_keeps_a_stored_invalid_wildcard_rule():
    stored = _ingress({"rules": [_rule(host="*.menu.example", path="soup")]})
    assert validate_ingress_update(stored, stored) == []
    fresh = _ingress({"rules": [_rule(path="soup")]})
    assert len(validate_ingress_update(fresh, fresh)) == 1


def test_kubectl_columns():
    ing = _ingress({"rules": [_rule(host=h) for h in ("a.x", "", "c.x", "d.x", "e.x")], "tls": [{"hosts": ["a.x"]}]})
    ing["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    ing["status"] = {"loadBalancer": {"ingress": [{"ip": "192.168.200.10"}, {"hostname": "front.kitchen.local"},
                                                  {"ip": "192.168.200.10"}]}}
    assert [c.name for c in INGRESS.columns] == ["Name", "Class", "Hosts", "Address", "Ports", "Age"]
    name, klass, hosts, address, ports, _ = ingress_cells(ing, 0)
    assert (name, klass, hosts, address, ports) == ("front", "<none>", "a.x,c.x + 2 more...", "192.168.200.1...",
                                                    "80, 443")
    plain = _ingress({"defaultBackend": {}, "ingressClassName": "kitchen"})
    plain["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    assert ingress_cells(plain, 0)[1:5] == ["kitchen", "*", "", "80"]


def test_create_resets_the_status():
    ing = _ingress({"rules": [_rule()]})
    ing["status"] = {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}
    INGRESS.prepare_for_create(ing)
    assert ing["status"] == {"loadBalancer": {}}
