"""Per-kind defaults, validation and printing: pure functions, no database."""

from __future__ import annotations

import copy

import pytest

from control import kinds
from control.kinds.base import name_causes
from control.kinds.meta import human_duration
from control.kinds.quantity import parse_quantity


def deployment(**spec) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}, **spec}}


def pod(**spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec}}


def test_registry_lookups():
    assert kinds.by_resource("apps", "v1", "deployments").kind == "Deployment"
    assert kinds.by_kind("v1", "Pod").plural == "pods"
    assert kinds.by_resource("", "v1", "nope") is None
    assert kinds.by_kind("v1", "Secret").plural == "secrets"
    custom_groups = {k.group for k in kinds.custom_kinds()}  # another module's CRDs may still be served
    assert set(kinds.group_versions()) - custom_groups == {"", "apps", "batch", "coordination.k8s.io", "autoscaling",
                                                           "apiextensions.k8s.io", "policy", "storage.k8s.io",
                                                           "rbac.authorization.k8s.io", "apiregistration.k8s.io",
                                                           "events.k8s.io", "scheduling.k8s.io", "certificates.k8s.io",
                                                           "networking.k8s.io", "discovery.k8s.io"}


def test_deployment_defaults_match_the_real_server():
    obj = deployment()
    kinds.by_kind("apps/v1", "Deployment").defaults(obj)
    spec = obj["spec"]
    assert spec["replicas"] == 1 and spec["revisionHistoryLimit"] == 10 and spec["progressDeadlineSeconds"] == 600
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}
    container = spec["template"]["spec"]["containers"][0]
    assert container["imagePullPolicy"] == "IfNotPresent"
    again = copy.deepcopy(obj)
    kinds.by_kind("apps/v1", "Deployment").defaults(again)
    assert again == obj, "defaults must be idempotent"


def test_pod_defaults_pull_policy_and_default_tolerations():
    obj = pod()
    kinds.by_kind("v1", "Pod").defaults(obj)
    assert obj["spec"]["containers"][0]["imagePullPolicy"] == "Always"  # untagged image means :latest
    assert obj["spec"]["restartPolicy"] == "Always" and obj["spec"]["terminationGracePeriodSeconds"] == 30
    keys = {t["key"] for t in obj["spec"]["tolerations"]}
    assert keys == {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}


def test_selector_must_match_template_labels():
    obj = deployment()
    obj["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    causes = kinds.by_kind("apps/v1", "Deployment").validate(obj)
    assert [c["field"] for c in causes] == ["spec.template.metadata.labels"]
    assert "`selector` does not match template `labels`" in causes[0]["message"]


@pytest.mark.parametrize("spec, field", [
    ({"containers": []}, "spec.containers"),
    ({"containers": [{"name": "c"}]}, "spec.containers[0].image"),
    ({"containers": [{"name": "Bad_Name", "image": "x"}]}, "spec.containers[0].name"),
    ({"restartPolicy": "Sometimes"}, "spec.restartPolicy"),
    ({"containers": [{"name": "c", "image": "x", "ports": [{"containerPort": 70000}]}]}, "spec.containers[0].ports[0].containerPort"),
    ({"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "lots"}}}]}, "spec.containers[0].resources.requests[cpu]"),
])
def test_pod_validation_names_the_field(spec, field):
    causes = kinds.by_kind("v1", "Pod").validate(pod(**spec))
    assert field in [c["field"] for c in causes]


def test_pod_spec_is_immutable_except_images():
    kind = kinds.by_kind("v1", "Pod")
    old = pod()
    new_image = copy.deepcopy(old)
    new_image["spec"]["containers"][0]["image"] = "busybox:2"
    assert kind.validate_update(new_image, old) == []
    new_policy = copy.deepcopy(old)
    new_policy["spec"]["restartPolicy"] = "Never"
    assert kind.validate_update(new_policy, old)[0]["reason"] == "FieldValueForbidden"


def test_names_follow_dns_1123():
    assert name_causes("web-1") == []
    assert name_causes("Web")
    assert name_causes("a" * 254)
    assert name_causes("a.b", label=True)


def test_service_needs_ports_unless_headless_or_external():
    kind = kinds.by_kind("v1", "Service")
    svc = {"metadata": {"name": "s"}, "spec": {"selector": {"app": "x"}}}
    kind.defaults(svc)
    assert [c["field"] for c in kind.validate(svc)] == ["spec.ports"]
    svc["spec"]["ports"] = [{"port": 80}]
    kind.defaults(svc)
    assert kind.validate(svc) == [] and svc["spec"]["ports"][0]["targetPort"] == 80


def test_table_cells_follow_kubectl_columns():
    now = 1_800_000_000.0
    obj = pod()
    obj["metadata"]["creationTimestamp"] = "2027-01-15T08:00:00Z"
    obj["status"] = {"phase": "Running", "podIP": "10.0.0.5",
                     "containerStatuses": [{"name": "c", "ready": False, "restartCount": 4,
                                            "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}
    kind = kinds.by_kind("v1", "Pod")
    cells = kind.row(obj, now)
    assert [c.name for c in kind.columns][:5] == ["Name", "Ready", "Status", "Restarts", "Age"]
    assert cells[:4] == ["p", "0/1", "CrashLoopBackOff", 4]
    obj["metadata"]["deletionTimestamp"] = "2027-01-15T08:00:30Z"
    assert kind.row(obj, now)[2] == "Terminating"


@pytest.mark.parametrize("text, value", [("100m", 0.1), ("2", 2.0), ("1Gi", 2.0**30), ("512Mi", 512 * 2.0**20), ("1e3", 1000.0), ("1.5k", 1500.0)])
def test_quantities(text, value):
    assert parse_quantity(text) == pytest.approx(value)


def test_quantity_rejects_garbage():
    with pytest.raises(ValueError):
        parse_quantity("12 apples")


@pytest.mark.parametrize("seconds, text", [(5, "5s"), (150, "2m30s"), (600, "10m"), (4 * 3600 + 60, "4h1m"), (3 * 86400, "3d")])
def test_ages_print_like_kubectl(seconds, text):
    assert human_duration(seconds) == text
