"""The ServiceAccounts controller: every namespace has its `default` ServiceAccount.

Guarantees (kube-controller-manager's `serviceaccounts_controller.go`):
- level-triggered per namespace (the queue holds namespace names): a namespace that is there and
  not terminating gets each account of `ACCOUNTS` the cache does not show, created with one POST;
- a deleted account is made again (its delete event queues its namespace);
- nothing is made in a namespace being deleted or gone; a create the hub refuses because the
  namespace went meanwhile (404/403) or because the account exists already (409, a lagging cache)
  is the end of it, anything else is retried with back-off.
"""

from __future__ import annotations

from typing import Any

from control import errors
from control.client.informer import Handlers, Informer
from control.client.resources import NAMESPACES, Resource
from control.client.runner import DONE, Result, Runner
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.controllers.common import Obj, terminating
from control.kinds.meta import metadata

SERVICEACCOUNTS = Resource("", "v1", "serviceaccounts", "ServiceAccount")
ACCOUNTS = ("default",)


class ServiceAccountsController:
    def __init__(self, client: Any, namespaces: Informer, accounts: Informer, *, clock: Clock,
                 names: tuple[str, ...] = ACCOUNTS):
        self.client, self.namespaces, self.accounts, self.names = client, namespaces, accounts, names
        self.queue = WorkQueue(clock=clock)
        namespaces.add_handlers(Handlers(on_add=self._namespace, on_update=lambda old, new: self._namespace(new)))
        accounts.add_handlers(Handlers(on_delete=self._account_gone))

    def _namespace(self, ns: Obj) -> None:
        self.queue.add(metadata(ns)["name"])

    def _account_gone(self, account: Obj) -> None:
        if metadata(account).get("name") in self.names:
            self.queue.add(metadata(account).get("namespace", ""))

    def missing(self, namespace: str) -> list[str]:
        return [name for name in self.names if self.accounts.cache.get(f"{namespace}/{name}") is None]

    async def reconcile(self, namespace: str) -> Result:
        ns = self.namespaces.cache.get(namespace)
        if ns is None or terminating(ns) or (ns.get("status") or {}).get("phase") == "Terminating":
            return DONE
        for name in self.missing(namespace):
            body = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": namespace}}
            try:
                await self.client.create(SERVICEACCOUNTS, body, namespace)
            except (errors.AlreadyExists, errors.NotFound, errors.Forbidden):
                continue  # there already (our cache lags), or the namespace went or is going
        return DONE


def build(*, client: Any, informers: Any, clock: Clock, timings: Any, recorder: Any) -> Runner:
    namespaces, accounts = informers.get(NAMESPACES), informers.get(SERVICEACCOUNTS)
    controller = ServiceAccountsController(client, namespaces, accounts, clock=clock)
    return Runner("serviceaccount", controller.reconcile, controller.queue, [namespaces, accounts], workers=1)
