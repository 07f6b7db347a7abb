"""The registry of kinds the hub serves, looked up by resource path or by apiVersion and kind.

Guarantees: `KINDS` is fixed at import; lookups are dictionary reads; every kind has a unique
(group, plural) and a unique (apiVersion, kind).
"""

from __future__ import annotations

from control.kinds.apps import DEPLOYMENT, REPLICASET
from control.kinds.base import Kind
from control.kinds.coordination import LEASE
from control.kinds.core import CONFIGMAP, ENDPOINTS, EVENT, NAMESPACE, NODE, SERVICE
from control.kinds.pods import POD

KINDS: tuple[Kind, ...] = (NAMESPACE, NODE, POD, SERVICE, ENDPOINTS, EVENT, CONFIGMAP, LEASE, DEPLOYMENT, REPLICASET)

_BY_RESOURCE = {(k.group, k.version, k.plural): k for k in KINDS}
_BY_GVK = {(k.api_version, k.kind): k for k in KINDS}


def by_resource(group: str, version: str, plural: str) -> Kind | None:
    return _BY_RESOURCE.get((group, version, plural))


def by_kind(api_version: str, kind: str) -> Kind | None:
    return _BY_GVK.get((api_version, kind))


def group_versions() -> dict[str, list[str]]:
    """{group: [versions]} for every group served ("" is the core group)."""
    out: dict[str, list[str]] = {}
    for k in KINDS:
        versions = out.setdefault(k.group, [])
        if k.version not in versions:
            versions.append(k.version)
    return out


def kinds_in(group: str, version: str) -> list[Kind]:
    return [k for k in KINDS if k.group == group and k.version == version]
