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
- A flow holds at most its level's `per_flow` requests in flight; more wait, first come first
  served, in a queue of at most `queue_length` for at most `queue_wait` seconds of the injected
  clock; beyond either, the request is refused with 429 TooManyRequests, upstream's message "Too
  many requests, please try again later." and `Retry-After: 1` (client-go waits and retries).
- A seat freed goes to the flow's oldest waiter; a flow with nothing in flight or waiting is
  forgotten, so memory is bounded by the requests being served.
- Every classified answer may carry the X-Kubernetes-PF-FlowSchema-UID and
  X-Kubernetes-PF-PriorityLevel-UID headers of its schema and level (stable uuid5 UIDs).
"""

from __future__ import annotations

import asyncio
import functools
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import Callable

from django.conf import settings

from control import errors
from control.auth.requestinfo import attributes
from control.clock import REAL, Clock

MESSAGE = "Too many requests, please try again later."
RETRY_AFTER = "1"
LONG_RUNNING_VERBS = ("watch", "proxy")
LONG_RUNNING_SUBRESOURCES = ("attach", "exec", "proxy", "log", "portforward")
PROBES = ("/healthz", "/readyz", "/livez")
# The cluster's own components (control.auth.tokenfile's identities) -> their FlowSchema.
COMPONENT_USERS = {"system:kube-controller-manager": "kube-controller-manager",
                   "system:kube-scheduler": "kube-scheduler", "system:kube-proxy": "kube-proxy",
                   "kubekitchen:dashboard": "kube-kitchen-components",
                   "kubekitchen:supervisor": "kube-kitchen-components"}
SPOKE_MARK = "(kube-kitchen)"  # control.client.component.user_agent's suffix
_NAMESPACE = uuid.UUID("6a1d1c2e-5b7f-4c1e-9f2a-6b6b6974636e")  # UIDs stable across restarts


@functools.lru_cache(maxsize=None)  # a handful of names; a SHA-1 per request is not worth it
def _uid(kind: str, name: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"{kind}/{name}"))


@dataclass(frozen=True)
class PriorityLevel:
    name: str
    per_flow: int = 0  # requests in flight per flow; 0 for the exempt level
    queue_length: int = 0
    queue_wait: float = 0.0

    @property
    def exempt(self) -> bool:
        return self.per_flow <= 0

    @property
    def uid(self) -> str:
        return _uid("PriorityLevelConfiguration", self.name)


@dataclass(frozen=True)
class Classification:
    schema: str
    level: PriorityLevel
    flow: str  # the flow distinguisher: a user, or a program at an address

    def headers(self) -> dict[str, str]:
        return {"X-Kubernetes-PF-FlowSchema-UID": _uid("FlowSchema", self.schema),
                "X-Kubernetes-PF-PriorityLevel-UID": self.level.uid}


def levels() -> dict[str, PriorityLevel]:
    """The levels, sized by the settings (read each time: tests and `runhub` may change them)."""
    per_user = settings.KK_FAIR_INFLIGHT_PER_USER
    queue, wait = settings.KK_FAIR_QUEUE_LENGTH, settings.KK_FAIR_QUEUE_WAIT
    return {"exempt": PriorityLevel("exempt"),
            "system": PriorityLevel("system", 4 * per_user, 4 * queue, wait),
            "workload-low": PriorityLevel("workload-low", per_user, queue, wait),
            "global-default": PriorityLevel("global-default", per_user, queue, wait)}


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


def too_many_requests() -> errors.TooManyRequests:
    return errors.TooManyRequests(MESSAGE, headers={"Retry-After": RETRY_AFTER})


@dataclass
class _Flow:
    in_flight: int = 0
    waiting: deque = field(default_factory=deque)


class Limiter:
    """Seats per flow. `acquire` returns a release function (call it exactly once) or raises
    TooManyRequests; it must run on the event loop that serves the requests."""

    def __init__(self, clock: Clock = REAL):
        self.clock = clock
        self.flows: dict[tuple[str, str], _Flow] = {}

    def in_flight(self, level: str, flow: str) -> int:
        entry = self.flows.get((level, flow))
        return entry.in_flight if entry else 0

    async def acquire(self, level: PriorityLevel, flow: str) -> Callable[[], None]:
        if level.exempt:
            return lambda: None
        key = (level.name, flow)
        entry = self.flows.setdefault(key, _Flow())
        if entry.in_flight < level.per_flow and not entry.waiting:
            entry.in_flight += 1
            return self._releaser(key)
        if len(entry.waiting) >= level.queue_length or level.queue_wait <= 0:
            self._forget_if_idle(key)
            raise too_many_requests()
        seat: asyncio.Future = asyncio.get_running_loop().create_future()
        entry.waiting.append(seat)
        # The timer only refuses a waiter still waiting; a seat handed over meanwhile stands.
        self.clock.call_later(level.queue_wait, lambda: seat.done() or seat.set_exception(too_many_requests()))
        try:
            await seat
        except BaseException:
            if seat in entry.waiting:
                entry.waiting.remove(seat)
            if seat.done() and not seat.cancelled() and seat.exception() is None:
                self._release(key)  # handed a seat, then cancelled before using it: pass it on
            self._forget_if_idle(key)
            raise
        return self._releaser(key)

    def _releaser(self, key: tuple[str, str]) -> Callable[[], None]:
        done = False

        def release() -> None:
            nonlocal done
            if not done:
                done = True
                self._release(key)

        return release

    def _release(self, key: tuple[str, str]) -> None:
        entry = self.flows.get(key)
        if entry is None:
            return
        while entry.waiting:
            seat = entry.waiting.popleft()
            if not seat.done():
                seat.set_result(None)  # the seat passes on: in_flight stays the same
                return
        entry.in_flight -= 1
        self._forget_if_idle(key)

    def _forget_if_idle(self, key: tuple[str, str]) -> None:
        entry = self.flows.get(key)
        if entry is not None and entry.in_flight <= 0 and not entry.waiting:
            del self.flows[key]


LIMITER = Limiter()
