"""Pod events mapped to the key of the owner that controls the pod (kube-controller-manager's
`resolveControllerRef` and `getPodReplicaSets`/`getPodJobs`), shared by the ReplicaSet and the Job
controllers.

Guarantees: a pod with a controller reference of the owner's kind enqueues that owner only; an
orphan that is not being deleted enqueues every owner in its namespace whose selector matches it
(one may adopt it); a pod whose owner or labels changed enqueues the old owners too. The owner's
expectations hear of every creation and deletion the cache sees, so a lagging cache never makes
the owner create or delete twice.
"""

from __future__ import annotations

from typing import Callable

from control.client.expectations import Expectations
from control.client.informer import Handlers, Informer
from control.client.resources import key_of
from control.controllers.common import Obj, matching_in_namespace, terminating, uid_of
from control.kinds.meta import controller_ref, labels_of, metadata, spec_selector
from control.kinds.selectors import LabelSelector


def api_group(api_version: str) -> str:
    """The group of an apiVersion: "apps/v1" -> "apps", "v1" -> "" (the core group)."""
    group, _, _ = api_version.rpartition("/")
    return group


class PodsOfOwner:
    """The pod handlers of an owner kind (`kind` in an apiVersion under `group/`; "" is the core
    group, whose apiVersion is a bare "v1"); `selector` reads an owner's selector (a
    ReplicationController's is a plain map, not a LabelSelector)."""

    def __init__(self, kind: str, group: str, owners: Informer, enqueue: Callable[[str], None],
                 expectations: Expectations, selector: Callable[[Obj], LabelSelector] = spec_selector):
        self.kind, self.group, self.owners = kind, group, owners
        self.enqueue, self.expectations, self.selector = enqueue, expectations, selector

    def handlers(self) -> Handlers:
        return Handlers(on_add=self.added, on_update=self.updated, on_delete=self.deleted)

    def owner_key(self, pod: Obj) -> str | None:
        ref = controller_ref(pod)
        if not ref or ref.get("kind") != self.kind or api_group(str(ref.get("apiVersion", ""))) != self.group:
            return None
        return f"{metadata(pod).get('namespace')}/{ref.get('name')}"

    def enqueue_for(self, pod: Obj) -> None:
        owner = self.owner_key(pod)
        if owner:
            self.enqueue(owner)
        elif not controller_ref(pod) and not terminating(pod):
            namespace = metadata(pod).get("namespace", "")
            for candidate in matching_in_namespace(self.owners, namespace, labels_of(pod), self.selector):
                self.enqueue(key_of(candidate))

    def added(self, pod: Obj) -> None:
        owner = self.owner_key(pod)
        if owner and terminating(pod):
            self.expectations.deleted(owner, uid_of(pod))
        elif owner:
            self.expectations.created(owner)
        self.enqueue_for(pod)

    def updated(self, old: Obj, new: Obj) -> None:
        owner = self.owner_key(new)
        if owner and terminating(new) and not terminating(old):
            self.expectations.deleted(owner, uid_of(new))
        if controller_ref(old) != controller_ref(new) or labels_of(old) != labels_of(new):
            self.enqueue_for(old)
        self.enqueue_for(new)

    def deleted(self, pod: Obj) -> None:
        owner = self.owner_key(pod)
        if owner:
            self.expectations.deleted(owner, uid_of(pod))
        self.enqueue_for(pod)
