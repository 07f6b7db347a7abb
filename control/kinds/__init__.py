"""The registry of kinds the hub serves, looked up by resource path or by apiVersion and kind.

Guarantees: `KINDS` (the built-in kinds) is fixed at import; custom kinds come and go with
CustomResourceDefinitions (`crd_applied`, `crds_loaded`, called by the hub after commits and from
its change feed). Lookups are dictionary reads on an immutable snapshot, never a database access;
built-in kinds win over custom ones; every kind has a unique (group, version, plural) and a unique
(apiVersion, kind).
"""

from __future__ import annotations

import threading
from typing import Any

from control.kinds.apiservices import APISERVICE
from control.kinds.apps import DEPLOYMENT, REPLICASET
from control.kinds.autoscaling import HORIZONTALPODAUTOSCALER
from control.kinds.certificates import CERTIFICATESIGNINGREQUEST
from control.kinds.base import Kind
from control.kinds.coordination import LEASE
from control.kinds.crd import CUSTOMRESOURCEDEFINITION
from control.kinds.controllerrevisions import CONTROLLERREVISION
from control.kinds.cronjobs import CRONJOB
from control.kinds.disruption import PODDISRUPTIONBUDGET
from control.kinds.endpointslices import ENDPOINTSLICE
from control.kinds.daemonsets import DAEMONSET
from control.kinds.ingressclasses import INGRESSCLASS
from control.kinds.ingresses import INGRESS
from control.kinds.jobs import JOB
from control.kinds.networkpolicies import NETWORKPOLICY
from control.kinds.statefulsets import STATEFULSET
from control.kinds.storageclasses import STORAGECLASS
from control.kinds.volumes import PERSISTENTVOLUME, PERSISTENTVOLUMECLAIM
from control.kinds.custom import kinds_of, version_priority
from control.kinds.core import CONFIGMAP, ENDPOINTS, EVENT, NAMESPACE, NODE, SERVICE
from control.kinds.pods import POD
from control.kinds.priorityclasses import PRIORITYCLASS
from control.kinds.limitranges import LIMITRANGE
from control.kinds.resourcequotas import RESOURCEQUOTA
from control.kinds.rbac import CLUSTERROLE, CLUSTERROLEBINDING, ROLE, ROLEBINDING
from control.kinds.replicationcontrollers import REPLICATIONCONTROLLER
from control.kinds.secrets import SECRET
from control.kinds.serviceaccounts import SERVICEACCOUNT

KINDS: tuple[Kind, ...] = (NAMESPACE, NODE, POD, SERVICE, ENDPOINTS, EVENT, CONFIGMAP, LEASE, DEPLOYMENT, REPLICASET,
                           HORIZONTALPODAUTOSCALER)
KINDS += (CUSTOMRESOURCEDEFINITION, SECRET)
KINDS += (SERVICEACCOUNT, JOB, CRONJOB)
KINDS += (PODDISRUPTIONBUDGET,)
KINDS += (DAEMONSET,)
KINDS += (CONTROLLERREVISION,)
KINDS += (STATEFULSET, PERSISTENTVOLUME, PERSISTENTVOLUMECLAIM, STORAGECLASS)
KINDS += (ROLE, CLUSTERROLE, ROLEBINDING, CLUSTERROLEBINDING)
# admission order as kube-apiserver's: LimitRanger's defaults, then Priority, then ResourceQuota counts them
KINDS += (LIMITRANGE, PRIORITYCLASS, RESOURCEQUOTA)
KINDS += (REPLICATIONCONTROLLER,)
KINDS += (APISERVICE,)
KINDS += (CERTIFICATESIGNINGREQUEST,)
KINDS += (INGRESS, INGRESSCLASS)
KINDS += (ENDPOINTSLICE,)
KINDS += (NETWORKPOLICY,)

# every version served of the built-in kinds: each kind, then the other versions it brings (the
# first listed is the group's preferred version); KINDS stays one entry per stored kind
SERVED: tuple[Kind, ...] = tuple(version for k in KINDS for version in (k, *k.other_versions))
_BY_RESOURCE = {(k.group, k.version, k.plural): k for k in SERVED}
_BY_GVK = {(k.api_version, k.kind): k for k in SERVED}


class _Served:
    """The custom kinds, swapped whole on every change so readers need no lock: a reader holds one
    consistent snapshot (`_served`) for as long as it keeps the reference."""

    def __init__(self, by_crd: dict[str, tuple[Kind, ...]]):
        self.by_crd = by_crd
        self.kinds: list[Kind] = [k for name in sorted(by_crd) for k in by_crd[name]]
        self.by_resource = {(k.group, k.version, k.plural): k for k in self.kinds}
        self.by_gvk = {(k.api_version, k.kind): k for k in self.kinds}


_served = _Served({})
_applied: dict[str, int] = {}  # CRD name -> revision of the last change applied (deletions too)
_lock = threading.Lock()
generation = 0  # bumped on every change of the custom kinds (OpenAPI documents are cached by it)


def by_resource(group: str, version: str, plural: str) -> Kind | None:
    key = (group, version, plural)
    return _BY_RESOURCE.get(key) or _served.by_resource.get(key)


def by_kind(api_version: str, kind: str) -> Kind | None:
    key = (api_version, kind)
    return _BY_GVK.get(key) or _served.by_gvk.get(key)


def all_kinds() -> list[Kind]:
    """Built-in kinds, then custom ones (each served version of each CRD), the latter marked `custom`."""
    return [*KINDS, *_served.kinds]


def served_kinds() -> list[Kind]:
    """Every kind as served: each version of the built-in kinds, then the custom ones."""
    return [*SERVED, *_served.kinds]


def custom_kinds() -> list[Kind]:
    return list(_served.kinds)


def group_versions() -> dict[str, list[str]]:
    """{group: [versions]} for every group served ("" is the core group), preferred version first."""
    out: dict[str, list[str]] = {}
    for k in SERVED:
        versions = out.setdefault(k.group, [])
        if k.version not in versions:
            versions.append(k.version)
    custom: dict[str, list[str]] = {}
    for k in _served.kinds:
        if k.group not in out and k.version not in custom.setdefault(k.group, []):
            custom[k.group].append(k.version)
    for group, versions in custom.items():
        out[group] = sorted(versions, key=version_priority)
    return out


def kinds_in(group: str, version: str) -> list[Kind]:
    return [k for k in served_kinds() if k.group == group and k.version == version]


# --- custom kinds, from CustomResourceDefinitions -------------------------------------------------

def names_in_use(crd: dict[str, Any]) -> str:
    """The first of a definition's names another served kind already uses in its group, as the
    NamesAccepted condition says it ("" when there is none)."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group, own = spec.get("group"), (crd.get("metadata") or {}).get("name")
    others = [k for k in all_kinds() if k.group == group and k.crd != own]
    wanted = [("plural", names.get("plural")), ("singular", names.get("singular") or str(names.get("kind", "")).lower()),
              ("kind", names.get("kind")), ("listKind", names.get("listKind"))]
    wanted += [("shortNames", short) for short in names.get("shortNames") or []]
    for field, value in wanted:
        if not value:
            continue
        for other in others:
            taken = {"plural": {other.plural, other.singular}, "singular": {other.plural, other.singular},
                     "kind": {other.kind, other.list_kind}, "listKind": {other.kind, other.list_kind},
                     "shortNames": set(other.short_names)}[field]
            if value in taken:
                return f'"{value}" is already in use'
    return ""


def crd_applied(crd: dict[str, Any], *, revision: int, deleted: bool = False) -> None:
    """Serve (or stop serving) what a committed CustomResourceDefinition says. Changes older than
    the last one applied for that definition are ignored, so the store listener and the change feed
    may both report the same commit, in any order."""
    global _served, generation
    name = crd["metadata"]["name"]
    with _lock:
        if _applied.get(name, 0) >= revision:
            return
        _applied[name] = revision
        by_crd = dict(_served.by_crd)
        kinds = () if deleted else tuple(kinds_of(crd))
        if kinds:
            by_crd[name] = kinds
        else:
            by_crd.pop(name, None)
        if by_crd != _served.by_crd:
            _served = _Served(by_crd)
            generation += 1


def crds_loaded(crds: list[dict[str, Any]], *, revision: int, reset: bool = False) -> None:
    """Every stored definition as of `revision` (a list read): serve exactly those, except where a
    newer change was already applied. `reset` forgets everything first (a fresh store)."""
    global _served, generation
    with _lock:
        if reset:
            _applied.clear()
            _served, generation = _Served({}), generation + 1
        present = {c["metadata"]["name"] for c in crds}
        by_crd = dict(_served.by_crd)
        for name in list(by_crd):
            if name not in present and _applied.get(name, 0) <= revision:
                by_crd.pop(name)
                _applied[name] = revision
        _served, generation = _Served(by_crd), generation + 1
    for crd in crds:
        crd_applied(crd, revision=int(crd["metadata"].get("resourceVersion") or revision))
