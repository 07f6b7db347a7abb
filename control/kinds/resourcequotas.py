"""The ResourceQuota kind (core/v1) and its admission (upstream ValidateResourceQuota and
plugin/pkg/admission/resourcequota with the core evaluators, `control.kinds.quota_usage`).

Guarantees:
- validation as upstream: every `spec.hard` key is a standard quota resource or a qualified name
  (`count/deployments.apps`), every value a non-negative quantity, the object counts integers;
  scopes are known ones and BestEffort/NotBestEffort, Terminating/NotTerminating never together;
- `status` is the controller's (a status subresource); the printer shows kubectl's
  NAME AGE REQUEST LIMIT (`pods: 1/10`, limits.* in LIMIT);
- admission (`QUOTA_POLICY.validate`): a create in a namespace with quotas is refused, 403, when
  a quota'd compute resource is missing from a container (`failed quota: q: must specify
  limits.cpu for: app`) or when the namespace's usage plus the object's would pass a hard value
  (`exceeded quota: q, requested: pods=1, used: pods=10, limited: pods=10`). Usage is computed
  from the objects stored at that moment, read with writes held inside the create's transaction
  (so it is exact on one hub: two creates never share the last slot); quotas are tried in name
  order and the first refusal wins. Updates are judged on what they add.
- an admitted write records the namespace's new usage of what it requested in each quota's
  `status.used` (and `status.hard`) in the same transaction (`QUOTA_POLICY.charge`); deletions are
  the resourcequota controller's to count down.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from control.errors import go_value
from control.kinds.base import AGE_COLUMN, NAME_COLUMN, Cause, Column, Kind, Obj, cause, reset_status
from control.kinds.meta import age
from control.kinds.quantity import parse_quantity
from control.kinds.quota_usage import COMPUTE, LEGACY_COUNTS, count_name, missing_compute, pretty, show, usage
from control.kinds.strategy import Lister, Policy, Write

QUOTAS = "/resourcequotas"
STANDARD = ("pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
            "persistentvolumeclaims", "services.nodeports", "services.loadbalancers", "cpu", "memory",
            "requests.cpu", "requests.memory", "requests.storage", "limits.cpu", "limits.memory",
            "ephemeral-storage", "requests.ephemeral-storage", "limits.ephemeral-storage")
INTEGER = ("pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
           "persistentvolumeclaims", "services.nodeports", "services.loadbalancers")
POD_COMPUTE = ("cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory")
SCOPES = ("Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass",
          "CrossNamespacePodAffinity")
_QUALIFIED = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                        r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


def _is_integer_name(name: str) -> bool:
    return name in INTEGER or name.startswith("count/")


def _is_standard(name: str) -> bool:
    return name in STANDARD or name.startswith("requests.hugepages-") or name.startswith("hugepages-")


def hard_causes(hard: Any, path: str) -> list[Cause]:
    if hard is None:
        return []
    if not isinstance(hard, dict):
        return [cause(path, "Invalid value: must be a map of quantities")]
    out: list[Cause] = []
    for name in sorted(hard):
        where, value = f"{path}[{name}]", hard[name]
        if not _QUALIFIED.match(name):
            out.append(cause(where, f"Invalid value: {go_value(name)}: name part must consist of alphanumeric "
                             "characters, '-', '_' or '.', and must start and end with an alphanumeric character"))
        elif "/" not in name and not _is_standard(name):
            out.append(cause(where, f"Invalid value: {go_value(name)}: must be a standard resource for quota"))
        try:
            number = parse_quantity(value)
        except ValueError:
            out.append(cause(where, f"Invalid value: {go_value(value)}: must be a valid quantity"))
            continue
        if number < 0:
            out.append(cause(where, f"Invalid value: {go_value(str(value))}: must be greater than or equal to 0"))
        elif _is_integer_name(name) and number != int(number):
            out.append(cause(where, f"Invalid value: {go_value(str(value))}: must be an integer"))
    return out


def validate_quota(quota: Obj) -> list[Cause]:
    spec = quota.get("spec") if isinstance(quota.get("spec"), dict) else {}
    out = hard_causes(spec.get("hard"), "spec.hard")
    scopes = [str(scope) for scope in spec.get("scopes") or []]
    # Go's %#v of the scopes, as upstream's field.Invalid(spec.scopes, spec.Scopes, ...) prints them
    shown = "[]core.ResourceQuotaScope{" + ", ".join(f'"{scope}"' for scope in scopes) + "}"
    hard = spec.get("hard") if isinstance(spec.get("hard"), dict) else {}
    for scope in scopes:
        if scope not in SCOPES:
            out.append(cause("spec.scopes", f"Invalid value: {shown}: unsupported scope"))
        # upstream IsResourceQuotaScopeValidForResource: scopes select pods, so they bound pod resources only
        allowed = ("pods",) if scope == "BestEffort" else ("pods", *POD_COMPUTE)
        out += [cause("spec.scopes", f"Invalid value: {shown}: unsupported scope applied to resource")
                for name in sorted(hard) if scope in SCOPES and _is_standard(name) and name not in allowed]
    for pair in (("BestEffort", "NotBestEffort"), ("Terminating", "NotTerminating")):
        if set(pair) <= set(scopes):
            out.append(cause("spec.scopes", f"Invalid value: {shown}: conflicting scopes"))
    status = quota.get("status") if isinstance(quota.get("status"), dict) else {}
    out += hard_causes(status.get("hard"), "status.hard") + hard_causes(status.get("used"), "status.used")
    return out


def validate_quota_update(new: Obj, old: Obj) -> list[Cause]:
    new_scopes = (new.get("spec") or {}).get("scopes") or []
    if sorted(new_scopes) != sorted((old.get("spec") or {}).get("scopes") or []):
        shown = "[]core.ResourceQuotaScope{" + ", ".join(f'"{scope}"' for scope in new_scopes) + "}"
        return [cause("spec.scopes", f"Invalid value: {shown}: field is immutable")]
    return []


def quota_cells(quota: Obj, now: float) -> list[Any]:
    """upstream printResourceQuota: `name: used/hard` for each spec.hard key, limits.* apart."""
    hard = (quota.get("spec") or {}).get("hard") or {}
    status = quota.get("status") or {}
    requests, limits = [], []
    for name in sorted(hard):
        used, limit = (status.get("used") or {}).get(name, "0"), (status.get("hard") or {}).get(name, "0")
        (limits if name.split(".")[0] == "limits" and "." in name else requests).append(f"{name}: {used}/{limit}")
    return [quota["metadata"]["name"], age(quota, now), ", ".join(requests), ", ".join(limits)]


# --- admission ------------------------------------------------------------------------------

def _best_effort(pod: Obj) -> bool:
    from control.kinds.pod_resources import pod_qos

    return pod_qos(pod) == "BestEffort"


def matches(quota: Obj, resource: str, obj: Obj) -> bool:
    """Whether a quota's scopes select the object (scopes select pods only)."""
    scopes = (quota.get("spec") or {}).get("scopes") or []
    if not scopes:
        return True
    if resource != "/pods":
        return False
    deadline = (obj.get("spec") or {}).get("activeDeadlineSeconds") is not None
    tests = {"Terminating": deadline, "NotTerminating": not deadline, "BestEffort": _best_effort(obj),
             "NotBestEffort": not _best_effort(obj)}
    return all(tests.get(scope, True) for scope in scopes)


def _hard(quota: Obj) -> dict[str, float]:
    out = {}
    for name, value in ((quota.get("spec") or {}).get("hard") or {}).items():
        try:
            out[name] = parse_quantity(value)
        except ValueError:
            continue
    return out


def namespace_usage(quota: Obj, resources: dict[str, list[Obj]]) -> dict[str, float]:
    """What the stored objects (by store key) use of each of the quota's hard resources."""
    hard = _hard(quota)
    used = {name: 0.0 for name in hard}
    for resource, objs in resources.items():
        for obj in objs:
            if not matches(quota, resource, obj):
                continue
            for name, amount in usage(resource, obj).items():
                if name in used:
                    used[name] += amount
    return used


def usage_names(resource: str) -> set[str]:
    """Every quota name an object stored under `resource` may count against."""
    names = {count_name(resource)} | ({LEGACY_COUNTS[resource]} if resource in LEGACY_COUNTS else set())
    if resource == "/pods":
        names |= set(COMPUTE) | {"ephemeral-storage", "requests.ephemeral-storage", "limits.ephemeral-storage"}
    if resource == "/services":
        names |= {"services.loadbalancers", "services.nodeports"}
    if resource == "/persistentvolumeclaims":
        names.add("requests.storage")
    return names


def _assess(resource: str, obj: Obj, old: Obj | None, listed: Lister) -> tuple[str, list[tuple[Obj, dict[str, float]]]]:
    """upstream checkRequest: (why the write is refused or "", for each quota it counts against,
    the quota and the namespace's usage of its requested names once the write is in)."""
    namespace = obj["metadata"].get("namespace") or ""
    if not namespace:
        return "", []
    delta = usage(resource, obj)
    if old is not None:
        # An update that asks for nothing more is admitted before the quotas are read (upstream's
        # object-count evaluators handle only creates): a Lease renewal costs no quota lookup.
        before = usage(resource, old)
        delta = {name: amount - before.get(name, 0.0) for name, amount in delta.items()}
        if not any(amount > 0 for amount in delta.values()):
            return "", []
    quotas = sorted(listed(QUOTAS, namespace), key=lambda q: q["metadata"]["name"])
    if not quotas:
        return "", []
    stored: list[Obj] | None = None
    charged: list[tuple[Obj, dict[str, float]]] = []
    for quota in quotas:
        if not matches(quota, resource, obj):
            continue
        hard = _hard(quota)
        if resource == "/pods" and old is None:
            missing = missing_compute(obj, list(hard))
            if missing:
                return f"failed quota: {quota['metadata']['name']}: {missing}", []
        requested = {name: amount for name, amount in delta.items() if name in hard}
        if not requested:
            continue
        if stored is None:
            stored = listed(resource, namespace)
        meta = obj["metadata"]
        others = [o for o in stored if o["metadata"]["name"] != meta.get("name")]
        used = namespace_usage(quota, {resource: others})
        exceeded = [name for name, amount in requested.items() if used[name] + amount > hard[name]]
        if exceeded:
            return (f"exceeded quota: {quota['metadata']['name']}, "
                    f"requested: {pretty({n: requested[n] for n in exceeded})}, "
                    f"used: {pretty({n: used[n] for n in exceeded})}, "
                    f"limited: {pretty({n: hard[n] for n in exceeded})}"), []
        charged.append((quota, {name: used[name] + requested[name] for name in requested}))
    return "", charged


def admit(resource: str, obj: Obj, old: Obj | None, listed: Lister) -> str:
    return _assess(resource, obj, old, listed)[0]


def _recorded(hard: Obj, used: dict[str, float]) -> Callable[[Obj], Obj]:
    def mutate(quota: Obj) -> Obj:
        status = quota.setdefault("status", {})
        status["hard"] = dict(hard)
        status["used"] = {**(status.get("used") or {}), **{name: show(name, value) for name, value in used.items()}}
        return quota
    return mutate


def charge(resource: str, obj: Obj, old: Obj | None, listed: Lister) -> list[Write]:
    """The admitted write's usage recorded in each quota's status.used at once (as upstream's
    admission updates the quota status), so `kubectl get quota` needs no controller pass."""
    _, charged = _assess(resource, obj, old, listed)
    return [Write(QUOTAS, quota["metadata"]["namespace"], quota["metadata"]["name"],
                  _recorded((quota.get("spec") or {}).get("hard") or {}, used)) for quota, used in charged]


QUOTA_POLICY = Policy(name="ResourceQuota", validate=admit, charge=charge)

RESOURCEQUOTA = Kind(
    group="", version="v1", kind="ResourceQuota", plural="resourcequotas", namespaced=True,
    definition="io.k8s.api.core.v1.ResourceQuota", short_names=("quota",), subresources=("status",),
    prepare_for_create=reset_status, validate=validate_quota, validate_update=validate_quota_update,
    columns=(NAME_COLUMN, AGE_COLUMN,
             Column("Request", description="Request represents a minimum amount of cpu/memory that a container "
                    "may consume."),
             Column("Limit", description="Limits control the maximum amount of cpu/memory that a container may "
                    "use independent of contention on the node.")),
    cells=quota_cells, has_spec=True, policy=QUOTA_POLICY,
)

__all__ = ["RESOURCEQUOTA", "QUOTA_POLICY", "namespace_usage", "show", "usage_names"]
