"""View models of the kinds added for Services, autoscaling and custom resources: what `kubectl get`
would print, as small dictionaries; custom objects keyed by "<group>/<plural>" in snapshots and
changes alike."""

from __future__ import annotations

from dashboard import custom, presenters

ORDERS = "kitchen.kubekitchen.dev/orders"


def test_a_nodeport_service_shows_its_node_ports_like_kubectl():
    service = {"metadata": {"name": "pasta", "namespace": "default"},
               "spec": {"type": "NodePort", "clusterIP": "10.96.0.12", "selector": {"app": "pasta"},
                        "ports": [{"port": 80, "protocol": "TCP", "nodePort": 31234}, {"port": 53, "protocol": "UDP"}]}}
    vm = presenters.service_vm(service)
    assert vm["ports"] == ["80:31234/TCP", "53/UDP"] and vm["type"] == "NodePort" and vm["externalIPs"] == []
    assert vm["selector"] == "app=pasta" and vm["clusterIP"] == "10.96.0.12"


def test_a_load_balancer_shows_its_external_ip_and_an_external_name_its_name():
    balancer = {"metadata": {"name": "front", "namespace": "default"},
                "spec": {"type": "LoadBalancer", "clusterIP": "10.96.0.7", "ports": [{"port": 80, "nodePort": 30001}]},
                "status": {"loadBalancer": {"ingress": [{"ip": "172.18.255.1"}]}}}
    assert presenters.service_vm(balancer)["externalIPs"] == ["172.18.255.1"]
    pending = {**balancer, "status": {}}
    assert presenters.service_vm(pending)["externalIPs"] == []
    alias = {"metadata": {"name": "db", "namespace": "default"}, "spec": {"type": "ExternalName", "externalName": "db.example.com"}}
    vm = presenters.service_vm(alias)
    assert vm["externalName"] == "db.example.com" and vm["ports"] == [] and vm["clusterIP"] == ""


def test_endpoints_keep_ready_and_not_ready_addresses_apart():
    endpoints = {"metadata": {"name": "pasta", "namespace": "default"},
                 "subsets": [{"addresses": [{"ip": "10.244.1.2", "targetRef": {"name": "pasta-a"}}],
                              "notReadyAddresses": [{"ip": "10.244.2.2", "targetRef": {"name": "pasta-b"}}]}]}
    assert presenters.endpoints_vm(endpoints)["addresses"] == [
        {"ip": "10.244.1.2", "pod": "pasta-a", "ready": True}, {"ip": "10.244.2.2", "pod": "pasta-b", "ready": False}]


HPA = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
       "metadata": {"name": "pasta", "namespace": "default"},
       "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "pasta"},
                "minReplicas": 2, "maxReplicas": 8,
                "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                                                              "target": {"type": "Utilization", "averageUtilization": 50}}}]},
       "status": {"currentReplicas": 3, "desiredReplicas": 5, "lastScaleTime": "2026-11-21T21:00:00Z",
                  "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu",
                                                                      "current": {"averageUtilization": 83, "averageValue": "83m"}}}],
                  "conditions": [{"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale"}]}}


def test_an_hpa_shows_target_utilisation_and_replicas_like_kubectl_get_hpa():
    vm = presenters.hpa_vm(HPA)
    assert vm == {"key": "default/pasta", "ns": "default", "name": "pasta", "target": "Deployment/pasta",
                  "targetCPU": 50, "currentCPU": 83, "min": 2, "max": 8, "current": 3, "desired": 5,
                  "lastScale": "2026-11-21T21:00:00Z",
                  "conditions": [{"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale"}]}


def test_a_new_hpa_has_no_utilisation_yet_and_min_defaults_to_one():
    fresh = {**HPA, "spec": {**HPA["spec"], "minReplicas": None}, "status": {}}
    vm = presenters.hpa_vm(fresh)
    assert vm["currentCPU"] is None and vm["min"] == 1 and vm["current"] == 0 and vm["conditions"] == []


ORDER_CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
             "metadata": {"name": "orders.kitchen.kubekitchen.dev"},
             "spec": {"group": "kitchen.kubekitchen.dev", "scope": "Namespaced",
                      "names": {"kind": "Order", "plural": "orders", "singular": "order"},
                      "versions": [{"name": "v1", "served": True, "storage": True,
                                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                                        "type": "object", "properties": {"menu": {"type": "string", "enum": ["pasta", "soup"]},
                                                                         "count": {"type": "integer"}}}}}},
                                    "additionalPrinterColumns": [
                          {"name": "Menu", "type": "string", "jsonPath": ".spec.menu"},
                          {"name": "Ready", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
                          {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]}]}}


def test_a_crd_names_its_kinds_store_key_and_only_its_plain_printer_columns():
    vm = custom.crd_vm(ORDER_CRD)
    assert vm == {"key": "orders.kitchen.kubekitchen.dev", "group": "kitchen.kubekitchen.dev", "kind": "Order",
                  "plural": "orders", "version": "v1", "resource": ORDERS, "namespaced": True,
                  "columns": [{"name": "Menu", "path": ".spec.menu", "type": "string"}],
                  "choices": {"menu": ["pasta", "soup"]}}


def test_custom_objects_come_keyed_by_group_and_plural_in_snapshots_and_changes():
    order = {"apiVersion": "kitchen.kubekitchen.dev/v1", "kind": "Order",
             "metadata": {"name": "dinner", "namespace": "default", "labels": {"table": "7"}},
             "spec": {"menu": "pasta", "count": 3}, "status": {"cooked": 1, "phase": "Cooking"}}
    snap = presenters.snapshot({"revision": 9, "objects": {"pods": [], ORDERS: [order],
                                                           "customresourcedefinitions": [ORDER_CRD]}})
    assert snap["objects"][ORDERS] == [{"key": "default/dinner", "ns": "default", "name": "dinner", "resource": ORDERS,
                                        "kind": "Order", "apiVersion": "kitchen.kubekitchen.dev/v1",
                                        "labels": {"table": "7"}, "terminating": False,
                                        "spec": {"menu": "pasta", "count": 3}, "status": {"cooked": 1, "phase": "Cooking"}}]
    assert snap["objects"]["customresourcedefinitions"][0]["resource"] == ORDERS
    assert snap["objects"]["horizontalpodautoscalers"] == []  # a kind the hub does not serve (yet) is just empty
    change = {"type": "MODIFIED", "revision": 12, "resource": "orders", "group": "kitchen.kubekitchen.dev",
              "namespace": "default", "name": "dinner", "actor": "line-cook", "object": order}
    item = presenters.change_item(change)
    assert (item["resource"], item["kind"], item["actor"]) == (ORDERS, "Order", "line-cook")
    assert item["vm"]["spec"]["menu"] == "pasta"


def test_built_in_groups_stay_built_in():
    for group in ("", "apps", "autoscaling", "coordination.k8s.io", "apiextensions.k8s.io", "metrics.k8s.io"):
        assert not custom.is_custom_group(group), group
    assert custom.is_custom_group("kitchen.kubekitchen.dev")
    hpa = {"type": "ADDED", "revision": 3, "resource": "horizontalpodautoscalers", "group": "autoscaling",
           "namespace": "default", "name": "pasta", "actor": "kubectl", "object": HPA}
    assert presenters.change_item(hpa)["resource"] == "horizontalpodautoscalers"
    assert presenters.change_item(hpa)["vm"]["targetCPU"] == 50


def test_a_large_spec_is_left_out_of_the_view_model():
    big = {"metadata": {"name": "x", "namespace": "default"}, "spec": {"blob": "x" * (custom.MAX_PART_CHARS + 1)},
           "status": {"phase": "Done"}}
    vm = custom.object_vm(ORDERS, big)
    assert vm["spec"] == {} and vm["status"] == {"phase": "Done"}


def test_per_node_spokes_map_to_configmap_keys_and_back():
    from dashboard.presenters import spoke_key, spoke_name

    for spoke, key in (("kubelet/node-1", "kubelet.node-1"), ("kube-proxy/node-2", "kube-proxy.node-2"),
                       ("scheduler", "scheduler"), ("line-cook", "line-cook")):
        assert spoke_key(spoke) == key and spoke_name(key) == spoke
