"""The root CA publisher: every namespace has the ConfigMap `kube-root-ca.crt` holding the
cluster CA, so a pod's projected token volume can carry `ca.crt`.

Guarantees (kube-controller-manager's `rootcacertpublisher`):
- level-triggered per namespace (the queue holds namespace names): a namespace that is there and
  not terminating has `kube-root-ca.crt` with `data: {ca.crt: <the CA, PEM>}` and upstream's
  description annotation; a missing one is created, a changed one put back (guarded by its
  resourceVersion: a 409 is retried), a deleted one made again;
- the CA is the hub's (`control.keys.ca_certificate` in the data folder, as upstream reads its
  --root-ca-file); it is read once when the controller is built;
- nothing is made in a namespace being deleted or gone (404/403 from the hub end it).
"""

from __future__ import annotations

import copy
from typing import Any

from control import errors
from control.client.informer import Handlers, Informer
from control.client.resources import CONFIGMAPS, NAMESPACES
from control.client.runner import DONE, Result, Runner
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.controllers.common import Obj, terminating
from control.keys import ca_certificate, default_data_dir
from control.kinds.meta import metadata

CONFIGMAP_NAME = "kube-root-ca.crt"
DESCRIPTION_ANNOTATION = "kubernetes.io/description"
DESCRIPTION = ("Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints "
               "such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across "
               "distributions of Kubernetes clusters.")


class RootCAPublisher:
    def __init__(self, client: Any, namespaces: Informer, configmaps: Informer, *, clock: Clock, ca_pem: str):
        self.client, self.namespaces, self.configmaps, self.ca_pem = client, namespaces, configmaps, ca_pem
        self.queue = WorkQueue(clock=clock)
        namespaces.add_handlers(Handlers(on_add=self._namespace, on_update=lambda old, new: self._namespace(new)))
        configmaps.add_handlers(Handlers(on_update=lambda old, new: self._configmap(new), on_delete=self._configmap))

    def _namespace(self, ns: Obj) -> None:
        self.queue.add(metadata(ns)["name"])

    def _configmap(self, cm: Obj) -> None:
        if metadata(cm).get("name") == CONFIGMAP_NAME:
            self.queue.add(metadata(cm).get("namespace", ""))

    def published(self, cm: Obj) -> bool:
        annotations = metadata(cm).get("annotations") or {}
        return cm.get("data") == {"ca.crt": self.ca_pem} and annotations.get(DESCRIPTION_ANNOTATION) == DESCRIPTION

    async def reconcile(self, namespace: str) -> Result:
        ns = self.namespaces.cache.get(namespace)
        if ns is None or terminating(ns) or (ns.get("status") or {}).get("phase") == "Terminating":
            return DONE
        cm = self.configmaps.cache.get(f"{namespace}/{CONFIGMAP_NAME}")
        try:
            if cm is None:
                await self.client.create(CONFIGMAPS, {
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": CONFIGMAP_NAME, "namespace": namespace,
                                 "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION}},
                    "data": {"ca.crt": self.ca_pem}}, namespace)
            elif not self.published(cm):
                body = copy.deepcopy(cm)  # cached objects are shared: change a copy
                body["data"] = {"ca.crt": self.ca_pem}
                body.pop("binaryData", None)
                body["metadata"]["annotations"] = {**(metadata(cm).get("annotations") or {}),
                                                   DESCRIPTION_ANNOTATION: DESCRIPTION}
                await self.client.replace(CONFIGMAPS, body)
        except (errors.AlreadyExists, errors.NotFound, errors.Forbidden):
            pass  # made meanwhile (its event brings it to the cache), or the namespace went or is going
        return DONE


def build(*, client: Any, informers: Any, clock: Clock, timings: Any, recorder: Any) -> Runner:
    namespaces = informers.get(NAMESPACES)
    configmaps = informers.get(CONFIGMAPS, field_selector=f"metadata.name={CONFIGMAP_NAME}")
    ca_pem = ca_certificate(default_data_dir()).decode()  # made here if the folder has none yet
    controller = RootCAPublisher(client, namespaces, configmaps, clock=clock, ca_pem=ca_pem)
    return Runner("root-ca-cert-publisher", controller.reconcile, controller.queue, [namespaces, configmaps], workers=1)
