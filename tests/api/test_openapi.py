"""OpenAPI v3 documents: the root and its hashes, paths and operations per kind, the PATCH details
kubectl relies on, and components closed under $ref. kubectl's own lookups are re-enacted here."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re

import pytest

from control.api.openapi import (
    PATCH_TYPES, document_bytes, document_hash, group_version_document, root_document,
)
from control.kinds.base import Kind

POD = Kind(group="", version="v1", kind="Pod", plural="pods", namespaced=True,
           definition="io.k8s.api.core.v1.Pod", subresources=("status", "binding", "log"))
NODE = Kind(group="", version="v1", kind="Node", plural="nodes", namespaced=False,
            definition="io.k8s.api.core.v1.Node", subresources=("status",))
DEPLOYMENT = Kind(group="apps", version="v1", kind="Deployment", plural="deployments", namespaced=True,
                  definition="io.k8s.api.apps.v1.Deployment", subresources=("status", "scale"))
LEASE = Kind(group="coordination.k8s.io", version="v1", kind="Lease", plural="leases", namespaced=True,
             definition="io.k8s.api.coordination.v1.Lease")
FAKE = (POD, NODE, DEPLOYMENT, LEASE)
REF = re.compile(r'"\$ref": "#/components/schemas/([^"]+)"')


def doc(path: str) -> dict:
    document = group_version_document(path, kinds=FAKE)
    assert document is not None
    return document


def test_root_lists_each_group_version_with_the_hash_of_its_document():
    root = root_document(kinds=FAKE)
    assert sorted(root["paths"]) == ["api/v1", "apis/apps/v1", "apis/coordination.k8s.io/v1"]
    for path, entry in root["paths"].items():
        data = document_bytes(path, kinds=FAKE)
        digest = hashlib.sha512(data).hexdigest().upper()
        assert entry == {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
        assert json.loads(data) == doc(path)
        assert document_hash(path, kinds=FAKE) == digest
    assert root_document(kinds=FAKE) == root
    assert root_document(kinds=(POD,))["paths"]["api/v1"] != root["paths"]["api/v1"]


@pytest.mark.parametrize("path", ["apis/apps/v2", "apis/autoscaling/v1", "api/v2", "apis/nope/v1", "", "api"])
def test_unknown_group_versions_have_no_document(path):
    assert group_version_document(path, kinds=FAKE) is None
    assert document_bytes(path, kinds=FAKE) is None


def test_paths_of_a_namespaced_kind_with_subresources():
    paths = doc("api/v1")["paths"]
    base = "/api/v1/namespaces/{namespace}/pods"
    assert set(paths[base]) == {"get", "post", "delete", "parameters"}
    assert set(paths[base + "/{name}"]) == {"get", "put", "patch", "delete", "parameters"}
    assert set(paths["/api/v1/pods"]) == {"get", "parameters"}
    assert set(paths[base + "/{name}/status"]) == {"get", "put", "patch", "parameters"}
    assert set(paths[base + "/{name}/binding"]) == {"post", "parameters"}
    assert set(paths[base + "/{name}/log"]) == {"get", "parameters"}
    assert paths[base]["get"]["x-kubernetes-action"] == "list"
    assert paths[base]["delete"]["x-kubernetes-action"] == "deletecollection"
    assert paths[base + "/{name}"]["get"]["x-kubernetes-action"] == "get"
    binding = paths[base + "/{name}/binding"]["post"]
    assert binding["x-kubernetes-group-version-kind"] == {"group": "", "kind": "Binding", "version": "v1"}
    log = paths[base + "/{name}/log"]["get"]
    assert {p["name"] for p in log["parameters"]} >= {"container", "follow", "tailLines", "previous", "timestamps"}
    assert "text/plain" in log["responses"]["200"]["content"]
    names = [p["name"] for p in paths[base + "/{name}"]["parameters"]]
    assert names == ["name", "namespace", "pretty"]


def test_paths_of_a_cluster_scoped_kind():
    paths = doc("api/v1")["paths"]
    assert "/api/v1/nodes" in paths and "/api/v1/nodes/{name}" in paths and "/api/v1/nodes/{name}/status" in paths
    assert not any("namespaces/{namespace}/nodes" in p for p in paths)
    assert [p["name"] for p in paths["/api/v1/nodes/{name}"]["parameters"]] == ["name", "pretty"]
    assert paths["/api/v1/nodes"]["get"]["operationId"] == "listCoreV1Node"


def test_scale_operations_speak_autoscaling_v1_scale():
    apps = doc("apis/apps/v1")
    scale = apps["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]
    for verb in ("get", "put", "patch"):
        assert scale[verb]["x-kubernetes-group-version-kind"] == {"group": "autoscaling", "kind": "Scale", "version": "v1"}
    assert "io.k8s.api.autoscaling.v1.Scale" in apps["components"]["schemas"]
    assert "io.k8s.api.autoscaling.v1.Scale" not in doc("api/v1")["components"]["schemas"]
    assert scale["put"]["requestBody"]["content"]["*/*"]["schema"]["$ref"].endswith("autoscaling.v1.Scale")


@pytest.mark.parametrize("path", ["api/v1", "apis/apps/v1", "apis/coordination.k8s.io/v1"])
def test_every_operation_names_action_and_gvk_and_every_patch_is_complete(path):
    document = doc(path)
    assert document["openapi"] == "3.0.0" and document["info"]["title"]
    patches = 0
    for item in document["paths"].values():
        for verb, op in item.items():
            if verb == "parameters":
                continue
            assert op["x-kubernetes-action"] in {"get", "list", "put", "post", "patch", "delete", "deletecollection"}
            assert set(op["x-kubernetes-group-version-kind"]) == {"group", "version", "kind"}
            assert op["operationId"] and op["responses"]
            if verb == "patch":
                patches += 1
                assert set(op["requestBody"]["content"]) == set(PATCH_TYPES)
                query = {p["name"] for p in op["parameters"] if p["in"] == "query"}
                assert {"fieldValidation", "fieldManager", "dryRun", "force"} <= query
            if verb in ("put", "post"):
                assert "fieldValidation" in {p["name"] for p in op["parameters"]}
    assert patches >= 1


@pytest.mark.parametrize("path", ["api/v1", "apis/apps/v1", "apis/coordination.k8s.io/v1"])
def test_components_are_closed_under_ref(path):
    document = doc(path)
    schemas = document["components"]["schemas"]
    text = json.dumps(document)
    assert set(REF.findall(text)) <= set(schemas)
    # nothing unreachable: every component is referenced or is a kind / list / operation body
    referenced = set(REF.findall(json.dumps(document["paths"])))
    for name, schema in schemas.items():
        referenced |= set(REF.findall(json.dumps(schema)))
    roots = {n for n in schemas if "x-kubernetes-group-version-kind" in schemas[n]}
    if path == "api/v1":
        roots.add("io.k8s.apimachinery.pkg.apis.meta.v1.List")  # for `kind: List` manifests
    assert set(schemas) == referenced | roots


def test_the_core_document_has_the_v1_list_of_any_objects():
    core = doc("api/v1")["components"]["schemas"]
    listed = core["io.k8s.apimachinery.pkg.apis.meta.v1.List"]
    assert listed["required"] == ["items"]
    assert listed["properties"]["items"]["items"] == {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.runtime.RawExtension"}
    assert core["io.k8s.apimachinery.pkg.runtime.RawExtension"]["x-kubernetes-preserve-unknown-fields"] is True
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.List" not in doc("apis/apps/v1")["components"]["schemas"]


def test_components_hold_what_each_group_version_needs_and_no_more():
    core = doc("api/v1")["components"]["schemas"]
    assert {"io.k8s.api.core.v1.Pod", "io.k8s.api.core.v1.PodSpec", "io.k8s.api.core.v1.Container",
            "io.k8s.api.core.v1.Binding", "io.k8s.api.core.v1.PodList", "io.k8s.api.core.v1.NodeList",
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
            "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"} <= set(core)
    lease = doc("apis/coordination.k8s.io/v1")["components"]["schemas"]
    assert "io.k8s.api.coordination.v1.Lease" in lease and "io.k8s.api.core.v1.PodSpec" not in lease
    pod_list = core["io.k8s.api.core.v1.PodList"]
    assert pod_list["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "PodList", "version": "v1"}]


# --- kubectl's own use of the documents, re-enacted ----------------------------------------------

def _gvk_matches(ext, group, version, kind):
    return ext == {"group": group, "version": version, "kind": kind}


def _kubectl_supports_smp_and_server_validation(document, group, version, kind):
    """Patcher.gvkSupportsPatchOpenAPIV3 and queryParamVerifierV3.HasSupport(fieldValidation)."""
    for item in document["paths"].values():
        op = item.get("patch")
        if op and _gvk_matches(op.get("x-kubernetes-group-version-kind"), group, version, kind):
            smp = "application/strategic-merge-patch+json" in op["requestBody"]["content"]
            validation = any(p["name"] == "fieldValidation" and p["in"] == "query" for p in op["parameters"])
            return smp and validation
    return False


def _resolve(schemas, schema):
    if schema.get("allOf"):
        schema = schema["allOf"][0]
    if "$ref" in schema:
        schema = schemas[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _three_way_walk(schemas, schema, obj, path=""):
    """Every lookup strategicpatch.PatchMetaFromOpenAPIV3 makes while diffing `obj` with itself."""
    metas = {}
    for key, value in obj.items():
        if not isinstance(value, (dict, list)):
            continue
        props = schema.get("properties") or {}
        assert key in props, f'unable to find api field "{key}" at {path}'
        sub = props[key]
        metas[f"{path}{key}"] = (sub.get("x-kubernetes-patch-strategy"), sub.get("x-kubernetes-patch-merge-key"))
        if isinstance(value, dict):
            metas.update(_three_way_walk(schemas, _resolve(schemas, sub), value, f"{path}{key}."))
        else:
            items = _resolve(schemas, sub.get("items") or {})
            for element in value:
                if isinstance(element, dict):
                    metas.update(_three_way_walk(schemas, items, element, f"{path}{key}[]."))
    return metas


MANIFEST = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "labels": {"app": "web"}, "finalizers": ["f"]},
    "spec": {
        "replicas": 2, "selector": {"matchLabels": {"app": "web"}},
        "strategy": {"rollingUpdate": {"maxSurge": 1}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
            "containers": [{"name": "web", "image": "nginx", "args": ["-g"],
                            "ports": [{"containerPort": 80}],
                            "env": [{"name": "A", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}}],
                            "resources": {"limits": {"cpu": "1"}},
                            "securityContext": {"capabilities": {"add": ["NET_ADMIN"]}},
                            "readinessProbe": {"httpGet": {"path": "/", "port": 80,
                                                           "httpHeaders": [{"name": "a", "value": "b"}]}},
                            "volumeMounts": [{"name": "v", "mountPath": "/v"}]}],
            "volumes": [{"name": "v", "configMap": {"name": "c", "items": [{"key": "a", "path": "a"}]}},
                        {"name": "s", "secret": {"secretName": "s"}},
                        {"name": "p", "projected": {"sources": [{"downwardAPI": {"items": [
                            {"path": "l", "fieldRef": {"fieldPath": "metadata.labels"}}]}}]}}],
            "tolerations": [{"key": "k", "operator": "Exists"}],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "In", "values": ["b"]}]}]}}},
        }},
    },
}


def test_kubectl_apply_finds_patch_metadata_for_every_nested_field():
    document = doc("apis/apps/v1")
    assert _kubectl_supports_smp_and_server_validation(document, "apps", "v1", "Deployment")
    schemas = document["components"]["schemas"]
    [component] = [s for s in schemas.values() if {"group": "apps", "kind": "Deployment", "version": "v1"}
                   in s.get("x-kubernetes-group-version-kind", [])]
    metas = _three_way_walk(schemas, component, MANIFEST)
    assert metas["spec.template.spec.containers"] == ("merge", "name")
    assert metas["spec.template.spec.containers[].ports"] == ("merge", "containerPort")
    assert metas["spec.template.spec.containers[].env"] == ("merge", "name")
    assert metas["spec.template.spec.containers[].volumeMounts"] == ("merge", "mountPath")
    assert metas["spec.template.spec.volumes"] == ("merge,retainKeys", "name")
    assert metas["spec.strategy"] == ("retainKeys", None)  # Recreate drops a defaulted rollingUpdate
    assert metas["spec.template.spec.tolerations"] == (None, None)
    assert metas["metadata.finalizers"] == ("merge", None)


def test_kubectl_validation_is_left_to_the_server_for_every_kind():
    for k in FAKE:
        document = doc(f"apis/{k.group}/{k.version}" if k.group else f"api/{k.version}")
        assert _kubectl_supports_smp_and_server_validation(document, k.group, k.version, k.kind), k.kind


def test_the_real_kinds_get_documents_too():
    from control.kinds import KINDS

    root = root_document()
    assert {"api/v1", "apis/apps/v1", "apis/coordination.k8s.io/v1"} <= set(root["paths"])
    for k in KINDS:
        path = f"apis/{k.group}/{k.version}" if k.group else f"api/{k.version}"
        document = group_version_document(path)
        assert k.definition in document["components"]["schemas"]
        assert _kubectl_supports_smp_and_server_validation(document, k.group, k.version, k.kind), k.kind
    assert group_version_document("api/v1") is group_version_document("api/v1")  # cached


def _delete_answer(document: dict, path: str) -> set[str]:
    responses = document["paths"][path]["delete"]["responses"]
    assert set(responses) == {"200", "202", "401"}
    return {responses[code]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
            for code in ("200", "202")}


def test_delete_answers_what_the_kinds_strategy_returns():
    from control.kinds import KINDS

    core = group_version_document("api/v1")
    by_kind = {k.kind: k for k in KINDS}
    # upstream's deleteNamespacedPod answers 200/202 with a Pod; deleteNamespacedConfigMap with a Status
    assert _delete_answer(core, "/api/v1/namespaces/{namespace}/pods/{name}") == {"io.k8s.api.core.v1.Pod"}
    assert _delete_answer(core, "/api/v1/namespaces/{namespace}/services/{name}") == {"io.k8s.api.core.v1.Service"}
    assert _delete_answer(core, "/api/v1/namespaces/{name}") == {"io.k8s.api.core.v1.Namespace"}
    assert _delete_answer(core, "/api/v1/namespaces/{namespace}/configmaps/{name}") == {
        "io.k8s.apimachinery.pkg.apis.meta.v1.Status"}
    for k in KINDS:
        document = group_version_document(f"apis/{k.group}/{k.version}" if k.group else f"api/{k.version}")
        prefix = f"/apis/{k.group}/{k.version}" if k.group else f"/api/{k.version}"
        path = f"{prefix}/namespaces/{{namespace}}/{k.plural}/{{name}}" if k.namespaced else f"{prefix}/{k.plural}/{{name}}"
        wanted = by_kind[k.kind].definition if k.deletion.returns_object else "io.k8s.apimachinery.pkg.apis.meta.v1.Status"
        assert _delete_answer(document, path) == {wanted}, k.kind


def test_a_kind_that_takes_no_strategic_merge_patch_does_not_list_it():
    plain = dataclasses.replace(LEASE, merges_strategically=False)
    patch = group_version_document("apis/coordination.k8s.io/v1", kinds=(plain,))["paths"][
        "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}"]["patch"]
    assert set(patch["requestBody"]["content"]) == set(PATCH_TYPES) - {"application/strategic-merge-patch+json"}
    patch = doc("apis/coordination.k8s.io/v1")["paths"][
        "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}"]["patch"]
    assert set(patch["requestBody"]["content"]) == set(PATCH_TYPES)
