"""The object layer: what every kind's metadata and status mean, read and written in one place.

Timestamps, conditions, owner references, node readiness and labels, as apimachinery's `meta/v1`
helpers and client-go's utilities define them, for the hub, the controllers, the scheduler, the
kubelet, kube-proxy, the cooks and the dashboard alike.

Guarantees:
- Pure: no store, no HTTP, no clock. Time comes in as epoch seconds from the caller's injected
  clock (`control.clock`); nothing here reads the real time.
- Nothing here changes its arguments (cached objects are read-only): setters return new values.
- Timestamps are written exactly as Kubernetes writes them: `Time` is RFC 3339 in whole seconds
  (`2006-01-02T15:04:05Z`), `MicroTime` has six fractional digits, log lines nine. Reading accepts
  any of them (and offsets), and answers None for anything unreadable instead of raising.
- A condition's `lastTransitionTime` changes only when its `status` changes
  (apimachinery `meta.SetStatusCondition`).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from control.kinds.selectors import LabelSelector, SelectorError, label_selector_from_object

Obj = dict[str, Any]

# --- timestamps ----------------------------------------------------------------------------------

TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
LATEST_TIME = 253402300799  # 9999-12-31T23:59:59Z: Go's RFC 3339 cannot write a later year


def _moment(seconds: float) -> datetime:
    return datetime.fromtimestamp(min(max(seconds, 0.0), LATEST_TIME), tz=timezone.utc)


def format_time(seconds: float) -> str:
    """A `Time`: RFC 3339 in whole seconds, UTC; times past year 9999 (absurd grace periods) are clamped."""
    global _last_time
    whole = int(seconds)
    last = _last_time  # one tuple, read and replaced whole: safe across threads
    if last[0] == whole:
        return last[1]
    text = _moment(whole).strftime(TIME_FORMAT)
    _last_time = (whole, text)
    return text


# The last second formatted and its text: a write stamps the same second several times (created,
# managed fields, token expiry), and strftime is the cost of it. A function of the second alone.
_last_time: tuple[int, str] = (-1, "")


def format_micro_time(seconds: float) -> str:
    """A `MicroTime` (Lease.spec.renewTime, Event.eventTime): RFC 3339 with microseconds."""
    return _moment(seconds).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def format_nano_time(seconds: float) -> str:
    """RFC 3339 with nine fractional digits, as the kubelet stamps log lines (`--timestamps`)."""
    moment = _moment(seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond:06d}000Z"


def parse_time(stamp: Any) -> float | None:
    """Epoch seconds of a `Time`, `MicroTime` or any RFC 3339 stamp; None when absent or unreadable."""
    if not isinstance(stamp, str) or "T" not in stamp:
        return None
    try:
        parsed = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    if parsed.tzinfo is None:  # Kubernetes writes UTC; a stamp without an offset is read as UTC too
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.timestamp()


def created_at(obj: Obj) -> float | None:
    return parse_time(metadata(obj).get("creationTimestamp"))


def _units(whole: int, unit: str, rest: int, rest_unit: str) -> str:
    return f"{whole}{unit}{rest}{rest_unit}" if rest else f"{whole}{unit}"


def human_duration(seconds: float) -> str:
    """kubectl's short age (apimachinery `duration.HumanDuration`): 45s, 5m, 3h, 2d, with one more
    unit while it is small; up to a second in the future is "now" (clock skew), later is `<invalid>`."""
    s = int(seconds)  # truncated toward zero, as Go's int(d.Seconds())
    if s < -1:
        return "<invalid>"
    if s < 120:
        return f"{max(s, 0)}s"
    minutes, hours, days = s // 60, s // 3600, s // 86400
    if minutes < 10:
        return _units(minutes, "m", s % 60, "s")
    if minutes < 180:
        return f"{minutes}m"
    if hours < 8:
        return _units(hours, "h", minutes % 60, "m")
    if hours < 48:
        return f"{hours}h"
    if days < 8:
        return _units(days, "d", hours % 24, "h")
    if days < 365 * 2:
        return f"{days}d"
    if days < 365 * 8:
        return _units(days // 365, "y", days % 365, "d")
    return f"{days // 365}y"


def age(obj: Obj, now: float) -> str:
    """The AGE column: time since creationTimestamp, or `<unknown>` as kubectl prints it."""
    created = created_at(obj)
    return "<unknown>" if created is None else human_duration(now - created)


# --- metadata, owners, labels --------------------------------------------------------------------

def metadata(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def owner_references(obj: Obj) -> list[Obj]:
    """The object's owner references that name an owner (a reference without uid points nowhere)."""
    return [ref for ref in metadata(obj).get("ownerReferences") or [] if isinstance(ref, dict) and ref.get("uid")]


def controller_ref(obj: Obj) -> Obj | None:
    """The one owner reference with `controller: true` (apimachinery `metav1.GetControllerOf`)."""
    return next((ref for ref in metadata(obj).get("ownerReferences") or []
                 if isinstance(ref, dict) and ref.get("controller")), None)


def controller_uid(obj: Obj) -> str:
    """The uid of the object's controlling owner ("" when it has none)."""
    ref = controller_ref(obj)
    return str(ref.get("uid") or "") if ref else ""


def is_owned_by(obj: Obj, owner_uid: str) -> bool:
    return any(ref["uid"] == owner_uid for ref in owner_references(obj))


def is_controlled_by(obj: Obj, owner_uid: str) -> bool:
    return bool(owner_uid) and controller_uid(obj) == owner_uid


def owner_name(obj: Obj, kind: str) -> str:
    """The name of the object's first owner of `kind` ("" when none)."""
    return next((ref.get("name", "") for ref in metadata(obj).get("ownerReferences") or []
                 if isinstance(ref, dict) and ref.get("kind") == kind), "")


def owner_reference(api_version: str, kind: str, name: str, uid: str) -> Obj:
    """A plain OwnerReference (no controller): a claim kept for its set or pod, a node's Lease."""
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid}


def new_controller_ref(owner: Obj, *, api_version: str | None = None, kind: str | None = None,
                       block: bool | None = True) -> Obj:
    """The controller reference a controller puts on what it creates or adopts
    (apimachinery `metav1.NewControllerRef(owner, gvk)`): `api_version` and `kind` are the gvk, read
    from the owner when not given (a list's items may carry no kind); `block=None` leaves
    `blockOwnerDeletion` out (kubectl's `create job --from=cronjob/...` sets only `controller`).
    With `owner_reference`, the only place an owner reference is built (tests/kinds/test_meta.py
    guards it)."""
    ref = owner_reference(api_version or owner.get("apiVersion", ""), kind or owner.get("kind", ""),
                          metadata(owner)["name"], metadata(owner).get("uid", ""))
    ref["controller"] = True
    if block is not None:
        ref["blockOwnerDeletion"] = block
    return ref


def labels_of(obj: Obj) -> dict[str, str]:
    return metadata(obj).get("labels") or {}


def spec_selector(obj: Obj) -> LabelSelector:
    """The object's `spec.selector` (a LabelSelector object); a broken one matches nothing, as the
    workload controllers treat it."""
    try:
        return label_selector_from_object((obj.get("spec") or {}).get("selector"))
    except SelectorError:
        return LabelSelector.nothing()


# --- conditions ----------------------------------------------------------------------------------

def get_condition(obj: Obj, type_: str) -> Obj | None:
    """The condition of `type_` in the object's `status.conditions` (None when absent)."""
    return find_condition((obj.get("status") or {}).get("conditions"), type_)


def find_condition(conditions: Any, type_: str) -> Obj | None:
    return next((c for c in conditions or [] if isinstance(c, dict) and c.get("type") == type_), None)


def condition_status(obj: Obj, type_: str) -> str | None:
    """"True", "False" or "Unknown" as the object says it; None when it has no such condition."""
    condition = get_condition(obj, type_)
    return None if condition is None else condition.get("status")


def is_condition_true(obj: Obj, type_: str) -> bool:
    return condition_status(obj, type_) == "True"


def new_condition(type_: str, status: str, now: float, previous: Obj | None = None, **fields: Any) -> Obj:
    """A condition whose lastTransitionTime is kept from `previous` while the status holds and is
    `now` when it changes (apimachinery `meta.SetStatusCondition`); other fields as given."""
    held = previous.get("lastTransitionTime") if previous and previous.get("status") == status else None
    return {"type": type_, "status": status, **fields, "lastTransitionTime": held or format_time(now)}


def set_condition(conditions: Any, type_: str, status: str, now: float, **fields: Any) -> list[Obj]:
    """`conditions` with the one of `type_` set (in its place, or appended), as a new list."""
    out = [dict(c) for c in conditions or [] if isinstance(c, dict)]
    updated = new_condition(type_, status, now, find_condition(out, type_), **fields)
    for i, condition in enumerate(out):
        if condition.get("type") == type_:
            out[i] = updated
            return out
    return out + [updated]


# --- nodes ---------------------------------------------------------------------------------------

def node_ready_status(node: Obj | None) -> str:
    """The node's Ready condition status: "True", "False", or "Unknown" (also when it has none)."""
    return condition_status(node or {}, "Ready") or "Unknown"


def node_ready(node: Obj | None) -> str:
    """Ready, NotReady or Unknown, as `kubectl get nodes` starts its STATUS column."""
    return {"True": "Ready", "False": "NotReady"}.get(node_ready_status(node), "Unknown")


def is_node_ready(node: Obj | None) -> bool:
    return node_ready_status(node) == "True"
