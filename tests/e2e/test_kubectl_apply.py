"""The real kubectl (v1.32, validation on) applying manifests the ways users do: kinds the hub does not
serve, `kind: List` files, a switch of rollout strategy, and client-side apply followed by
server-side apply and diff. Each message is compared with what Kubernetes prints."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.e2e


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def ns(hub) -> str:
    name = unique("ka")
    hub.kubectl("create", "namespace", name)
    return name


def write(tmp_path: Path, *objects: dict) -> str:
    path = tmp_path / f"{uuid.uuid4().hex[:6]}.yaml"
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    return str(path)


def deployment(name: str, *, replicas: int = 2, image: str = "nginx:1.25", strategy: dict | None = None) -> dict:
    spec: dict = {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                  "template": {"metadata": {"labels": {"app": name}},
                               "spec": {"containers": [{"name": "web", "image": image}]}}}
    if strategy is not None:
        spec["strategy"] = strategy
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": spec}


def live(hub, ns: str, *what: str) -> dict:
    return json.loads(hub.kubectl("get", *what, "-n", ns, "-o", "json").stdout)


@pytest.mark.parametrize("api_version, kind", [("kitchen.example.com/v1", "Widget"), ("apps/v1", "Gadget")])
def test_a_kind_the_hub_does_not_serve_gets_kubernetes_no_matches_message(hub, ns, tmp_path, api_version, kind):
    manifest = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "w"}}
    result = hub.kubectl("apply", "-n", ns, "-f", write(tmp_path, manifest), check=False)
    assert result.returncode == 1
    assert "failed to download openapi" not in result.stderr
    assert result.stderr.startswith('error: resource mapping not found for name: "w" namespace: "" from "')
    assert f'no matches for kind "{kind}" in version "{api_version}"' in result.stderr


def test_a_list_of_several_kinds_validates_and_applies(hub, ns, tmp_path):
    listed = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "menu"}, "data": {"soup": "miso"}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "front"},
         "spec": {"selector": {"app": "front"}, "ports": [{"port": 80, "targetPort": "http"}]}},
        {**deployment("front"), "spec": {**deployment("front")["spec"], "strategy": {
            "type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": "25%"}}}},
    ]}
    result = hub.kubectl("apply", "-n", ns, "-f", write(tmp_path, listed))
    assert result.stdout.split("\n")[:3] == ["configmap/menu created", "service/front created",
                                             "deployment.apps/front created"]
    assert live(hub, ns, "configmap", "menu")["data"] == {"soup": "miso"}


def test_a_bad_item_in_a_list_is_refused_by_kubectls_own_validation(hub, ns, tmp_path):
    listed = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "typo"}, "dataa": {"a": "b"}}]}
    result = hub.kubectl("apply", "-n", ns, "-f", write(tmp_path, listed), check=False)
    assert result.returncode == 1
    assert ('error validating data: ValidationError(ConfigMap): unknown field "dataa" in '
            "io.k8s.api.core.v1.ConfigMap") in result.stderr


def test_switching_a_deployment_from_rolling_update_to_recreate(hub, ns, tmp_path):
    hub.kubectl("apply", "-n", ns, "-f", write(tmp_path, deployment("roll", strategy={
        "type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}})))
    result = hub.kubectl("apply", "-n", ns, "-f", write(tmp_path, deployment("roll", strategy={"type": "Recreate"})))
    assert result.stdout.strip() == "deployment.apps/roll configured"
    assert live(hub, ns, "deployment", "roll")["spec"]["strategy"] == {"type": "Recreate"}
    # the same from a strategy the server defaulted (the file never named rollingUpdate)
    hub.kubectl("apply", "-n", ns, "-f", write(tmp_path, deployment("dflt")))
    hub.kubectl("apply", "-n", ns, "-f", write(tmp_path, deployment("dflt", strategy={"type": "Recreate"})))
    assert live(hub, ns, "deployment", "dflt")["spec"]["strategy"] == {"type": "Recreate"}


def test_client_side_apply_then_server_side_apply_and_diff(hub, ns, tmp_path):
    hub.kubectl("apply", "-n", ns, "-f", write(tmp_path, deployment("csa", replicas=2)))
    changed = write(tmp_path, deployment("csa", replicas=3, image="nginx:1.27"))
    diff = hub.kubectl("diff", "--server-side", "-n", ns, "-f", changed, check=False)
    assert diff.returncode == 1, diff.stderr  # 1: differences found; >1 would be an error
    assert "+  replicas: 3" in diff.stdout and "keeps changing" not in diff.stderr
    result = hub.kubectl("apply", "--server-side", "-n", ns, "-f", changed)
    assert result.stdout.strip() == "deployment.apps/csa serverside-applied"
    obj = live(hub, ns, "deployment", "csa")
    assert obj["spec"]["replicas"] == 3
    assert obj["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    last = json.loads(obj["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"])
    assert last["spec"]["replicas"] == 3
    # and back to client-side apply, which now starts from what was applied server-side
    hub.kubectl("apply", "-n", ns, "-f", write(tmp_path, deployment("csa", replicas=4, image="nginx:1.27")))
    assert live(hub, ns, "deployment", "csa")["spec"]["replicas"] == 4


def test_another_field_manager_still_meets_the_conflict(hub, ns, tmp_path):
    hub.kubectl("apply", "-n", ns, "-f", write(tmp_path, deployment("mine", replicas=2)))
    result = hub.kubectl("apply", "--server-side", "--field-manager", "other-tool", "-n", ns, "-f",
                         write(tmp_path, deployment("mine", replicas=5)), check=False)
    assert result.returncode == 1
    assert 'conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas' in result.stderr


def test_explain_reads_both_openapi_versions(hub):
    v3 = hub.kubectl("explain", "deployment.spec.strategy").stdout
    assert "FIELD: strategy <DeploymentStrategy>" in v3 and "rollingUpdate" in v3
    v2 = hub.kubectl("explain", "deployment.spec.strategy", "--output", "plaintext-openapiv2").stdout
    assert "RESOURCE: strategy <Object>" in v2 and "rollingUpdate\t<Object>" in v2
