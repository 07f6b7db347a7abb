"""policy/v1 PodDisruptionBudget and the Eviction a pod's `eviction` subresource takes, as
kube-apiserver's `pkg/registry/policy/poddisruptionbudget`, `pkg/apis/policy/validation` and
`pkg/registry/core/pod/storage/eviction.go` do them.

Guarantees:
- a budget's status is the disruption controller's (reset on create, kept on spec writes); a
  spec change bumps metadata.generation; minAvailable and maxUnavailable are not both set, each a
  non-negative integer or a percentage of at most 100%, with Kubernetes' messages; the selector is
  valid; unhealthyPodEvictionPolicy is IfHealthyBudget or AlwaysAllow;
- the table is kubectl's `NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE`;
- `evict` decides an eviction as upstream: a pod that is finished, pending or already being
  deleted is deleted without asking any budget; more than one budget is a 500 Failure; no budget
  deletes it; otherwise the budget's disruptionsAllowed is checked and decremented (and the pod
  recorded in disruptedPods) in the same transaction as the pod's graceful deletion, or the answer
  is 429 TooManyRequests with the DisruptionBudget cause; a pod that is not Ready is deleted
  without spending the budget when the budget is met (or says AlwaysAllow), guarded by its
  resourceVersion; an evicted pod gets the DisruptionTarget condition (EvictionByEvictionAPI) in the
  write that deletes it. The kind only decides: the hub does the writes (`control.kinds.strategy.Outcome`).
"""

from __future__ import annotations

import copy
import re
from typing import Any, Callable

from control import errors
from control.errors import go_value
from control.kinds.base import AGE_COLUMN, NAME_COLUMN, Cause, Column, Kind, Obj, cause, label_causes, reset_status_to_zero
from control.kinds.meta import age, format_time, is_condition_true, labels_of
from control.kinds.selectors import SelectorError, label_selector_from_object
from control.kinds.strategy import Action, Lent, Outcome, Write

RESOURCE = "policy/poddisruptionbudgets"  # the store key budgets live under
POLICIES = ("AlwaysAllow", "IfHealthyBudget")
MAX_DISRUPTED_PODS = 2000  # upstream's MaxDisruptedPodSize
DISRUPTION_ALLOWED = "DisruptionAllowed"
VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."
MORE_THAN_ONE = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
_JSON_TYPES = {str: "string", int: "number", float: "number", bool: "bool", list: "array"}
_PERCENT = re.compile(r"^[0-9]+%$")
_PERCENT_MESSAGE = ("a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or "
                    "'93%', regex used for validation is '[0-9]+%')")


# --- validation ------------------------------------------------------------------------------------

def go_int_or_string(value: Any) -> str:
    """An IntOrString as Go's %#v prints it in a field error (its String method has a pointer
    receiver, so the struct is printed): intstr.IntOrString{Type:1, IntVal:0, StrVal:"50"}."""
    if isinstance(value, str):
        return f'intstr.IntOrString{{Type:1, IntVal:0, StrVal:{go_value(value)}}}'
    return f'intstr.IntOrString{{Type:0, IntVal:{go_value(value)}, StrVal:""}}'


def _int_or_percent_causes(value: Any, path: str) -> list[Cause]:
    """apps validation's ValidatePositiveIntOrPercent and IsNotMoreThan100Percent."""
    if value is None:
        return []
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return [cause(path, f"Invalid value: {go_value(value)}: must be an integer or percentage (e.g '5%')")]
    if isinstance(value, int):
        return [] if value >= 0 else [cause(path, f"Invalid value: {value}: must be greater than or equal to 0")]
    if not _PERCENT.match(value):
        return [cause(path, f"Invalid value: {go_int_or_string(value)}: {_PERCENT_MESSAGE}")]
    if int(value[:-1]) > 100:
        return [cause(path, f"Invalid value: {go_int_or_string(value)}: must not be greater than 100%")]
    return []


def _go_spec(spec: dict[str, Any]) -> str:
    """The spec as Go's %#v prints the struct: its pointer fields show as addresses or nil. The
    addresses are the server's memory and mean nothing to a reader; these stand in their place."""
    def pointer(go_type: str, key: str, at: int) -> str:
        return f"({go_type})(nil)" if spec.get(key) is None else f"({go_type})(0xc000{at:06x})"

    return ("policy.PodDisruptionBudgetSpec{"
            f"MinAvailable:{pointer('*intstr.IntOrString', 'minAvailable', 0x1a000)}, "
            f"Selector:{pointer('*v1.LabelSelector', 'selector', 0x1a020)}, "
            f"MaxUnavailable:{pointer('*intstr.IntOrString', 'maxUnavailable', 0x1a010)}, "
            f"UnhealthyPodEvictionPolicy:{pointer('*policy.UnhealthyPodEvictionPolicyType', 'unhealthyPodEvictionPolicy', 0x1a030)}}}")


def _selector_causes(selector: Any, path: str) -> list[Cause]:
    """metav1 validation's ValidateLabelSelector, for the shapes decoding lets through."""
    if selector is None:
        return []
    if not isinstance(selector, dict):
        return [cause(path, f"Invalid value: {go_value(selector)}: must be a label selector")]
    out = label_causes(selector.get("matchLabels"), f"{path}.matchLabels")
    for i, expr in enumerate(selector.get("matchExpressions") or []):
        where = f"{path}.matchExpressions[{i}]"
        op = expr.get("operator") if isinstance(expr, dict) else None
        values = (expr.get("values") if isinstance(expr, dict) else None) or []
        if op in ("In", "NotIn") and not values:
            out.append(cause(f"{where}.values", "Required value: must be specified when `operator` is 'In' or "
                             "'NotIn'", "FieldValueRequired"))
        elif op in ("Exists", "DoesNotExist") and values:
            out.append(cause(f"{where}.values", "Forbidden: may not be specified when `operator` is 'Exists' or "
                             "'DoesNotExist'", "FieldValueForbidden"))
        elif op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            out.append(cause(f"{where}.operator", f"Invalid value: {go_value(op)}: not a valid selector operator"))
    if not out:
        try:
            label_selector_from_object(selector)
        except SelectorError as exc:
            out.append(cause(path, f"Invalid value: {exc}"))
    return out


def validate_pdb(pdb: Obj) -> list[Cause]:
    spec = pdb.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    out: list[Cause] = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        out.append(cause("spec", f"Invalid value: {_go_spec(spec)}: minAvailable and maxUnavailable cannot be both set"))
    out += _int_or_percent_causes(spec.get("minAvailable"), "spec.minAvailable")
    out += _int_or_percent_causes(spec.get("maxUnavailable"), "spec.maxUnavailable")
    out += _selector_causes(spec.get("selector"), "spec.selector")
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in POLICIES:
        out.append(cause("spec.unhealthyPodEvictionPolicy", f'Unsupported value: {go_value(policy)}: supported '
                         'values: "AlwaysAllow", "IfHealthyBudget"', "FieldValueNotSupported"))
    status = pdb.get("status") if isinstance(pdb.get("status"), dict) else {}
    for key in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"):
        value = status.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            out.append(cause(f"status.{key}", f"Invalid value: {value}: must be greater than or equal to 0"))
    return out


# --- printing --------------------------------------------------------------------------------------

def _shown(value: Any) -> str:
    return "N/A" if value is None else str(value)


def pdb_cells(pdb: Obj, now: float) -> list[Any]:
    spec, status = pdb.get("spec") or {}, pdb.get("status") or {}
    return [pdb["metadata"]["name"], _shown(spec.get("minAvailable")), _shown(spec.get("maxUnavailable")),
            int(status.get("disruptionsAllowed") or 0), age(pdb, now)]


# --- the DisruptionAllowed condition (component-helpers' pdb helpers) --------------------------------

def allowed_condition(conditions: Any, *, status: str, reason: str, message: str, generation: int,
                      now: float) -> list[Obj]:
    """`conditions` with DisruptionAllowed set as apimachinery's SetStatusCondition sets it: the
    transition time moves only when the status changes."""
    out = [dict(c) for c in conditions or [] if isinstance(c, dict)]
    previous = next((c for c in out if c.get("type") == DISRUPTION_ALLOWED), None)
    since = previous.get("lastTransitionTime") if previous and previous.get("status") == status else None
    condition = {"type": DISRUPTION_ALLOWED, "status": status, "observedGeneration": generation,
                 "lastTransitionTime": since or format_time(now), "reason": reason, "message": message}
    if previous is None:
        return out + [condition]
    return [condition if c is previous else c for c in out]


def condition_for(status: Obj, now: float) -> list[Obj]:
    """UpdateDisruptionAllowedCondition: True/SufficientPods while disruptions are allowed, else
    False/InsufficientPods."""
    allowed = int(status.get("disruptionsAllowed") or 0) > 0
    return allowed_condition(status.get("conditions"), status="True" if allowed else "False",
                             reason="SufficientPods" if allowed else "InsufficientPods", message="",
                             generation=int(status.get("observedGeneration") or 0), now=now)


# --- eviction --------------------------------------------------------------------------------------

def pod_is_ready(pod: Obj) -> bool:
    return is_condition_true(pod, "Ready")


def _success() -> Obj:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def too_many_requests(message: str, retry_after: int = 0) -> errors.TooManyRequests:
    details: dict[str, Any] = {"causes": [{"reason": "DisruptionBudget", "message": message}]}
    headers = {}
    if retry_after:
        details["retryAfterSeconds"] = retry_after
        headers["Retry-After"] = str(retry_after)
    return errors.TooManyRequests(VIOLATION, details=details, headers=headers)


def still_processing(name: str) -> errors.TooManyRequests:
    return too_many_requests(f"The disruption budget {name} is still being processed by the server.", 10)


class _Failure(errors.ApiError):
    """A Status of Failure a REST storage returns (no reason): the apiserver answers its code."""

    code, reason = 500, ""


def _forbidden(name: str, why: str) -> errors.Forbidden:
    return errors.Forbidden(f'poddisruptionbudget.policy "{name}" is forbidden: {why}',
                            details={"name": name, "group": "policy", "kind": "poddisruptionbudget"})


def budgets_of(pod: Obj, budgets: list[Obj]) -> list[Obj]:
    """The budgets whose selector selects the pod; a null or empty selector selects nothing here."""
    out = []
    for pdb in budgets:
        selector = (pdb.get("spec") or {}).get("selector")
        try:
            parsed = label_selector_from_object(selector)
        except SelectorError:
            continue
        if not parsed.is_everything and selector and parsed.matches(labels_of(pod)):
            out.append(pdb)
    return out


def check_and_decrement(pod_name: str, now: float) -> Callable[[Obj], Obj]:
    """The budget's read-modify-write of an allowed eviction (upstream's checkAndDecrement), run on
    the budget as stored when the write happens, so two evictions never spend one disruption."""
    def mutate(pdb: Obj) -> Obj:
        name, status = pdb["metadata"]["name"], pdb.setdefault("status", {})
        if int(status.get("observedGeneration") or 0) < int(pdb["metadata"].get("generation") or 0):
            raise still_processing(name)
        allowed = int(status.get("disruptionsAllowed") or 0)
        if allowed < 0:
            raise _forbidden(name, "pdb disruptions allowed is negative")
        if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_PODS:
            raise _forbidden(name, "DisruptedPods map too big - too many evictions not confirmed by PDB controller")
        if allowed == 0:
            raise too_many_requests(f"The disruption budget {name} needs {int(status.get('desiredHealthy') or 0)} "
                                    f"healthy pods and has {int(status.get('currentHealthy') or 0)} currently")
        status["disruptionsAllowed"] = allowed - 1
        if allowed - 1 == 0:
            status["conditions"] = condition_for(status, now)
        status["disruptedPods"] = {**(status.get("disruptedPods") or {}), pod_name: format_time(now)}
        return pdb
    return mutate


def mark_disruption_target(now: float) -> Callable[[Obj], None]:
    """The DisruptionTarget condition an evicted pod gets with its deletion (upstream's
    addConditionAndDeletePod), its transition time kept if it was already True."""
    def mark(pod: Obj) -> None:
        status = pod.setdefault("status", {})
        conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
        previous = next((c for c in conditions if c.get("type") == "DisruptionTarget"), None)
        since = previous.get("lastTransitionTime") if previous and previous.get("status") == "True" else None
        condition = {"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
                     "lastTransitionTime": since or format_time(now), "reason": "EvictionByEvictionAPI",
                     "message": "Eviction API: evicting"}
        status["conditions"] = [condition if c is previous else c for c in conditions] if previous else \
            conditions + [condition]
    return mark


def _with_resource_version(options: Obj, pod: Obj) -> Obj:
    preconditions = dict(options.get("preconditions") or {})
    preconditions["resourceVersion"] = pod["metadata"]["resourceVersion"]
    return {**options, "preconditions": preconditions}


def evict(pod: Obj, eviction: Obj, lent: Lent) -> Outcome:
    """What a POST of `eviction` to the pod's eviction subresource does (see the module's guarantees)."""
    name = pod["metadata"]["name"]
    if (eviction.get("metadata") or {}).get("name") != name:
        raise errors.BadRequest("name in URL does not match name in Eviction object")
    options = eviction.get("deleteOptions")
    if options is not None and not isinstance(options, dict):  # what Go's decoder says of it
        raise errors.BadRequest("the object provided is unrecognized (must be of type Eviction): json: cannot "
                                f"unmarshal {_JSON_TYPES.get(type(options), 'object')} into Go struct field Eviction.deleteOptions "
                                "of type v1.DeleteOptions")
    options = copy.deepcopy(options) if isinstance(options, dict) else {}
    rv_set = bool((options.get("preconditions") or {}).get("resourceVersion")) \
        if isinstance(options.get("preconditions"), dict) else False
    phase = (pod.get("status") or {}).get("phase")
    deleting = bool(pod["metadata"].get("deletionTimestamp"))
    if phase in ("Succeeded", "Failed", "Pending") or deleting:  # canIgnorePDB: no budget to ask
        if phase not in ("Succeeded", "Failed") and not deleting and not rv_set:
            options = _with_resource_version(options, pod)  # a pending pod must not turn ready meanwhile
        return Outcome(answer=_success(), delete_parent=options, retry_on_conflict=not rv_set,
                       before_delete=mark_disruption_target(lent.now))
    budgets = budgets_of(pod, lent.list(RESOURCE, pod["metadata"].get("namespace", "")))
    if len(budgets) > 1:
        raise _Failure(MORE_THAN_ONE)
    if not budgets:
        return Outcome(answer=_success(), delete_parent=options, before_delete=mark_disruption_target(lent.now))
    pdb = budgets[0]
    spec, status = pdb.get("spec") or {}, pdb.get("status") or {}
    if not pod_is_ready(pod):
        current, desired = int(status.get("currentHealthy") or 0), int(status.get("desiredHealthy") or 0)
        if spec.get("unhealthyPodEvictionPolicy") == "AlwaysAllow" or (current >= desired and desired > 0):
            # an unready pod counts for nothing: delete it unless it became ready meanwhile
            guarded = options if rv_set else _with_resource_version(options, pod)
            return Outcome(answer=_success(), delete_parent=guarded,
                           on_conflict=None if rv_set else still_processing(pdb["metadata"]["name"]),
                           before_delete=mark_disruption_target(lent.now))
    write = Write(RESOURCE, pdb["metadata"].get("namespace", ""), pdb["metadata"]["name"],
                  check_and_decrement(name, lent.now))
    return Outcome(answer=_success(), writes=(write,), delete_parent=options,
                   before_delete=mark_disruption_target(lent.now))


EVICTION = Action(group="policy", version="v1", kind="Eviction", create=evict)

PODDISRUPTIONBUDGET = Kind(
    group="policy", version="v1", kind="PodDisruptionBudget", plural="poddisruptionbudgets", namespaced=True,
    definition="io.k8s.api.policy.v1.PodDisruptionBudget", short_names=("pdb",), subresources=("status",),
    prepare_for_create=reset_status_to_zero(
        "disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"),
    validate=validate_pdb, has_spec=True,
    columns=(NAME_COLUMN, Column("Min Available", description="The minimum number of pods that must be available."),
             Column("Max Unavailable", description="The maximum number of pods that may be unavailable."),
             Column("Allowed Disruptions", type="integer",
                    description="Calculated number of pods that may be disrupted at this time."),
             AGE_COLUMN),
    cells=pdb_cells,
)
