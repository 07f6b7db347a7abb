"""CustomResourceDefinitions end to end: the real kubectl (v1.32) and the official Python client
against a real hub. A definition applied with kubectl is served at once: objects applied, listed
with printer columns, explained, scaled, their status patched; deleting it removes them."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from tests.conftest import KUBECTL, Hub, wait_for

pytestmark = pytest.mark.e2e

CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.kitchen.example.com
spec:
  group: kitchen.example.com
  scope: Namespaced
  names:
    plural: {plural}
    singular: {singular}
    kind: {kind}
    shortNames: [{short}]
    categories: [all]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {{}}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    additionalPrinterColumns:
    - name: Menu
      type: string
      jsonPath: .spec.menu
    - name: Replicas
      type: integer
      jsonPath: .spec.replicas
    - name: Phase
      type: string
      jsonPath: .status.phase
    - name: Table
      type: string
      jsonPath: .spec.table
      priority: 1
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [menu]
            properties:
              menu:
                type: string
                description: What the table ordered.
                enum: [pasta, pizza]
              replicas:
                type: integer
                minimum: 0
                default: 1
              table:
                type: string
          status:
            type: object
            properties:
              phase:
                type: string
              replicas:
                type: integer
"""


def names() -> dict[str, str]:
    tag = uuid.uuid4().hex[:6]
    return {"plural": f"orders{tag}", "singular": f"order{tag}", "kind": f"Order{tag}", "short": f"o{tag}"}


@pytest.fixture(scope="module")
def crd_hub():
    server = Hub().start()
    yield server
    server.stop()


def kubectl(hub: Hub, *args: str, input: str | None = None, check: bool = True):
    """kubectl with a fresh discovery cache every time: kinds come and go during these tests."""
    import subprocess

    cache = hub.dir / f"cache-{uuid.uuid4().hex[:8]}"
    cmd = [KUBECTL, "--kubeconfig", str(hub.kubeconfig), "--cache-dir", str(cache), *args]
    result = subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=60)
    if check and result.returncode != 0:
        raise AssertionError(f"kubectl {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


def test_kubectl_round_trip(crd_hub):
    n = names()
    crd_name = f"{n['plural']}.kitchen.example.com"
    out = kubectl(crd_hub, "apply", "-f", "-", input=CRD.format(**n)).stdout
    assert out.strip() == f"customresourcedefinition.apiextensions.k8s.io/{crd_name} created"
    kubectl(crd_hub, "wait", "--for", "condition=established", f"crd/{crd_name}", "--timeout", "10s")
    order = f"apiVersion: kitchen.example.com/v1\nkind: {n['kind']}\nmetadata:\n  name: o1\nspec:\n  menu: pasta\n  table: t4\n"
    out = kubectl(crd_hub, "apply", "-f", "-", input=order).stdout
    assert out.strip() == f"{n['singular']}.kitchen.example.com/o1 created"
    lines = kubectl(crd_hub, "get", n["plural"]).stdout.splitlines()
    assert lines[0].split() == ["NAME", "MENU", "REPLICAS", "PHASE"]
    assert lines[1].split() == ["o1", "pasta", "1"]  # no phase yet: an empty cell
    wide = kubectl(crd_hub, "get", n["short"], "-o", "wide").stdout.splitlines()
    assert wide[0].split() == ["NAME", "MENU", "REPLICAS", "PHASE", "TABLE"] and wide[1].split()[-1] == "t4"
    everything = kubectl(crd_hub, "get", "all").stdout
    assert f"{n['singular']}.kitchen.example.com/o1" in everything
    resources = kubectl(crd_hub, "api-resources", "--api-group", "kitchen.example.com").stdout
    assert n["plural"] in resources and n["kind"] in resources and n["short"] in resources
    explained = kubectl(crd_hub, "explain", f"{n['plural']}.spec").stdout
    assert "menu" in explained and "What the table ordered." in explained

    out = kubectl(crd_hub, "scale", n["plural"], "o1", "--replicas=3").stdout
    assert out.strip() == f"{n['singular']}.kitchen.example.com/o1 scaled"
    kubectl(crd_hub, "patch", n["plural"], "o1", "--subresource=status", "--type=merge",
            "-p", '{"status":{"phase":"Cooking","replicas":3}}')
    lines = kubectl(crd_hub, "get", n["plural"], "o1").stdout.splitlines()
    assert lines[1].split() == ["o1", "pasta", "3", "Cooking"]

    bad = order.replace("pasta", "soup")
    refused = kubectl(crd_hub, "apply", "-f", "-", input=bad, check=False)
    assert refused.returncode != 0
    assert 'spec.menu: Unsupported value: "soup": supported values: "pasta", "pizza"' in refused.stderr
    typo = order.replace("  table: t4\n", "  tabel: t4\n")
    refused = kubectl(crd_hub, "apply", "-f", "-", input=typo, check=False)
    assert refused.returncode != 0 and "tabel" in refused.stderr

    out = kubectl(crd_hub, "delete", "crd", crd_name).stdout
    assert out.strip() == f'customresourcedefinition.apiextensions.k8s.io "{crd_name}" deleted'
    gone = kubectl(crd_hub, "get", n["plural"], check=False)
    assert gone.returncode != 0 and "doesn't have a resource type" in gone.stderr


def test_python_client_custom_objects(crd_hub):
    import yaml

    n = names()
    api = crd_hub.python_client()
    extensions = client.ApiextensionsV1Api(api)
    created = extensions.create_custom_resource_definition(yaml.safe_load(CRD.format(**n)))
    assert {c.type: c.status for c in created.status.conditions} == {"NamesAccepted": "True", "Established": "True"}
    custom = client.CustomObjectsApi(api)
    group, version, plural = "kitchen.example.com", "v1", n["plural"]
    events: list[tuple[str, str, str]] = []
    started = threading.Event()

    def follow() -> None:
        stream = watch.Watch()
        started.set()
        for event in stream.stream(custom.list_namespaced_custom_object, group, version, "default", plural,
                                   timeout_seconds=10):
            obj = event["object"]
            events.append((event["type"], obj["metadata"]["name"], (obj.get("status") or {}).get("phase", "")))
            if event["type"] == "DELETED":
                stream.stop()

    watcher = threading.Thread(target=follow, daemon=True)
    watcher.start()
    started.wait(5)
    time.sleep(0.3)
    body = {"apiVersion": "kitchen.example.com/v1", "kind": n["kind"], "metadata": {"name": "p1"},
            "spec": {"menu": "pizza"}}
    made = custom.create_namespaced_custom_object(group, version, "default", plural, body)
    assert made["spec"] == {"menu": "pizza", "replicas": 1}
    listed = custom.list_namespaced_custom_object(group, version, "default", plural)
    assert [i["metadata"]["name"] for i in listed["items"]] == ["p1"]
    patched = custom.patch_namespaced_custom_object_status(group, version, "default", plural, "p1",
                                                           {"status": {"phase": "Served"}})
    assert patched["status"] == {"phase": "Served"}
    with pytest.raises(ApiException) as refused:
        custom.patch_namespaced_custom_object(group, version, "default", plural, "p1", {"spec": {"replicas": -1}})
    assert refused.value.status == 422
    extensions.delete_custom_resource_definition(f"{plural}.kitchen.example.com")
    watcher.join(10)
    assert events == [("ADDED", "p1", ""), ("MODIFIED", "p1", "Served"), ("DELETED", "p1", "Served")]
    wait_for(lambda: _gone(custom, group, version, plural), timeout=5, what="the kind to stop being served")


def _gone(custom: client.CustomObjectsApi, group: str, version: str, plural: str) -> bool:
    try:
        custom.list_namespaced_custom_object(group, version, "default", plural)
    except ApiException as exc:
        return exc.status == 404
    return False


def test_definitions_are_served_again_after_a_restart(crd_hub):
    n = names()
    kubectl(crd_hub, "apply", "-f", "-", input=CRD.format(**n))
    order = f"apiVersion: kitchen.example.com/v1\nkind: {n['kind']}\nmetadata:\n  name: r1\nspec:\n  menu: pizza\n"
    kubectl(crd_hub, "apply", "-f", "-", input=order)
    header = kubectl(crd_hub, "get", "crd").stdout.splitlines()[0]
    assert header.split() == ["NAME", "CREATED", "AT"]
    crd_hub.stop()
    crd_hub.start()
    lines = kubectl(crd_hub, "get", n["plural"], "r1").stdout.splitlines()
    assert lines[1].split() == ["r1", "pizza", "1"]
    kubectl(crd_hub, "delete", "crd", f"{n['plural']}.kitchen.example.com")


PG_SERVER = "postgres://postgres@127.0.0.1:5432"


def _psql(sql: str) -> bool:
    import subprocess

    result = subprocess.run(["psql", f"{PG_SERVER}/postgres", "-c", sql], capture_output=True, text=True)
    return result.returncode == 0


def test_a_second_hub_on_postgres_serves_the_kind_from_its_feed():
    """Two hub processes on one PostgreSQL: a definition stored through one is served by the other."""
    import httpx

    database = f"kk_crd_{uuid.uuid4().hex[:8]}"
    if not _psql(f"CREATE DATABASE {database}"):
        pytest.skip("no PostgreSQL on 127.0.0.1:5432")
    env = {"DATABASE_URL": f"{PG_SERVER}/{database}"}
    first, second = Hub(env=env).start(), Hub(env=env).start()
    try:
        n = names()
        assert httpx.get(f"{second.url}/apis/kitchen.example.com/v1/namespaces/default/{n['plural']}", headers=second.auth).status_code == 404
        import yaml

        created = httpx.post(f"{first.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions", headers=first.auth,
                             json=yaml.safe_load(CRD.format(**n)))
        assert created.status_code == 201
        started = time.monotonic()
        wait_for(lambda: httpx.get(f"{second.url}/apis/kitchen.example.com/v1/namespaces/default/{n['plural']}", headers=second.auth)
                 .status_code == 200, timeout=5, interval=0.01, what="the second hub to serve the kind")
        print(f"second hub served the new kind after {1000 * (time.monotonic() - started):.0f} ms")
        body = {"apiVersion": "kitchen.example.com/v1", "kind": n["kind"], "metadata": {"name": "x"},
                "spec": {"menu": "pasta"}}
        assert httpx.post(f"{second.url}/apis/kitchen.example.com/v1/namespaces/default/{n['plural']}", headers=second.auth,
                          json=body).status_code == 201
        assert httpx.delete(f"{second.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                            f"{n['plural']}.kitchen.example.com", headers=second.auth).status_code == 200
        wait_for(lambda: httpx.get(f"{first.url}/apis/kitchen.example.com/v1/namespaces/default/{n['plural']}", headers=first.auth)
                 .status_code == 404, timeout=5, interval=0.01, what="the first hub to stop serving it")
    finally:
        first.stop()
        second.stop()
        _psql(f"DROP DATABASE IF EXISTS {database}")
