"""What the page's user may do, asked of the hub before the page offers it or makes the request.

Guarantees:
- `allowed(client, user, rights)` asks one SelfSubjectAccessReview per right not yet known for
  that user (as `kubectl auth can-i` does: RBAC decides, the hub answers; the unknown ones
  together, none when a kept answer already says no), and keeps each answer
  for `TTL_S` seconds of the injected clock; so a page's polling asks the hub once, not on every
  poll, and a request the user cannot be allowed is never made (it would show on the instructor's
  board as the attendee's error). A review the hub refuses or cannot answer counts as not allowed,
  and is not kept (asked again next time). With authentication off the hub lets everyone do
  everything, so nothing is asked and everything is allowed.
- `CONTROLS` names the verbs behind the page's cluster controls (cordon/uncordon, drain, stopping a
  kubelet, stopping the control-plane spokes); `controls(client, user)` is {control: bool}.
- The cache is bounded: at most `MAX_ENTRIES` answers; the oldest go first.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, Iterable

from control import errors
from control.auth import enabled as auth_enabled
from control.client.http import HubClient
from control.clock import REAL
from dashboard.presenters import SPOKES_CONFIGMAP

REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
TTL_S = 60.0
IN_FLIGHT = 4  # reviews one page asks at once
MAX_ENTRIES = 5000


@dataclass(frozen=True)
class Right:
    """One verb on one resource, as a ResourceAttributes of an access review ("" namespace: all
    namespaces for a namespaced resource, the cluster for a cluster-scoped one)."""

    verb: str
    resource: str
    group: str = ""
    namespace: str = ""
    name: str = ""
    subresource: str = ""

    def review(self) -> dict:
        attributes = {"verb": self.verb, "resource": self.resource, "group": self.group,
                      "namespace": self.namespace, "name": self.name, "subresource": self.subresource}
        return {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                "spec": {"resourceAttributes": {key: value for key, value in attributes.items() if value}}}


_SPOKES_NAMESPACE, _SPOKES_NAME = SPOKES_CONFIGMAP
PATCH_NODES = Right("patch", "nodes")
SET_SPOKES = Right("patch", "configmaps", namespace=_SPOKES_NAMESPACE, name=_SPOKES_NAME)
# kubectl drain: cordon the node, then evict its pods wherever they run
CONTROLS: dict[str, tuple[Right, ...]] = {
    "cordon": (PATCH_NODES,),
    "drain": (PATCH_NODES, Right("create", "pods", subresource="eviction")),
    "spokes": (SET_SPOKES,),
}


class AccessCache:
    """Answers of access reviews per (user, right), each kept TTL_S seconds."""

    def __init__(self, clock: Callable[[], float] = REAL.monotonic, ttl: float = TTL_S,
                 max_entries: int = MAX_ENTRIES):
        self.clock, self.ttl, self.max_entries = clock, ttl, max_entries
        self._answers: OrderedDict[tuple[str, Right], tuple[float, bool]] = OrderedDict()

    def get(self, user: str, right: Right) -> bool | None:
        kept = self._answers.get((user, right))
        if kept is None or kept[0] <= self.clock():
            return None
        return kept[1]

    def put(self, user: str, right: Right, answer: bool) -> None:
        self._answers[(user, right)] = (self.clock() + self.ttl, answer)
        self._answers.move_to_end((user, right))
        while len(self._answers) > self.max_entries:
            self._answers.popitem(last=False)

    def clear(self) -> None:
        self._answers.clear()


CACHE = AccessCache()


def enforced() -> bool:
    """Whether the hub asks who is asking (with authentication off it allows everything)."""
    return auth_enabled()


async def review(client: HubClient, right: Right) -> bool | None:
    """The hub's answer for this client's user; None when the hub refused or failed to answer."""
    try:
        answer = await client.request("POST", REVIEWS, body=right.review())
    except (errors.ApiError, OSError):
        return None
    return bool(((answer or {}).get("status") or {}).get("allowed"))


async def allowed(client: HubClient, user: str, rights: Iterable[Right], cache: AccessCache = CACHE) -> bool:
    """Whether the user may do every one of `rights`: no question when a kept answer already says
    no; else the rights not known are asked together (IN_FLIGHT at a time), so a step that needs
    five rights waits for one review, not five in a row."""
    if not enforced():
        return True
    user = f"{client.server}|{user}"  # the same name on another hub is another user
    unknown: list[Right] = []
    for right in dict.fromkeys(rights):
        known = cache.get(user, right)
        if known is False:
            return False
        if known is None:
            unknown.append(right)
    gate = asyncio.Semaphore(IN_FLIGHT)

    async def ask(right: Right) -> bool | None:
        async with gate:
            return await review(client, right)

    answers = await asyncio.gather(*(ask(right) for right in unknown))
    for right, answer in zip(unknown, answers):
        if answer is not None:  # a review the hub could not answer is asked again next time
            cache.put(user, right, answer)
    return all(answers)


async def controls(client: HubClient, user: str, cache: AccessCache = CACHE) -> dict[str, bool]:
    return {control: await allowed(client, user, rights, cache) for control, rights in CONTROLS.items()}
