"""The ServiceAccount kind: validation, printing, the token action and the pod admission, called
directly with a dictionary standing in for the store."""

from __future__ import annotations

import copy

import jwt
import pytest

from control import errors
from control.kinds.serviceaccounts import (
    SERVICEACCOUNT, TOKEN_MOUNT_PATH, admit_pod, mount_token, request_token, service_account_cells,
    validate_service_account,
)
from control.kinds.strategy import Lent

NOW = 1_800_000_000.0


def account(name: str = "sa", namespace: str = "default", **fields) -> dict:
    return {"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}",
                         "creationTimestamp": "2027-01-15T08:00:00Z"}, **fields}


def pod(spec: dict | None = None, name: str = "p", namespace: str = "default") -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": spec if spec is not None else {"containers": [{"name": "c", "image": "nginx"}]}}


def lookup_of(*objects: dict):
    """A read-only store stand-in: (resource, namespace, name) -> object, and what was asked."""
    by_key = {}
    for obj in objects:
        plural = {"ServiceAccount": "serviceaccounts", "Pod": "pods", "Node": "nodes", "Secret": "secrets"}[obj["kind"]]
        by_key[(f"/{plural}", obj["metadata"].get("namespace", ""), obj["metadata"]["name"])] = obj
    asked = []

    def lookup(resource, namespace, name):
        asked.append((resource, namespace, name))
        found = by_key.get((resource, namespace, name))
        return copy.deepcopy(found) if found else None

    lookup.asked = asked
    return lookup


# --- the kind ----------------------------------------------------------------------------------

def test_the_kind_is_served_as_kubectl_expects_it():
    assert (SERVICEACCOUNT.plural, SERVICEACCOUNT.short_names, SERVICEACCOUNT.namespaced) == ("serviceaccounts", ("sa",), True)
    assert [c.name for c in SERVICEACCOUNT.columns] == ["Name", "Secrets", "Age"]
    assert "token" in SERVICEACCOUNT.subresources and SERVICEACCOUNT.actions["token"].kind == "TokenRequest"


def test_cells_count_the_secrets():
    sa = account(secrets=[{"name": "a"}, {"name": "b"}])
    assert service_account_cells(sa, NOW)[:2] == ["sa", 2]
    assert service_account_cells(account(), NOW)[:2] == ["sa", 0]


def test_validation_refuses_wrong_shapes_only():
    assert validate_service_account(account(secrets=[{"name": "a"}], automountServiceAccountToken=False)) == []
    causes = validate_service_account(account(secrets="a", imagePullSecrets=["x"], automountServiceAccountToken="no"))
    assert [c["field"] for c in causes] == ["secrets", "imagePullSecrets", "automountServiceAccountToken"]


# --- the token action --------------------------------------------------------------------------

def lent(*objects: dict) -> tuple[Lent, list]:
    signed = []

    def sign(claims):
        signed.append(claims)
        return jwt.encode(claims, "test-secret-that-is-long-enough-for-hs256", algorithm="HS256")

    return Lent(lookup=lookup_of(*objects), now=NOW + 0.7, sign=sign), signed


def test_a_token_lasts_an_hour_for_the_hubs_audience_by_default():
    helper, signed = lent()
    answer = request_token(account(), {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                       "metadata": {}, "spec": {}}, helper)
    assert answer["kind"] == "TokenRequest" and answer["apiVersion"] == "authentication.k8s.io/v1"
    assert answer["spec"] == {"audiences": ["https://kubernetes.default.svc.cluster.local"], "expirationSeconds": 3600}
    assert answer["status"]["expirationTimestamp"] == "2027-01-15T09:00:00Z"
    claims = signed[0]
    assert claims["sub"] == "system:serviceaccount:default:sa"
    assert (claims["iat"], claims["nbf"], claims["exp"]) == (1_800_000_000, 1_800_000_000, 1_800_003_600)
    assert claims["kubernetes.io"] == {"namespace": "default", "serviceaccount": {"name": "sa", "uid": "uid-sa"}}
    assert jwt.decode(answer["status"]["token"], "test-secret-that-is-long-enough-for-hs256", algorithms=["HS256"],
                      audience="https://kubernetes.default.svc.cluster.local",  # issued in 2027 (fake time)
                      options={"verify_exp": False, "verify_iat": False, "verify_nbf": False})["sub"] == claims["sub"]


def test_requested_audiences_and_lifetime_are_kept():
    helper, signed = lent()
    answer = request_token(account(), {"spec": {"audiences": ["vault"], "expirationSeconds": 600}}, helper)
    assert answer["spec"]["audiences"] == ["vault"] and signed[0]["aud"] == ["vault"]
    assert signed[0]["exp"] - signed[0]["iat"] == 600


@pytest.mark.parametrize("seconds,text", [(599, "may not specify a duration less than 10 minutes"),
                                          ((1 << 32) + 1, "may not specify a duration larger than 2^32 seconds"),
                                          ("1h", "must be an integer")])
def test_a_bad_lifetime_is_invalid(seconds, text):
    helper, signed = lent()
    with pytest.raises(errors.Invalid) as refused:
        request_token(account(), {"spec": {"expirationSeconds": seconds}}, helper)
    assert refused.value.code == 422 and text in refused.value.message
    assert refused.value.details["causes"][0]["field"] == "spec.expirationSeconds"
    assert signed == []


def test_a_token_bound_to_a_pod_names_the_pod_and_its_node():
    bound = {"kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "uid-p"}, "spec": {"nodeName": "n1"}}
    node = {"kind": "Node", "metadata": {"name": "n1", "uid": "uid-n1"}}
    helper, signed = lent(bound, node)
    request_token(account(), {"spec": {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p"}}}, helper)
    private = signed[0]["kubernetes.io"]
    assert private["pod"] == {"name": "p", "uid": "uid-p"} and private["node"] == {"name": "n1", "uid": "uid-n1"}


def test_binding_to_a_missing_or_replaced_object_or_an_unknown_kind_is_refused():
    bound = {"kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "uid-p"}, "spec": {}}
    helper, signed = lent(bound)
    with pytest.raises(errors.NotFound) as missing:
        request_token(account(), {"spec": {"boundObjectRef": {"kind": "Pod", "name": "gone"}}}, helper)
    assert missing.value.message == 'pods "gone" not found'
    with pytest.raises(errors.Conflict):
        request_token(account(), {"spec": {"boundObjectRef": {"kind": "Pod", "name": "p", "uid": "other"}}}, helper)
    with pytest.raises(errors.BadRequest):
        request_token(account(), {"spec": {"boundObjectRef": {"kind": "Deployment", "name": "p"}}}, helper)
    assert signed == []


# --- pod admission -----------------------------------------------------------------------------

def test_a_pod_without_an_account_runs_as_default_with_the_token_volume():
    p = pod({"initContainers": [{"name": "i", "image": "busybox"}], "containers": [{"name": "c", "image": "nginx"}]})
    assert admit_pod(p, lookup_of(account("default"))) == ""
    spec = p["spec"]
    assert spec["serviceAccountName"] == spec["serviceAccount"] == "default"
    [volume] = spec["volumes"]
    assert volume["name"].startswith("kube-api-access-") and len(volume["name"]) == len("kube-api-access-") + 5
    sources = volume["projected"]["sources"]
    assert sources[0] == {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}
    assert sources[1] == {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}
    assert sources[2]["downwardAPI"]["items"][0]["fieldRef"]["fieldPath"] == "metadata.namespace"
    for container in spec["initContainers"] + spec["containers"]:
        assert container["volumeMounts"] == [{"name": volume["name"], "readOnly": True, "mountPath": TOKEN_MOUNT_PATH}]


def test_a_pod_naming_a_missing_account_is_refused_with_upstreams_words():
    p = pod({"serviceAccountName": "sa", "containers": [{"name": "c"}]})
    lookup = lookup_of(account("default"))
    assert admit_pod(p, lookup) == 'error looking up service account default/sa: serviceaccount "sa" not found'
    assert lookup.asked == [("/serviceaccounts", "default", "sa")]


def test_the_default_account_not_made_yet_still_admits_the_pod():
    p = pod()
    assert admit_pod(p, lookup_of()) == ""
    assert p["spec"]["serviceAccountName"] == "default" and p["spec"]["volumes"]


def test_the_deprecated_field_names_the_account_too():
    p = pod({"serviceAccount": "sa", "containers": [{"name": "c"}]})
    assert admit_pod(p, lookup_of(account("sa"))) == ""
    assert p["spec"]["serviceAccountName"] == "sa"


@pytest.mark.parametrize("on_pod,on_account,mounted", [(None, None, True), (False, None, False), (None, False, False),
                                                       (True, False, True), (False, True, False)])
def test_automount_follows_the_pod_then_the_account(on_pod, on_account, mounted):
    spec = {"containers": [{"name": "c"}]}
    if on_pod is not None:
        spec["automountServiceAccountToken"] = on_pod
    sa = account("default") if on_account is None else account("default", automountServiceAccountToken=on_account)
    p = pod(spec)
    assert admit_pod(p, lookup_of(sa)) == ""
    assert ("volumes" in p["spec"]) is mounted
    assert ("volumeMounts" in p["spec"]["containers"][0]) is mounted


def test_an_existing_mount_at_the_path_is_left_alone_and_an_existing_volume_reused():
    own = {"name": "mine", "mountPath": TOKEN_MOUNT_PATH}
    spec = {"containers": [{"name": "a", "volumeMounts": [own]}, {"name": "b"}],
            "volumes": [{"name": "kube-api-access-old", "projected": {"sources": []}}]}
    mount_token(spec, "new12")
    assert spec["containers"][0]["volumeMounts"] == [own]
    assert spec["containers"][1]["volumeMounts"][0]["name"] == "kube-api-access-old"
    assert [v["name"] for v in spec["volumes"]] == ["kube-api-access-old"]
    alone = {"containers": [{"name": "a", "volumeMounts": [own]}]}
    mount_token(alone, "new12")
    assert "volumes" not in alone, "no container needed the volume"


def test_image_pull_secrets_come_from_the_account_unless_the_pod_names_some():
    sa = account("default", imagePullSecrets=[{"name": "regcred"}])
    p = pod()
    admit_pod(p, lookup_of(sa))
    assert p["spec"]["imagePullSecrets"] == [{"name": "regcred"}]
    own = pod({"containers": [{"name": "c"}], "imagePullSecrets": [{"name": "mine"}]})
    admit_pod(own, lookup_of(sa))
    assert own["spec"]["imagePullSecrets"] == [{"name": "mine"}]


def test_a_mirror_pod_is_not_touched():
    p = pod()
    p["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "x"}
    assert admit_pod(p, lookup_of()) == "" and "serviceAccountName" not in p["spec"]
