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
    from control.kinds.spokes import spoke_key, spoke_name

    for spoke, key in (("kubelet/node-1", "kubelet.node-1"), ("kube-proxy/node-2", "kube-proxy.node-2"),
                       ("scheduler", "scheduler"), ("line-cook", "line-cook")):
        assert spoke_key(spoke) == key and spoke_name(key) == spoke


def test_a_job_shows_completions_failures_and_duration_like_kubectl_get_jobs():
    job = {"metadata": {"name": "bake", "namespace": "default",
                        "ownerReferences": [{"kind": "CronJob", "name": "nightly", "controller": True}]},
           "spec": {"completions": 3, "backoffLimit": 4},
           "status": {"succeeded": 2, "failed": 1, "active": 1, "startTime": "2026-01-01T10:00:00Z"}}
    vm = presenters.job_vm(job)
    assert (vm["completions"], vm["succeeded"], vm["failed"], vm["active"]) == (3, 2, 1, 1)
    assert vm["outcome"] == "Running" and vm["duration"] is None and vm["owner"] == "nightly"
    job["status"].update(succeeded=3, active=0, completionTime="2026-01-01T10:01:05Z",
                         conditions=[{"type": "Complete", "status": "True"}])
    vm = presenters.job_vm(job)
    assert vm["outcome"] == "Complete" and vm["duration"] == 65
    failed = {"metadata": {"name": "burnt"}, "spec": {},
              "status": {"failed": 7, "conditions": [{"type": "Failed", "status": "True"}]}}
    assert presenters.job_vm(failed)["outcome"] == "Failed" and presenters.job_vm(failed)["completions"] == 1


def test_a_cronjob_shows_schedule_suspend_and_last_schedule():
    cronjob = {"metadata": {"name": "nightly", "namespace": "default"},
               "spec": {"schedule": "*/5 * * * *", "suspend": True},
               "status": {"lastScheduleTime": "2026-01-01T10:05:00Z", "active": [{"name": "nightly-1"}]}}
    vm = presenters.cronjob_vm(cronjob)
    assert (vm["schedule"], vm["suspend"], vm["active"], vm["lastSchedule"]) == ("*/5 * * * *", True, 1, "2026-01-01T10:05:00Z")
    assert presenters.cronjob_vm({"metadata": {"name": "x"}, "spec": {"schedule": "@hourly"}})["suspend"] is False


def event(name: str, rv: int, **fields) -> dict:
    return {"metadata": {"name": name, "namespace": "default", "resourceVersion": str(rv)},
            "involvedObject": {"kind": "Pod", "name": "pasta-1", "namespace": "default"},
            "reason": "BackOff", "message": "Back-off restarting failed container", "type": "Warning",
            "count": 4, "lastTimestamp": "2026-01-01T10:00:00Z", "source": {"component": "kubelet"}, **fields}


def test_an_event_names_its_object_reason_type_and_count():
    vm = presenters.event_vm(event("pasta-1.a", 7))
    assert vm["object"] == {"kind": "Pod", "name": "pasta-1", "ns": "default"}
    assert (vm["type"], vm["reason"], vm["count"], vm["source"], vm["rv"]) == ("Warning", "BackOff", 4, "kubelet", 7)
    new_style = presenters.event_vm(event("x", 8, type=None, count=None, lastTimestamp=None, reportingController="scheduler",
                                          eventTime="2026-01-01T11:00:00.000000Z"))
    assert (new_style["type"], new_style["count"], new_style["source"]) == ("Normal", 1, "scheduler")
    assert new_style["last"] == "2026-01-01T11:00:00.000000Z"


def test_the_snapshot_sends_only_the_newest_events_and_jobs_and_cronjobs():
    events = [event(f"e{i}", i) for i in range(1, presenters.SNAPSHOT_EVENTS + 31)]
    body = {"revision": 500, "objects": {"events": events, "jobs": [{"metadata": {"name": "bake", "namespace": "default"}}],
                                         "cronjobs": []}}
    snapshot = presenters.snapshot(body)
    sent = snapshot["objects"]["events"]
    assert len(sent) == presenters.SNAPSHOT_EVENTS and sent[0]["rv"] == presenters.SNAPSHOT_EVENTS + 30
    assert min(vm["rv"] for vm in sent) == 31
    assert snapshot["objects"]["jobs"][0]["name"] == "bake" and snapshot["objects"]["cronjobs"] == []
    change = presenters.change_item({"type": "MODIFIED", "revision": 501, "resource": "events", "group": "",
                                     "namespace": "default", "name": "e1", "actor": "kubelet/node-1",
                                     "object": event("e1", 501)})
    assert change["kind"] == "Event" and change["vm"]["count"] == 4


# --- a pod's owner and image: old and new ReplicaSets' pods told apart ---------------------------------

def a_pod(owners: list[dict], containers: list[dict]) -> dict:
    return {"metadata": {"name": "pasta-6d4-x7k", "namespace": "default", "ownerReferences": owners},
            "spec": {"nodeName": "node-1", "containers": containers}, "status": {"phase": "Running"}}


def test_a_pod_names_its_controller_and_its_image():
    vm = presenters.pod_vm(a_pod([{"kind": "ReplicaSet", "name": "pasta-6d4", "controller": True}],
                                 [{"name": "c", "image": "registry.k8s.io/library/nginx:1.25"}]))
    assert (vm["ownerKind"], vm["owner"], vm["image"]) == ("rs", "pasta-6d4", "nginx:1.25")


def test_a_replication_controllers_pod_names_it_as_rc():
    vm = presenters.pod_vm(a_pod([{"apiVersion": "v1", "kind": "ReplicationController", "name": "nginx",
                                   "controller": True}], [{"name": "nginx", "image": "nginx"}]))
    assert (vm["ownerKind"], vm["owner"], vm["image"]) == ("rc", "nginx", "nginx")


def test_a_replication_controller_shows_desired_current_ready_like_kubectl_get_rc():
    rc = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "nginx", "namespace": "shop"},
          "spec": {"replicas": 3, "selector": {"app": "nginx"}}, "status": {"replicas": 2, "readyReplicas": 1}}
    assert presenters.present("replicationcontrollers", rc) == {"key": "shop/nginx", "ns": "shop", "name": "nginx",
                                                                "desired": 3, "current": 2, "ready": 1}
    assert presenters.replicationcontroller_vm({"metadata": {"name": "new"}, "spec": {}})["desired"] == 1
    change = presenters.change_item({"revision": 9, "type": "ADDED", "resource": "replicationcontrollers", "group": "",
                                     "namespace": "shop", "name": "nginx", "object": rc})
    assert change["kind"] == "ReplicationController" and change["vm"]["desired"] == 3

def test_the_controller_reference_wins_over_other_owners_and_any_kind_is_named():
    owners = [{"kind": "ConfigMap", "name": "extra"}, {"kind": "StatefulSet", "name": "db", "controller": True}]
    vm = presenters.pod_vm(a_pod(owners, [{"name": "a", "image": "postgres"}, {"name": "b", "image": "busybox"}]))
    assert (vm["ownerKind"], vm["owner"], vm["image"]) == ("sts", "db", "postgres +1")
    vm = presenters.pod_vm(a_pod([{"kind": "Order", "name": "o-1"}], []))
    assert (vm["ownerKind"], vm["owner"], vm["image"]) == ("order", "o-1", "")
    vm = presenters.pod_vm(a_pod([], [{"name": "c", "image": "busybox"}]))
    assert (vm["ownerKind"], vm["owner"]) == ("", "")


def test_images_are_shortened_to_their_last_path_part_and_a_short_digest():
    assert presenters.short_image("nginx") == "nginx"
    assert presenters.short_image("docker.io/library/nginx:1.25") == "nginx:1.25"
    assert presenters.short_image("localhost:5000/team/app@sha256:0123456789abcdef") == "app@0123456"
    assert presenters.short_image("") == ""


def test_a_ready_pod_says_since_when_and_an_unready_one_does_not():
    from dashboard.presenters import pod_vm

    ready = {"metadata": {"name": "db-0", "namespace": "default"}, "spec": {}, "status": {"phase": "Running",
             "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-28T11:00:05Z"}]}}
    assert pod_vm(ready)["readySince"] == "2026-11-28T11:00:05Z"
    ready["status"]["conditions"][0]["status"] = "False"
    assert pod_vm(ready)["readySince"] == ""
