"""The clusterrole-aggregation controller: an aggregated ClusterRole's rules are the rules of the
ClusterRoles its `aggregationRule` selects (upstream `pkg/controller/clusterroleaggregation`).

Guarantees (level-triggered, idempotent):
- any ClusterRole change queues every ClusterRole that has an aggregationRule (a label change may
  add or remove a role from any of them); `reconcile(name)` computes the selected roles' rules (in
  name order, no duplicates, never the role's own, `control.kinds.rbac.aggregated_rules`) and
  writes them with one PUT only when they differ, so chains (view into edit into admin) settle;
- a role that is gone or has no aggregationRule is left alone; a conflict (a stale cache) is
  retried with back-off, a deleted role is the end of it.
"""

from __future__ import annotations

from typing import Any

from control import errors
from control.kinds.rbac import aggregated_rules
from control.client.informer import Handlers, Informer
from control.client.resources import Resource
from control.client.runner import DONE, Result, Runner
from control.client.workqueue import WorkQueue
from control.clock import Clock
from control.controllers.common import Obj
from control.kinds.meta import metadata

CLUSTERROLES = Resource("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", namespaced=False)


class ClusterRoleAggregationController:
    def __init__(self, client: Any, roles: Informer, *, clock: Clock):
        self.client, self.roles = client, roles
        self.queue = WorkQueue(clock=clock)
        roles.add_handlers(Handlers(on_add=self._changed, on_update=lambda old, new: self._changed(new),
                                    on_delete=self._changed))

    def _changed(self, role: Obj) -> None:
        for other in self.roles.cache.list():
            if other.get("aggregationRule"):
                self.queue.add(metadata(other)["name"])

    async def reconcile(self, name: str) -> Result:
        role = self.roles.cache.get(name)
        if role is None or not role.get("aggregationRule"):
            return DONE
        rules = aggregated_rules(role, list(self.roles.cache.list()))
        if rules == (role.get("rules") or []):
            return DONE
        try:
            await self.client.replace(CLUSTERROLES, {**role, "apiVersion": "rbac.authorization.k8s.io/v1",
                                                     "kind": "ClusterRole", "rules": rules})
        except errors.NotFound:
            return DONE
        return DONE


def build(*, client: Any, informers: Any, clock: Clock, timings: Any, recorder: Any) -> Runner:
    roles = informers.get(CLUSTERROLES)
    controller = ClusterRoleAggregationController(client, roles, clock=clock)
    return Runner("clusterrole-aggregation", controller.reconcile, controller.queue, [roles], workers=1)
