"""EndpointSlice validation, defaults and kubectl's table, as pure functions (upstream's
pkg/apis/discovery/validation and the EndpointSlice printer)."""

from control.kinds.endpointslices import (
    ENDPOINTSLICE, content_changed, endpointslice_cells, endpointslice_defaults, validate_endpointslice,
    validate_endpointslice_update,
)


def _slice(endpoints=None, ports=None, address_type="IPv4"):
    s = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
         "metadata": {"name": "web-abc", "namespace": "default", "creationTimestamp": "2026-01-01T00:00:00Z"},
         "addressType": address_type, "endpoints": endpoints if endpoints is not None else [],
         "ports": ports if ports is not None else [{"name": "http", "port": 80}]}
    endpointslice_defaults(s)
    return s


def _messages(causes):
    return [(c["field"], c["message"]) for c in causes]


def test_defaults_give_every_port_a_name_and_tcp():
    s = _slice(ports=[{"port": 80}, {"name": "dns", "port": 53, "protocol": "UDP"}])
    assert s["ports"] == [{"port": 80, "name": "", "protocol": "TCP"}, {"name": "dns", "port": 53, "protocol": "UDP"}]


def test_a_good_slice_has_no_causes():
    s = _slice([{"addresses": ["10.244.1.2"], "conditions": {"ready": True}, "nodeName": "node-1",
                 "hostname": "web-0", "targetRef": {"kind": "Pod", "name": "web-0"}}])
    assert validate_endpointslice(s) == []
    assert validate_endpointslice(_slice([{"addresses": ["web.example.com"]}], address_type="FQDN")) == []
    assert validate_endpointslice(_slice([{"addresses": ["fd00::5"]}], address_type="IPv6")) == []


def test_address_type_is_required_supported_and_immutable():
    assert _messages(validate_endpointslice(_slice(address_type=""))) == [("addressType", "Required value")]
    assert _messages(validate_endpointslice(_slice(address_type="IP"))) == [
        ("addressType", 'Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"')]
    assert _messages(validate_endpointslice_update(_slice(address_type="IPv6"), _slice())) == [
        ("addressType", 'Invalid value: "IPv6": field is immutable')]
    assert validate_endpointslice_update(_slice(), _slice()) == []


def test_addresses_must_match_the_type_and_not_be_special():
    causes = validate_endpointslice(_slice([{"addresses": ["fd00::1"]}, {"addresses": ["127.0.0.1"]},
                                            {"addresses": []}, {"addresses": ["0.0.0.0", "169.254.1.1"]}]))
    assert _messages(causes) == [
        ("endpoints[0].addresses[0]", 'Invalid value: "fd00::1": must be a valid IPv4 address'),
        ("endpoints[1].addresses[0]", 'Invalid value: "127.0.0.1": may not be in the loopback range '
                                      "(127.0.0.0/8, ::1/128)"),
        ("endpoints[2].addresses", "Required value: must contain at least 1 address"),
        ("endpoints[3].addresses[0]", 'Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)'),
        ("endpoints[3].addresses[1]", 'Invalid value: "169.254.1.1": may not be in the link-local range '
                                      "(169.254.0.0/16, fe80::/10)")]
    fqdn = validate_endpointslice(_slice([{"addresses": ["localhost"]}], address_type="FQDN"))
    assert _messages(fqdn) == [("endpoints[0].addresses[0]", 'Invalid value: "localhost": should be a domain with at '
                                                             "least two segments separated by dots")]


def test_node_name_and_hostname_follow_dns_rules():
    causes = validate_endpointslice(_slice([{"addresses": ["10.0.0.1"], "nodeName": "Node_1", "hostname": "a.b"}]))
    assert [c["field"] for c in causes] == ["endpoints[0].nodeName", "endpoints[0].hostname"]


def test_at_most_1000_endpoints_and_100_addresses_each():
    many = [{"addresses": [f"10.0.{i // 250}.{i % 250 + 1}"]} for i in range(1001)]
    assert _messages(validate_endpointslice(_slice(many))) == [
        ("endpoints", "Too many: 1001: must have at most 1000 items")]
    assert validate_endpointslice(_slice(many[:1000])) == []
    crowded = [{"addresses": [f"10.1.0.{i + 1}" for i in range(101)]}]
    assert _messages(validate_endpointslice(_slice(crowded))) == [
        ("endpoints[0].addresses", "Too many: 101: must have at most 100 items")]


def test_ports_unique_names_and_known_protocols():
    s = _slice(ports=[{"name": "http", "port": 80}, {"name": "http", "port": 81}, {"name": "Bad_Name", "port": 82},
                      {"name": "q", "port": 83, "protocol": "ICMP"}])
    assert [(c["field"], c["reason"]) for c in validate_endpointslice(s)] == [
        ("ports[1].name", "FieldValueDuplicate"), ("ports[2].name", "FieldValueInvalid"),
        ("ports[3].protocol", "FieldValueNotSupported")]


def test_generation_follows_content_not_metadata():
    old = _slice([{"addresses": ["10.0.0.1"]}])
    relabelled = {**old, "metadata": {**old["metadata"], "labels": {"a": "b"}}}
    assert not content_changed(relabelled, old)
    assert content_changed(_slice([{"addresses": ["10.0.0.2"]}]), old)


def test_table_cells_as_kubectl_prints_them():
    assert [c.name for c in ENDPOINTSLICE.columns] == ["Name", "AddressType", "Ports", "Endpoints", "Age"]
    s = _slice([{"addresses": [f"10.0.0.{i}"]} for i in range(1, 6)],
               ports=[{"name": "a", "port": 80}, {"name": "b", "port": 81}, {"name": "c", "port": 82},
                      {"name": "d", "port": 83}])
    cells = endpointslice_cells(s, 1767225600.0 + 120)
    assert cells == ["web-abc", "IPv4", "80,81,82 + 1 more...", "10.0.0.1,10.0.0.2,10.0.0.3 + 2 more...", "2m"]
    empty = {**_slice(), "ports": None}
    assert endpointslice_cells(empty, 1767225600.0)[2:4] == ["<unset>", "<unset>"]


def test_a_bad_ip_gets_both_upstream_checks_and_zone_hints_are_bounded():
    causes = validate_endpointslice(_slice([{"addresses": ["abc"]}]))
    assert _messages(causes) == [("endpoints[0].addresses[0]", 'Invalid value: "abc": must be a valid IPv4 address'),
                                 ("endpoints[0].addresses[0]", 'Invalid value: "abc": must be a valid IP address')]
    hints = {"forZones": [{"name": "a"}, {"name": "a"}, {"name": "-bad"}]}
    causes = validate_endpointslice(_slice([{"addresses": ["10.0.0.1"], "hints": hints}]))
    assert [(c["field"], c["reason"]) for c in causes] == [("endpoints[0].hints.forZones[1].name", "FieldValueDuplicate"),
                                                          ("endpoints[0].hints.forZones[2].name", "FieldValueInvalid")]
    many = {"forZones": [{"name": f"z{i}"} for i in range(9)]}
    assert _messages(validate_endpointslice(_slice([{"addresses": ["10.0.0.1"], "hints": many}]))) == [
        ("endpoints[0].hints.forZones", "Too many: 9: must have at most 8 items")]
