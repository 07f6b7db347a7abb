"""The rules every write follows before the store: here, what a status write keeps and changes."""

from __future__ import annotations

import copy

from control import kinds as registry
from control.api.objects import prepare_update
from control.api.request import Call

PODS = registry.by_resource("", "v1", "pods")


def _pod() -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web", "namespace": "default", "uid": "u-1", "resourceVersion": "7",
                         "creationTimestamp": "2026-01-01T00:00:00Z", "labels": {"app": "web"}},
            "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "busybox"}]},
            "status": {"phase": "Pending"}}


def test_a_status_write_keeps_the_stored_object_but_status_and_never_changes_it_in_place():
    current = _pod()
    stored = copy.deepcopy(current)
    sent = _pod()
    sent["spec"]["containers"][0]["image"] = "nginx"  # ignored on the status subresource
    sent["metadata"]["labels"] = {"app": "other"}
    sent["status"] = {"phase": "Running", "podIP": "10.0.0.5"}
    call = Call(method="PUT", kind=PODS, namespace="default", name="web", subresource="status", query={},
                actor="kubelet/node-1")
    result = prepare_update(call, current, sent, subresource="status", now=1_800_000_000.0)
    assert current == stored, "the stored object is not changed in place"
    assert result["status"] == {"phase": "Running", "podIP": "10.0.0.5"}
    assert result["spec"] == stored["spec"] and result["metadata"]["labels"] == {"app": "web"}
    result["metadata"]["resourceVersion"] = "8"  # what the store does next
    assert current["metadata"]["resourceVersion"] == "7"
