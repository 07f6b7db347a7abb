"""scheduling.k8s.io/v1 PriorityClass and the Priority admission plugin, as kube-apiserver has them
(pkg/apis/scheduling, pkg/registry/scheduling/priorityclass, plugin/pkg/admission/priority).

Guarantees:
- Validation is upstream's ValidatePriorityClass, with its messages: a name starting `system-`
  must be one of the two built-in classes with their value and globalDefault ("priority class
  names with 'system-' prefix are reserved for system use only. error: ..."); any other class's
  value is at most 1,000,000,000 ("maximum allowed value of a user defined priority is
  1000000000"); preemptionPolicy is PreemptLowerPriority (the default) or Never. On update the
  value ("may not be changed in an update.") and the preemptionPolicy ("field is immutable") stay.
- The two system classes (`SYSTEM_CLASSES`) are what bootstrap creates, as upstream's scheduling
  post-start hook; deleting one is 403 ("this is a system priority class and cannot be deleted").
- `kubectl get priorityclasses` (`pc`) shows NAME, VALUE, GLOBAL-DEFAULT, AGE, PREEMPTIONPOLICY.
- The Priority admission (`PRIORITY_POLICY`): a pod created without `priorityClassName` gets the
  global default class's name, value and preemption policy (the lowest-valued default if a race
  left several), or priority 0 when there is none; a named class that does not exist is 403 "no
  PriorityClass with name X was found"; a pod giving a `priority` or `preemptionPolicy` that
  differs from what its class computes is 403 with upstream's words. A second globalDefault class
  is 403 "PriorityClass X is already marked as default. Only one default can exist".
"""

from __future__ import annotations

from typing import Any

from control.errors import go_value
from control.kinds.base import AGE_COLUMN, NAME_COLUMN, Cause, Column, Kind, Obj, cause, required
from control.kinds.meta import age
from control.kinds.strategy import Deletion, Lister, Policy

GROUP, VERSION = "scheduling.k8s.io", "v1"
RESOURCE = f"{GROUP}/priorityclasses"
PODS = "/pods"
SYSTEM_PREFIX = "system-"
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS = 0
PREEMPT_LOWER_PRIORITY, NEVER = "PreemptLowerPriority", "Never"
PREEMPTION_POLICIES = (PREEMPT_LOWER_PRIORITY, NEVER)  # the order upstream's message lists them
SYSTEM_CLUSTER_CRITICAL, SYSTEM_NODE_CRITICAL = "system-cluster-critical", "system-node-critical"
# name -> (value, description), as pkg/apis/scheduling/v1's systemPriorityClasses
SYSTEM_CLASSES: dict[str, tuple[int, str]] = {
    SYSTEM_NODE_CRITICAL: (SYSTEM_CRITICAL_PRIORITY + 1000,
                           "Used for system critical pods that must not be moved from their current node."),
    SYSTEM_CLUSTER_CRITICAL: (SYSTEM_CRITICAL_PRIORITY, "Used for system critical pods that must run in the "
                              "cluster, but can be moved to another node if necessary."),
}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def priorityclass_defaults(pc: Obj) -> None:
    """SetDefaults_PriorityClass; value and globalDefault are Go non-pointer fields, always shown."""
    if pc.get("preemptionPolicy") is None:
        pc["preemptionPolicy"] = PREEMPT_LOWER_PRIORITY
    pc.setdefault("value", 0)


def _known_system_class(name: str, value: int, global_default: bool) -> str:
    """IsKnownSystemPriorityClass: "" when it is one, else why not."""
    known = SYSTEM_CLASSES.get(name)
    if known is None:
        return f"{name} is not a known system priority class"
    if known[0] != value:
        return f"value of {name} PriorityClass must be {known[0]}"
    if global_default:
        return f"globalDefault of {name} PriorityClass must be false"
    return ""


def preemption_policy_causes(policy: Any, path: str) -> list[Cause]:
    """ValidatePreemptionPolicy (shared by pods and classes)."""
    if policy in PREEMPTION_POLICIES:
        return []
    if policy == "":
        return [required(path)]
    supported = ", ".join(f'"{p}"' for p in PREEMPTION_POLICIES)
    return [cause(path, f"Unsupported value: {go_value(policy)}: supported values: {supported}",
                  "FieldValueNotSupported")]


def validate_priorityclass(pc: Obj) -> list[Cause]:
    name = str(pc["metadata"].get("name") or "")
    value = _int(pc.get("value"))
    out: list[Cause] = []
    if name.startswith(SYSTEM_PREFIX):
        why = _known_system_class(name, value, bool(pc.get("globalDefault")))
        if why:
            out.append(cause("metadata.name", f"Forbidden: priority class names with '{SYSTEM_PREFIX}' prefix are "
                             f"reserved for system use only. error: {why}", "FieldValueForbidden"))
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        out.append(cause("value", "Forbidden: maximum allowed value of a user defined priority is "
                         f"{HIGHEST_USER_DEFINABLE_PRIORITY}", "FieldValueForbidden"))
    if pc.get("preemptionPolicy") is not None:
        out += preemption_policy_causes(pc.get("preemptionPolicy"), "preemptionPolicy")
    return out


def validate_priorityclass_update(new: Obj, old: Obj) -> list[Cause]:
    out: list[Cause] = []
    if _int(new.get("value")) != _int(old.get("value")):
        out.append(cause("value", "Forbidden: may not be changed in an update.", "FieldValueForbidden"))
    if new.get("preemptionPolicy") != old.get("preemptionPolicy"):
        out.append(cause("preemptionPolicy", f"Invalid value: {go_value(new.get('preemptionPolicy'))}: "
                         "field is immutable"))
    return out


def system_class_refusal(pc: Obj) -> str:
    """The priorityclass REST storage's Delete: the built-in classes stay."""
    return "this is a system priority class and cannot be deleted" if pc["metadata"]["name"] in SYSTEM_CLASSES else ""


def priorityclass_cells(pc: Obj, now: float) -> list[Any]:
    return [pc["metadata"]["name"], _int(pc.get("value")), bool(pc.get("globalDefault")), age(pc, now),
            pc.get("preemptionPolicy") or ""]


def system_priority_class(name: str, uid: str, created: str) -> Obj:
    """One of the classes every cluster has, as upstream's post-start hook creates it."""
    value, description = SYSTEM_CLASSES[name]
    pc = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "PriorityClass",
          "metadata": {"name": name, "uid": uid, "creationTimestamp": created},
          "value": value, "description": description}
    priorityclass_defaults(pc)
    return pc


# --- the Priority admission plugin ----------------------------------------------------------------

def default_class(listed: Lister) -> Obj | None:
    """getDefaultPriorityClass: the globalDefault class with the lowest value (a race may leave two)."""
    defaults = [pc for pc in listed(RESOURCE, "") if pc.get("globalDefault")]
    return min(defaults, key=lambda pc: _int(pc.get("value")), default=None)


def admit_pod_priority(resource: str, pod: Obj, old: Obj | None, listed: Lister) -> str:
    """admitPod on create: resolve priorityClassName to spec.priority and spec.preemptionPolicy."""
    spec = pod.get("spec")
    if resource != PODS or old is not None or not isinstance(spec, dict):
        return ""
    name = spec.get("priorityClassName")
    if not name:
        found = default_class(listed)
        priority, policy = DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS, None
        if found is not None:
            spec["priorityClassName"] = found["metadata"]["name"]
            priority, policy = _int(found.get("value")), found.get("preemptionPolicy")
    else:
        found = next((pc for pc in listed(RESOURCE, "") if pc["metadata"]["name"] == name), None)
        if found is None:
            return f"no PriorityClass with name {name} was found"
        priority, policy = _int(found.get("value")), found.get("preemptionPolicy")
    given = spec.get("priority")
    if given is not None and given != priority:
        return (f"the integer value of priority ({go_value(given)}) must not be provided in pod spec; priority "
                f"admission controller computed {priority} from the given PriorityClass name")
    spec["priority"] = priority
    if policy is not None:
        given_policy = spec.get("preemptionPolicy")
        if given_policy is not None and given_policy != policy:
            return (f"the string value of PreemptionPolicy ({given_policy}) must not be provided in pod spec; "
                    f"priority admission controller computed {policy} from the given PriorityClass name")
        spec["preemptionPolicy"] = policy
    return ""


def validate_priorityclass_default(resource: str, pc: Obj, old: Obj | None, listed: Lister) -> str:
    """validatePriorityClass: at most one class is the global default."""
    if resource != RESOURCE or not pc.get("globalDefault"):
        return ""
    current = default_class(listed)
    if current is None or (old is not None and current["metadata"]["name"] == pc["metadata"].get("name")):
        return ""
    return f"PriorityClass {current['metadata']['name']} is already marked as default. Only one default can exist"


PRIORITY_POLICY = Policy(name="Priority", mutate=admit_pod_priority, validate=validate_priorityclass_default)

PRIORITYCLASS = Kind(
    group=GROUP, version=VERSION, kind="PriorityClass", plural="priorityclasses", namespaced=False,
    definition="io.k8s.api.scheduling.v1.PriorityClass", short_names=("pc",),
    defaults=priorityclass_defaults, validate=validate_priorityclass,
    validate_update=validate_priorityclass_update, deletion=Deletion(refusal=system_class_refusal),
    policy=PRIORITY_POLICY,
    columns=(NAME_COLUMN,
             Column("Value", type="integer", description="value represents the integer value of this priority "
                    "class. This is the actual priority that pods receive when they have the name of this class "
                    "in their pod spec."),
             Column("Global-Default", type="boolean", description="globalDefault specifies whether this "
                    "PriorityClass should be considered as the default priority for pods that do not have any "
                    "priority class. Only one PriorityClass can be marked as `globalDefault`. However, if more "
                    "than one PriorityClasses exists with their `globalDefault` field set to true, the smallest "
                    "value of such global default PriorityClasses will be used as the default priority."),
             AGE_COLUMN,
             Column("PreemptionPolicy", description="preemptionPolicy is the Policy for preempting pods with "
                    "lower priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if "
                    "unset.")),
    cells=priorityclass_cells,
)
