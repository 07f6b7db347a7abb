"""The scheduler's VolumeBinding plugin, as far as this cluster's volumes go: a pure reading of a
pod's claims (kube-scheduler's `pkg/scheduler/framework/plugins/volumebinding`).

Guarantees (`check_claims`, no I/O, nothing changed):
- A pod whose claim does not exist, or is being deleted, cannot be placed anywhere: upstream's
  PreFilter message `persistentvolumeclaim "NAME" not found` / `... is being deleted`. A generic
  ephemeral volume's claim is `<pod>-<volume>`; until it exists the message is upstream's
  `waiting for ephemeral volume controller to create the persistentvolumeclaim "NAME"`.
- A claim not yet bound whose class binds Immediately makes the pod wait: "pod has unbound
  immediate PersistentVolumeClaims" (the volume binder binds it; the claim's change retries the
  pod). So a kubelet never sees a pod whose claim is unbound.
- A claim not yet bound whose class is WaitForFirstConsumer is "delayed": the pod may be placed,
  and before its binding the scheduler names the node on the claim
  (`volume.kubernetes.io/selected-node`) and waits until the claim is bound (`delayed`).
- The class of a claim is its `storageClassName`, else the default class (annotated
  `storageclass.kubernetes.io/is-default-class: "true"`); a claim naming no class that exists
  binds as Immediate (the binder then reports why it cannot).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

Obj = dict[str, Any]
SELECTED_NODE = "volume.kubernetes.io/selected-node"
DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"


@dataclass
class ClaimCheck:
    unresolvable: str | None = None  # the PreFilter message: no node can take the pod now
    delayed: list[Obj] = field(default_factory=list)  # unbound WaitForFirstConsumer claims


def claim_names(pod: Obj) -> list[tuple[str, bool]]:
    """(claim name, is a generic ephemeral volume's) for every claim the pod's volumes use."""
    out = []
    name = (pod.get("metadata") or {}).get("name", "")
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        if not isinstance(volume, dict):
            continue
        claim = volume.get("persistentVolumeClaim")
        if isinstance(claim, dict) and claim.get("claimName"):
            out.append((str(claim["claimName"]), False))
        elif isinstance(volume.get("ephemeral"), dict):
            out.append((f"{name}-{volume.get('name', '')}", True))
    return out


def is_bound(claim: Obj) -> bool:
    return bool((claim.get("spec") or {}).get("volumeName")) and \
        (claim.get("status") or {}).get("phase") == "Bound"


def class_of(claim: Obj, classes: list[Obj]) -> Obj | None:
    wanted = (claim.get("spec") or {}).get("storageClassName")
    if wanted is not None:
        return next((c for c in classes if (c.get("metadata") or {}).get("name") == wanted), None)
    return next((c for c in classes
                 if ((c.get("metadata") or {}).get("annotations") or {}).get(DEFAULT_CLASS) == "true"), None)


def check_claims(pod: Obj, get_claim: Callable[[str, str], Obj | None],
                 classes: Callable[[], list[Obj]]) -> ClaimCheck:
    """What the pod's claims allow now (see the module's guarantees). `classes()` is asked only for
    an unbound claim: most pods have no claim, and every pod passes here."""
    namespace = (pod.get("metadata") or {}).get("namespace", "default")
    check = ClaimCheck()
    unbound_immediate = False
    for name, ephemeral in claim_names(pod):
        claim = get_claim(namespace, name)
        if claim is None:
            check.unresolvable = (f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{name}"'
                                  if ephemeral else f'persistentvolumeclaim "{name}" not found')
            return check
        if (claim.get("metadata") or {}).get("deletionTimestamp"):
            check.unresolvable = f'persistentvolumeclaim "{name}" is being deleted'
            return check
        if is_bound(claim):
            continue
        storage_class = class_of(claim, classes())
        if storage_class is not None and storage_class.get("volumeBindingMode") == "WaitForFirstConsumer":
            check.delayed.append(claim)
        else:
            unbound_immediate = True
    if unbound_immediate:
        check.unresolvable = UNBOUND_IMMEDIATE
    return check


def prefilter_message(total_nodes: int, reason: str) -> str:
    """kube-scheduler's FitError text for a PreFilter refusal (every node refused alike)."""
    return (f"0/{total_nodes} nodes are available: {reason}. preemption: 0/{total_nodes} nodes are available: "
            f"{total_nodes} Preemption is not helpful for scheduling.")
