"""What a StatefulSet's pods, claims and revisions look like (upstream's `stateful_set_utils.go`),
as pure functions the statefulset controller composes.

Guarantees: nothing here does I/O or changes its arguments.
- Pod `<set>-<ordinal>`: the template of its revision, controlled by the set, labels
  `statefulset.kubernetes.io/pod-name`, `apps.kubernetes.io/pod-index` and
  `controller-revision-hash`, spec.hostname = its name and spec.subdomain = serviceName, and for
  each volumeClaimTemplate `t` a volume `t` on the claim `t-<set>-<ordinal>` (replacing a template
  volume of that name).
- Claims: `<template>-<pod>` with the template's spec and labels plus the selector's matchLabels.
- Revisions: the data is the patch that restores the template (`{"spec": {"template": ...,
  "$patch": "replace"}}`), the name `<set>-<hash>` where the hash is upstream's HashControllerRevision of the data
  and the collision count (`control.kinds.hashing.controller_revision_hash`: FNV-1 32, safe-encoded).
- `claim_owner_refs` is upstream's `updateClaimOwnerRefForSetAndPod`: which of the set and the
  pod own a claim under persistentVolumeClaimRetentionPolicy.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from control.controllers.common import Obj, uid_of
from control.kinds.hashing import controller_revision_hash as revision_hash
from control.kinds.meta import labels_of, metadata, new_controller_ref, owner_reference, owner_references

POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_LABEL = "controller-revision-hash"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def spec(sts: Obj) -> dict[str, Any]:
    return _dict(sts.get("spec"))


def start_ordinal(sts: Obj) -> int:
    return int(_dict(spec(sts).get("ordinals")).get("start") or 0)


def replicas(sts: Obj) -> int:
    value = spec(sts).get("replicas")
    return 1 if value is None else int(value)


def pod_name(sts: Obj, ordinal: int) -> str:
    return f"{metadata(sts)['name']}-{ordinal}"


def ordinal_of(sts: Obj, pod: Obj) -> int | None:
    """The ordinal in a member's name `<set>-<n>`; None for a pod that is not a member by name."""
    match = re.fullmatch(rf"{re.escape(metadata(sts)['name'])}-(\d+)", metadata(pod).get("name", ""))
    return int(match.group(1)) if match else None


def claim_name(template_name: str, pod: str) -> str:
    return f"{template_name}-{pod}"


def claim_templates(sts: Obj) -> list[Obj]:
    return [t for t in spec(sts).get("volumeClaimTemplates") or [] if isinstance(t, dict)]


# --- revisions -----------------------------------------------------------------------------------

def revision_data(sts: Obj) -> Obj:
    template = copy.deepcopy(_dict(spec(sts).get("template")))
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def template_from_revision(revision: Obj) -> Obj:
    template = copy.deepcopy(_dict(_dict(_dict(revision.get("data")).get("spec")).get("template")))
    template.pop("$patch", None)
    return template


def new_revision(sts: Obj, number: int, collision_count: int = 0) -> Obj:
    data = revision_data(sts)
    labels = dict(_dict(_dict(spec(sts).get("selector")).get("matchLabels")))
    labels = {**labels_of({"metadata": _dict(spec(sts).get("template")).get("metadata") or {}}), **labels}
    meta: Obj = {"name": f"{metadata(sts)['name']}-{revision_hash(data, collision_count)}",
                 "namespace": metadata(sts)["namespace"], "labels": labels,
                 "ownerReferences": [controller_ref_to(sts)]}
    if metadata(sts).get("annotations"):
        # upstream's newRevision copies the set's annotations: kubectl's change-cause travels with it
        meta["annotations"] = dict(metadata(sts)["annotations"])
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": meta, "data": data, "revision": number}


def controller_ref_to(sts: Obj) -> Obj:
    return new_controller_ref(sts, api_version="apps/v1", kind="StatefulSet")


# --- pods and claims -----------------------------------------------------------------------------

def new_pod(sts: Obj, revision: Obj, ordinal: int) -> Obj:
    template = template_from_revision(revision)
    tmeta = _dict(template.get("metadata"))
    name = pod_name(sts, ordinal)
    labels = {**dict(tmeta.get("labels") or {}), POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal),
              REVISION_LABEL: metadata(revision)["name"]}
    pod_meta: Obj = {"name": name, "namespace": metadata(sts)["namespace"], "labels": labels,
                     "ownerReferences": [controller_ref_to(sts)]}
    if tmeta.get("annotations"):
        pod_meta["annotations"] = copy.deepcopy(tmeta["annotations"])
    pod_spec = copy.deepcopy(_dict(template.get("spec")))
    pod_spec["hostname"] = name
    if spec(sts).get("serviceName"):
        pod_spec["subdomain"] = spec(sts)["serviceName"]
    claims = {metadata(t).get("name"): claim_name(metadata(t).get("name", ""), name) for t in claim_templates(sts)}
    volumes = [v for v in pod_spec.get("volumes") or [] if _dict(v).get("name") not in claims]
    volumes += [{"name": t, "persistentVolumeClaim": {"claimName": c}} for t, c in claims.items()]
    if volumes:
        pod_spec["volumes"] = volumes
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": pod_spec}


def identity_matches(sts: Obj, pod: Obj, ordinal: int) -> bool:
    labels, pod_spec = labels_of(pod), _dict(pod.get("spec"))
    return (labels.get(POD_NAME_LABEL) == metadata(pod).get("name") and labels.get(POD_INDEX_LABEL) == str(ordinal)
            and pod_spec.get("hostname") == metadata(pod).get("name")
            and pod_spec.get("subdomain") == (spec(sts).get("serviceName") or None))


def identity_patch(sts: Obj, pod: Obj, ordinal: int) -> Obj:
    """A merge patch restoring a member's identity (upstream's updateIdentity), guarded by its version."""
    name = metadata(pod)["name"]
    return {"metadata": {"labels": {POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal)},
                         "resourceVersion": metadata(pod).get("resourceVersion")},
            "spec": {"hostname": name, "subdomain": spec(sts).get("serviceName") or None}}


def new_claim(sts: Obj, template: Obj, pod: str) -> Obj:
    tmeta = _dict(template.get("metadata"))
    labels = {**dict(tmeta.get("labels") or {}),
              **dict(_dict(_dict(spec(sts).get("selector")).get("matchLabels")))}
    meta: Obj = {"name": claim_name(tmeta.get("name", ""), pod), "namespace": metadata(sts)["namespace"],
                 "labels": labels}
    if tmeta.get("annotations"):
        meta["annotations"] = copy.deepcopy(tmeta["annotations"])
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
            "spec": copy.deepcopy(_dict(template.get("spec")))}


def claim_owner_refs(sts: Obj, claim: Obj, pod: Obj | None, condemned: bool) -> list[Obj] | None:
    """The claim's ownerReferences under the retention policy, or None when they need no change."""
    policy = _dict(spec(sts).get("persistentVolumeClaimRetentionPolicy"))
    delete_with_set = policy.get("whenDeleted") == "Delete"
    delete_when_scaled = policy.get("whenScaled") == "Delete"
    want_set = delete_with_set and not (delete_when_scaled and condemned)
    want_pod = delete_when_scaled and condemned and pod is not None
    refs = [r for r in owner_references(claim) if r.get("uid") not in (uid_of(sts), uid_of(pod) if pod else None)]
    if want_set:
        refs.append(owner_reference("apps/v1", "StatefulSet", metadata(sts)["name"], uid_of(sts)))
    if want_pod and pod is not None:
        refs.append(owner_reference("v1", "Pod", metadata(pod)["name"], uid_of(pod)))
    current = owner_references(claim)
    key = lambda r: r.get("uid")  # noqa: E731
    if sorted(map(key, refs)) == sorted(map(key, current)):
        return None
    return refs
