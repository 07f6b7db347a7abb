"""Fairness in the spirit of API Priority and Fairness: a bound on each user's requests in flight.

Every request is classified, as upstream's default FlowSchemas do it
(apiserver/pkg/apis/flowcontrol/bootstrap/default.go), into a priority level and a flow (one user
of that level); the first matching schema in precedence order wins:

- exempt: group system:masters (the instructor's admin kubeconfig) -> level exempt;
- probes: /healthz, /readyz, /livez -> exempt;
- system-nodes: group system:nodes -> system;
- kube-controller-manager, kube-scheduler, kube-proxy, kube-kitchen-components: the users of the
  cluster's own components (the dashboard and the supervisor too) -> system;
- kube-system-service-accounts: group system:serviceaccounts:kube-system (the cooks) -> system;
- service-accounts: group system:serviceaccounts -> workload-low;
- global-default: everyone else (an attendee) -> global-default.

With authentication off (`KK_AUTHENTICATION=off`) every request is `system:masters`, so the user
says nothing: there a flow is the client program and its address (`kubectl@10.0.0.7`, as
`control.api.request.client_name` names programs), the cluster's own components (a User-Agent
ending in "(kube-kitchen)": controller-manager, scheduler, kubelets, kube-proxies, cooks, the
dashboard) are the `system` level, and every other client is `global-default`, one flow per
program per address: one attendee's runaway loop fills only its own flow.

Guarantees:
- Long-running requests (watch, and the attach/exec/log/portforward/proxy subresources, upstream's
  BasicLongRunningRequestCheck) and the exempt level are never counted nor refused.
- A flow holds at most its level's `per_flow` seats (`control.seats`: beyond them and the queue,
  429 TooManyRequests with `Retry-After: 1`).
- A request whose body is decoded off the loop holds `body_seats` of its flow (more for a bigger
  body) from before its body is decoded until its answer is written: one sender's bodies wait in
  its own flow, never in the others'.
- Every classified answer may carry the X-Kubernetes-PF-FlowSchema-UID and
  X-Kubernetes-PF-PriorityLevel-UID headers of its schema and level (stable uuid5 UIDs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from control.api import bodies
from control.auth import enabled as authentication_enabled
from control.auth.requestinfo import attributes
# The seats themselves live in control.seats (the dashboard's manifest form holds them too).
from control.seats import (LIMITER, MESSAGE, RETRY_AFTER, Limiter, PriorityLevel, body_seats, levels,  # noqa: F401
                           too_many_requests, uid)

LONG_RUNNING_VERBS = ("watch", "proxy")
LONG_RUNNING_SUBRESOURCES = ("attach", "exec", "proxy", "log", "portforward")
PROBES = ("/healthz", "/readyz", "/livez")
# The cluster's own components (control.auth.tokenfile's identities) -> their FlowSchema.
COMPONENT_USERS = {"system:kube-controller-manager": "kube-controller-manager",
                   "system:kube-scheduler": "kube-scheduler", "system:kube-proxy": "kube-proxy",
                   "kubekitchen:dashboard": "kube-kitchen-components",
                   "kubekitchen:supervisor": "kube-kitchen-components"}
SPOKE_MARK = "(kube-kitchen)"  # control.client.component.user_agent's suffix


@dataclass(frozen=True)
class Classification:
    schema: str
    level: PriorityLevel
    flow: str  # the flow distinguisher: a user, or a program at an address

    def headers(self) -> dict[str, str]:
        return {"X-Kubernetes-PF-FlowSchema-UID": uid("FlowSchema", self.schema),
                "X-Kubernetes-PF-PriorityLevel-UID": self.level.uid}


def long_running(method: str, path: str, query: dict[str, str]) -> bool:
    attrs = attributes(method, path, query)
    if query.get("watch") in ("1", "true", "True"):  # /kubekitchen/changes?watch=1 too
        return True
    return attrs.resource_request and (attrs.verb in LONG_RUNNING_VERBS
                                       or attrs.subresource in LONG_RUNNING_SUBRESOURCES)


def classify(user: object, path: str, *, authenticated: bool, user_agent: str, actor: str,
             address: str) -> Classification:
    """The schema, level and flow of a request (see the module's table)."""
    table = levels()
    if path in PROBES:
        return Classification("probes", table["exempt"], "")
    if not authenticated:
        flow = f"{actor}@{address}"
        if user_agent.rstrip().endswith(SPOKE_MARK):
            return Classification("kube-kitchen-components", table["system"], flow)
        return Classification("global-default", table["global-default"], flow)
    name = getattr(user, "name", "")
    groups = getattr(user, "groups", ())
    if "system:masters" in groups:
        return Classification("exempt", table["exempt"], name)
    if "system:nodes" in groups:
        return Classification("system-nodes", table["system"], name)
    if name in COMPONENT_USERS:
        return Classification(COMPONENT_USERS[name], table["system"], name)
    if "system:serviceaccounts:kube-system" in groups:  # the cooks; upstream gives them workload-high
        return Classification("kube-system-service-accounts", table["system"], name)
    if "system:serviceaccounts" in groups:
        return Classification("service-accounts", table["workload-low"], name)
    return Classification("global-default", table["global-default"], name)


async def take_seats(request: Any) -> Callable[[], None]:
    """Classify a hub request (`control.api.request.Request`, its user known) and wait for its
    flow's seats: one, or `body_seats` for a body decoded off the loop; long-running requests take
    none. Raises 429 when the flow is full. Returns the release function."""
    request.flow = classify(request.user, request.path, authenticated=authentication_enabled(),
                            user_agent=request.headers.get("user-agent", ""), actor=request.actor,
                            address=request.address)
    if long_running(request.method, request.path, request.query):
        return _no_seat
    seats = 1
    if bodies.wants_worker(request.method, request.body, request.content_type):
        seats = body_seats(request.flow.level, len(request.body))
    return await LIMITER.acquire(request.flow.level, request.flow.flow, seats)


def _no_seat() -> None:
    pass
