"""The ServiceAccount kind (core/v1), its `token` subresource (TokenRequest) and the ServiceAccount
admission of pods.

Guarantees:
- a ServiceAccount has `secrets`, `imagePullSecrets` and `automountServiceAccountToken`; columns
  NAME SECRETS AGE; short name `sa`;
- POST `serviceaccounts/NAME/token` answers a TokenRequest whose `status.token` is a JWT signed by
  the hub (the claims of `control.kinds.tokens`), for the requested audiences (the hub's own when
  none), lifetime (default 3600 s, at least 600 s: 422 below) and bound Pod, Secret or Node (404
  when it does not exist, 409 when its uid differs);
- pod admission (upstream `plugin/pkg/admission/serviceaccount`): a pod without a ServiceAccount
  runs as `default` (`serviceAccountName` and the deprecated `serviceAccount` both set); a pod
  naming a missing ServiceAccount is refused (403), except `default`, taken as a plain account until
  the controller makes it; a pod without imagePullSecrets gets its account's;
  unless `automountServiceAccountToken` is false (the pod's setting wins over the account's), the
  pod gets the projected volume `kube-api-access-<5 random>` (token, `ca.crt` from the
  `kube-root-ca.crt` ConfigMap, `namespace`) mounted read-only at TOKEN_MOUNT_PATH in every init
  and app container that has nothing mounted there yet.
"""

from __future__ import annotations

import random
import uuid
from typing import Any

from control import errors
from control.kinds.base import AGE_COLUMN, NAME_COLUMN, Cause, Column, Kind, Obj, cause
from control.kinds.meta import age, format_time
from control.kinds.strategy import Action, Lent, Lookup
from control.kinds.tokens import (
    AUDIENCES, BINDABLE_KINDS, DEFAULT_EXPIRATION_SECONDS, expiration_causes, token_claims,
)

DEFAULT_ACCOUNT = "default"
ROOT_CA_CONFIGMAP = "kube-root-ca.crt"
TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
TOKEN_VOLUME_PREFIX = "kube-api-access-"
TOKEN_EXPIRATION_SECONDS = 3607  # upstream's projected token: an hour and 7 s, to tell it apart
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # utilrand.String's: no vowels, no look-alikes


def _list_causes(account: Obj, key: str) -> list[Cause]:
    value = account.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        return [cause(key, "Invalid value: must be a list of object references")]
    return []


def validate_service_account(account: Obj) -> list[Cause]:
    out = _list_causes(account, "secrets") + _list_causes(account, "imagePullSecrets")
    automount = account.get("automountServiceAccountToken")
    if automount is not None and not isinstance(automount, bool):
        out.append(cause("automountServiceAccountToken", "Invalid value: must be a boolean"))
    return out


def service_account_cells(account: Obj, now: float) -> list[Any]:
    secrets = account.get("secrets")
    return [account["metadata"]["name"], len(secrets) if isinstance(secrets, list) else 0, age(account, now)]


# --- the token subresource ---------------------------------------------------------------------

def _bound_object(account: Obj, spec: dict[str, Any], lent: Lent) -> tuple[Obj | None, Obj | None]:
    """The object (and a bound pod's node) the token is bound to, read through the hub."""
    ref = spec.get("boundObjectRef")
    if not ref:
        return None, None
    if not isinstance(ref, dict):
        raise errors.BadRequest("spec.boundObjectRef must be an object")
    kind, name, uid = ref.get("kind"), ref.get("name"), ref.get("uid")
    if kind not in BINDABLE_KINDS or ref.get("apiVersion") not in (None, "", "v1"):
        raise errors.BadRequest(f"cannot bind token for object of kind {kind!r} ({ref.get('apiVersion') or ''})")
    if not isinstance(name, str) or not name:
        raise errors.invalid("TokenRequest", "authentication.k8s.io", "", [
            cause("spec.boundObjectRef.name", "Required value", "FieldValueRequired")])
    resource = f"/{kind.lower()}s"
    namespace = "" if kind == "Node" else account["metadata"]["namespace"]
    bound = lent.lookup(resource, namespace, name)
    if bound is None:
        raise errors.not_found(resource, name)
    if uid and uid != bound["metadata"].get("uid"):
        raise errors.conflict(kind, name, f"the UID in the bound object reference ({uid}) does not match the UID "
                              "in record. The object might have been deleted and then recreated")
    bound = {**bound, "kind": kind}
    node_name = (bound.get("spec") or {}).get("nodeName") if kind == "Pod" else None
    node = lent.lookup("/nodes", "", node_name) if node_name else None
    return bound, node


def request_token(account: Obj, body: Obj, lent: Lent) -> Obj:
    """The TokenRequest answered for ServiceAccount `account` (upstream's TokenREST.Create)."""
    spec = body.get("spec")
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        raise errors.BadRequest("spec must be an object")
    expiration = spec.get("expirationSeconds")
    if expiration is None:
        expiration = DEFAULT_EXPIRATION_SECONDS
    causes = expiration_causes(expiration)
    audiences = spec.get("audiences") or list(AUDIENCES)
    if not isinstance(audiences, list) or not all(isinstance(a, str) for a in audiences):
        causes.append(cause("spec.audiences", "Invalid value: must be a list of strings"))
    if causes:
        raise errors.invalid("TokenRequest", "authentication.k8s.io", "", causes)
    bound, node = _bound_object(account, spec, lent)
    issued = int(lent.now)
    claims = token_claims(account, audiences=audiences, now=issued, expiration_seconds=expiration,
                          token_id=str(uuid.uuid4()), bound=bound, node=node)
    meta = account["metadata"]
    return {
        "kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
        "metadata": {**(body.get("metadata") or {}), "name": meta["name"], "namespace": meta["namespace"],
                     "creationTimestamp": None},
        "spec": {**spec, "audiences": audiences, "expirationSeconds": expiration},
        "status": {"token": lent.sign(claims), "expirationTimestamp": format_time(issued + expiration)},
    }


TOKEN = Action(group="authentication.k8s.io", version="v1", kind="TokenRequest", create=request_token)


# --- pod admission -----------------------------------------------------------------------------

def token_volume(name: str) -> Obj:
    """The projected volume upstream's admission adds (fully defaulted, as stored)."""
    return {"name": name, "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS, "path": "token"}},
        {"configMap": {"name": ROOT_CA_CONFIGMAP, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace",
                                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
    ]}}


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def should_automount(pod_spec: dict[str, Any], account: Obj) -> bool:
    for setting in (pod_spec.get("automountServiceAccountToken"), account.get("automountServiceAccountToken")):
        if isinstance(setting, bool):
            return setting
    return True


def mount_token(pod_spec: dict[str, Any], suffix: str) -> None:
    """Mount the token volume into every container lacking a mount at TOKEN_MOUNT_PATH; add the
    volume (an existing `kube-api-access-*` one is reused) when some container needed it."""
    volumes = pod_spec.get("volumes")
    volumes = volumes if isinstance(volumes, list) else []
    existing = next((v["name"] for v in _dicts(volumes) if str(v.get("name", "")).startswith(TOKEN_VOLUME_PREFIX)), "")
    name = existing or TOKEN_VOLUME_PREFIX + suffix
    needed = False
    for key in ("initContainers", "containers"):
        for container in _dicts(pod_spec.get(key)):
            mounts = container.get("volumeMounts")
            mounts = mounts if isinstance(mounts, list) else []
            if any(m.get("mountPath") == TOKEN_MOUNT_PATH for m in _dicts(mounts)):
                continue
            container["volumeMounts"] = [*mounts, {"name": name, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH}]
            needed = True
    if needed and not existing:
        pod_spec["volumes"] = [*volumes, token_volume(name)]


def random_suffix(length: int = 5) -> str:
    return "".join(random.choice(NAME_ALPHABET) for _ in range(length))


def admit_pod(pod: Obj, lookup: Lookup) -> str:
    """The ServiceAccount admission of a new pod; returns why it is refused ("" when admitted)."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return ""
    annotations = pod["metadata"].get("annotations")
    if isinstance(annotations, dict) and MIRROR_POD_ANNOTATION in annotations:
        return ""  # a static pod's mirror may not use the API (upstream refuses any reference; we leave it be)
    name = spec.get("serviceAccountName") or spec.get("serviceAccount") or DEFAULT_ACCOUNT
    if not isinstance(name, str):
        return ""  # validation reports the type
    spec["serviceAccountName"] = spec["serviceAccount"] = name
    namespace = str(pod["metadata"].get("namespace") or "")
    account = lookup("/serviceaccounts", namespace, name)
    if account is None and name != DEFAULT_ACCOUNT:
        return f'error looking up service account {namespace}/{name}: serviceaccount "{name}" not found'
    # Upstream refuses a pod also while `default` is not made yet; the hub admits it as if the
    # account were there and plain, so pods work with no controller-manager running (the hub alone).
    account = account or {}
    if not spec.get("imagePullSecrets") and _dicts(account.get("imagePullSecrets")):
        spec["imagePullSecrets"] = [{"name": ref.get("name", "")} for ref in _dicts(account["imagePullSecrets"])]
    if should_automount(spec, account):
        mount_token(spec, random_suffix())
    return ""


SERVICEACCOUNT = Kind(
    group="", version="v1", kind="ServiceAccount", plural="serviceaccounts", namespaced=True,
    definition="io.k8s.api.core.v1.ServiceAccount", short_names=("sa",),
    subresources=("token",), actions={"token": TOKEN},
    validate=validate_service_account,
    columns=(NAME_COLUMN, Column("Secrets", type="integer", description="The number of secrets the account holds."),
             AGE_COLUMN),
    cells=service_account_cells,
)
