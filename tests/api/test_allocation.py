"""Service cluster IPs and node ports, allocated by the hub as Kubernetes' registry does: in range,
never twice, free again after a delete, requested ones honoured or refused with Kubernetes' words,
kept on update, dropped when the type no longer uses them."""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection, connections

from control.kinds import service_addresses as allocation
from control.storage.db import close_reader, submit
from control.kinds.network import NODE_PORT_RANGE, service_cidr
from tests.api.client import ApiClient

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
SVCS = "/api/v1/namespaces/default/services"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


@pytest.fixture
def api(api):
    yield api
    # The hub's database thread and its reader keep their connections; close them so PostgreSQL can
    # drop the test database.
    submit(connections.close_all).result()
    close_reader()


def service(name: str = "web", type_: str = "ClusterIP", **spec) -> dict:
    body = {"type": type_, "selector": {"app": name}, "ports": [{"port": 80, "targetPort": 8080}], **spec}
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": body}


def send(api: ApiClient, method: str, path: str, body=None, content_type="application/json", **extra):
    data = "" if body is None else json.dumps(body)
    response = getattr(api, method)(path, data=data, content_type=content_type, **extra)
    return response.status_code, json.loads(response.content) if response.content else None


def created(api: ApiClient, body: dict) -> dict:
    code, obj = send(api, "post", SVCS, body)
    assert code == 201, obj
    return obj


def small_range(monkeypatch, cidr: str) -> None:
    monkeypatch.setenv("KK_SERVICE_CIDR", cidr)  # read at each allocation, not at import


def test_a_cluster_ip_service_gets_a_free_address_from_the_service_range(api):
    spec = created(api, service())["spec"]
    address = ipaddress.ip_address(spec["clusterIP"])
    assert address in service_cidr() and str(address) not in allocation.reserved_ips(service_cidr())
    assert spec["clusterIPs"] == [spec["clusterIP"]]
    assert (spec["ipFamilies"], spec["ipFamilyPolicy"]) == (["IPv4"], "SingleStack")
    assert "nodePort" not in spec["ports"][0]
    code, got = send(api, "get", f"{SVCS}/web")
    assert got["spec"]["clusterIP"] == spec["clusterIP"], "the address is stored, not computed per read"


def test_addresses_are_never_shared_and_a_deleted_services_address_is_free_again(api, monkeypatch):
    small_range(monkeypatch, "10.96.7.0/29")  # 8 addresses: network, .1, broadcast reserved -> 5 usable
    ips = {created(api, service(f"s{i}"))["spec"]["clusterIP"] for i in range(5)}
    assert ips == {f"10.96.7.{n}" for n in range(2, 7)}
    code, status = send(api, "post", SVCS, service("full"))
    assert (code, status["message"]) == (500, "failed to allocate a serviceIP: range is full")
    assert send(api, "delete", f"{SVCS}/s3")[0] == 200
    freed = created(api, service("again"))["spec"]["clusterIP"]
    assert freed not in ips - {freed} and freed in ips, "the freed address is the only one left"


def test_a_requested_cluster_ip_is_honoured_when_free_and_refused_otherwise(api):
    assert created(api, service("a", clusterIP="10.96.100.100"))["spec"]["clusterIPs"] == ["10.96.100.100"]
    code, status = send(api, "post", SVCS, service("b", clusterIP="10.96.100.100"))
    assert (code, status["reason"]) == (422, "Invalid")
    assert status["message"] == ('Service "b" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.100.100"}: '
                                 "failed to allocate IP 10.96.100.100: provided IP is already allocated")
    code, status = send(api, "post", SVCS, service("c", clusterIP="192.168.0.10"))
    assert code == 422 and status["message"].endswith(
        "failed to allocate IP 192.168.0.10: the provided IP (192.168.0.10) is not in the valid range. "
        f"The range of valid IPs is {service_cidr()}")
    kubernetes_ip = str(service_cidr().network_address + 1)
    code, status = send(api, "post", SVCS, service("d", clusterIP=kubernetes_ip))
    assert code == 422 and "provided IP is already allocated" in status["message"], "the kubernetes Service's address"
    code, status = send(api, "post", SVCS, service("e", clusterIP="10.96.1.300"))
    assert code == 422 and "must be a valid IP address" in status["message"]
    assert send(api, "get", f"{SVCS}/b")[0] == 404, "a refused Service is not stored"


def test_headless_and_external_name_services_get_no_address(api):
    headless = created(api, service("db", clusterIP="None"))["spec"]
    assert (headless["clusterIP"], headless["clusterIPs"]) == ("None", ["None"])
    external = created(api, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "mail"},
                             "spec": {"type": "ExternalName", "externalName": "mail.example.com"}})["spec"]
    assert "clusterIP" not in external and "clusterIPs" not in external
    code, status = send(api, "post", SVCS, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x"},
                                            "spec": {"type": "ExternalName"}})
    assert code == 422 and "spec.externalName: Required value" in status["message"]
    code, status = send(api, "post", SVCS, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "y"},
                                            "spec": {"type": "ExternalName", "externalName": "a.example.com",
                                                     "clusterIP": "10.96.0.50"}})
    assert code == 422 and "may not be set for ExternalName services" in status["message"]
    code, status = send(api, "post", SVCS, service("z", "NodePort", clusterIP="None"))
    assert code == 422 and "may not be set to 'None' for NodePort services" in status["message"]


def test_node_port_services_get_a_free_node_port_per_port(api):
    body = service("web", "NodePort")
    body["spec"]["ports"] = [{"name": "http", "port": 80}, {"name": "https", "port": 443, "nodePort": 30443}]
    spec = created(api, body)["spec"]
    assert spec["ports"][0]["nodePort"] in NODE_PORT_RANGE and spec["ports"][1]["nodePort"] == 30443
    assert spec["clusterIP"] and spec["externalTrafficPolicy"] == "Cluster"
    again = service("other", "NodePort")
    again["spec"]["ports"] = [{"port": 8080, "nodePort": 30443}]
    code, status = send(api, "post", SVCS, again)
    assert (code, status["message"]) == (422, 'Service "other" is invalid: spec.ports[0].nodePort: Invalid value: '
                                              "30443: provided port is already allocated")
    again["spec"]["ports"] = [{"port": 8080, "nodePort": 80}]
    code, status = send(api, "post", SVCS, again)
    assert code == 422 and "provided port is not in the valid range. The range of valid ports is 30000-32767" in status["message"]
    code, status = send(api, "post", SVCS, service("plain", ports=[{"port": 80, "nodePort": 30001}]))
    assert code == 422 and "Forbidden: may not be used when `type` is 'ClusterIP'" in status["message"]


def test_node_ports_are_never_shared(api, monkeypatch):
    monkeypatch.setattr(allocation, "NODE_PORT_RANGE", range(30000, 30004))
    ports = set()
    for i in range(2):
        body = service(f"s{i}", "NodePort", ports=[{"name": "a", "port": 80}, {"name": "b", "port": 81}])
        ports |= {p["nodePort"] for p in created(api, body)["spec"]["ports"]}
    assert ports == {30000, 30001, 30002, 30003}
    code, status = send(api, "post", SVCS, service("s9", "NodePort"))
    assert code == 500 and "range is full" in status["message"]


def test_load_balancers_get_node_ports_unless_told_not_to(api):
    spec = created(api, service("lb", "LoadBalancer"))["spec"]
    assert spec["allocateLoadBalancerNodePorts"] is True and spec["ports"][0]["nodePort"] in NODE_PORT_RANGE
    spec = created(api, service("lb2", "LoadBalancer", allocateLoadBalancerNodePorts=False))["spec"]
    assert "nodePort" not in spec["ports"][0] and spec["clusterIP"]
    spec = created(api, service("lb3", "LoadBalancer", externalTrafficPolicy="Local"))["spec"]
    assert spec["healthCheckNodePort"] in NODE_PORT_RANGE and spec["healthCheckNodePort"] != spec["ports"][0]["nodePort"]


def test_cluster_ip_is_kept_when_a_replace_leaves_it_out_and_cannot_change(api):
    first = created(api, service("web", "NodePort"))
    ip, node_port = first["spec"]["clusterIP"], first["spec"]["ports"][0]["nodePort"]
    code, replaced = send(api, "put", f"{SVCS}/web", service("web", "NodePort"))  # the original manifest again
    assert code == 200 and replaced["spec"]["clusterIP"] == ip and replaced["spec"]["ports"][0]["nodePort"] == node_port
    moved = service("web", "NodePort", clusterIP="10.96.200.1")
    code, status = send(api, "put", f"{SVCS}/web", moved)
    assert (code, status["message"]) == (422, 'Service "web" is invalid: spec.clusterIP: Invalid value: '
                                              '"10.96.200.1": field is immutable')
    code, status = send(api, "patch", f"{SVCS}/web", {"spec": {"clusterIP": "10.96.200.1"}}, "application/merge-patch+json")
    assert (code, status["message"]) == (422, 'Service "web" is invalid: spec.clusterIP: Invalid value: '
                                              '"10.96.200.1": field is immutable'), "clusterIPs follows clusterIP"


def test_type_changes_allocate_and_release(api):
    ip = created(api, service("web"))["spec"]["clusterIP"]
    merge = "application/merge-patch+json"
    code, node_port = send(api, "patch", f"{SVCS}/web", {"spec": {"type": "NodePort"}}, merge)
    assert code == 200 and node_port["spec"]["ports"][0]["nodePort"] in NODE_PORT_RANGE
    assert node_port["spec"]["clusterIP"] == ip
    taken = node_port["spec"]["ports"][0]["nodePort"]
    code, back = send(api, "patch", f"{SVCS}/web", {"spec": {"type": "ClusterIP"}}, merge)
    assert code == 200 and "nodePort" not in back["spec"]["ports"][0] and "externalTrafficPolicy" not in back["spec"]
    reuse = service("other", "NodePort", ports=[{"port": 80, "nodePort": taken}])
    assert created(api, reuse)["spec"]["ports"][0]["nodePort"] == taken, "the dropped node port is free again"
    code, external = send(api, "patch", f"{SVCS}/web", {"spec": {"type": "ExternalName",
                                                                  "externalName": "db.example.com"}}, merge)
    assert code == 200 and "clusterIP" not in external["spec"]
    assert created(api, service("third", clusterIP=ip))["spec"]["clusterIP"] == ip, "its address is free again"


def test_status_writes_and_ordinary_updates_keep_allocations(api):
    svc = created(api, service("lb", "LoadBalancer"))
    svc["status"] = {"loadBalancer": {"ingress": [{"ip": "172.18.255.10", "ipMode": "VIP"}]}}
    code, after = send(api, "put", f"{SVCS}/lb/status", svc)
    assert code == 200 and after["spec"] == svc["spec"]
    code, labelled = send(api, "patch", f"{SVCS}/lb", {"metadata": {"labels": {"tier": "web"}}},
                          "application/merge-patch+json")
    assert code == 200 and labelled["spec"] == svc["spec"]


def test_server_side_apply_allocates_and_keeps(api):
    body = service("applied", "NodePort")
    query = {"QUERY_STRING": "fieldManager=kubectl"}
    code, first = send(api, "patch", f"{SVCS}/applied", body, "application/apply-patch+yaml", **query)
    assert code == 201 and first["spec"]["clusterIP"] and first["spec"]["ports"][0]["nodePort"]
    body["metadata"]["labels"] = {"v": "2"}
    code, second = send(api, "patch", f"{SVCS}/applied", body, "application/apply-patch+yaml", **query)
    assert code == 200 and second["spec"]["clusterIP"] == first["spec"]["clusterIP"]
    assert second["spec"]["ports"][0]["nodePort"] == first["spec"]["ports"][0]["nodePort"]


def test_the_table_shows_type_cluster_ip_external_ip_and_ports(api):
    created(api, service("np", "NodePort", ports=[{"port": 80, "nodePort": 31234}], clusterIP="10.96.3.4"))
    created(api, service("lb", "LoadBalancer", ports=[{"port": 443, "nodePort": 31235}], clusterIP="10.96.3.5"))
    created(api, service("db", clusterIP="None"))
    code, table = send(api, "get", SVCS, None, HTTP_ACCEPT=TABLE)
    assert [c["name"] for c in table["columnDefinitions"]][:5] == ["Name", "Type", "Cluster-IP", "External-IP", "Port(s)"]
    rows = {r["cells"][0]: r["cells"][1:5] for r in table["rows"]}
    assert rows["np"] == ["NodePort", "10.96.3.4", "<none>", "80:31234/TCP"]
    assert rows["lb"] == ["LoadBalancer", "10.96.3.5", "<pending>", "443:31235/TCP"]
    assert rows["db"] == ["ClusterIP", "None", "<none>", "80/TCP"]


WRITER = """
import os, sys, django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "control.settings")
django.setup()
from control.api import verbs
from control.api.request import Call
from control.kinds.core import SERVICE
import json
prefix, count = sys.argv[1], int(sys.argv[2])
for i in range(count):
    body = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"{prefix}-{i}"},
            "spec": {"type": "NodePort", "ports": [{"port": 80}]}}
    call = Call(method="POST", kind=SERVICE, namespace="default", name="", subresource="", query={},
                actor=prefix, raw_body=json.dumps(body).encode(), content_type="application/json")
    assert verbs.create(call).status == 201
"""


def _database_env() -> dict[str, str]:
    settings = connection.settings_dict
    if connection.vendor == "postgresql":
        url = f"postgres://{settings['USER']}@{settings['HOST'] or '127.0.0.1'}:{settings['PORT'] or 5432}/{settings['NAME']}"
        return {"DATABASE_URL": url}
    return {"KK_SQLITE_PATH": settings["NAME"]}


def test_concurrent_writer_processes_never_share_an_address_or_a_port(api):
    """Four processes create Services at once in a /24 (253 addresses): without the writes held
    from the choice to the commit, random choices would collide."""
    env = {**os.environ, **_database_env(), "KK_SERVICE_CIDR": "10.96.9.0/24"}
    if connection.vendor != "postgresql":
        env.pop("DATABASE_URL", None)
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, f"w{n}", "25"], cwd=ROOT, env=env) for n in range(4)]
    assert all(w.wait(timeout=120) == 0 for w in writers)
    code, listed = send(api, "get", SVCS)
    specs = [s["spec"] for s in listed["items"]]
    assert len(specs) == 100
    ips = [s["clusterIP"] for s in specs]
    ports = [s["ports"][0]["nodePort"] for s in specs]
    assert len(set(ips)) == 100 and all(ipaddress.ip_address(ip) in ipaddress.ip_network("10.96.9.0/24") for ip in ips)
    assert len(set(ports)) == 100
