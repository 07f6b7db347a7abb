"""Puts what the Gateway API needs besides its definitions on a fresh hub, over HTTP like any
other client: upstream's two aggregation ClusterRoles (so `view`, `edit` and `admin` — an
attendee's role in their namespace — cover the Gateway API's kinds) and the bootstrap GatewayClass
`kube-kitchen` that our controller handles.

Guarantees: `install_objects(url, token)` creates each object that is missing and leaves one that
exists as it is (a user's edits survive a restart); it returns the problems (the hub's refusals),
empty when all is well, and never raises for a refusal or an unreachable hub. Synchronous on
purpose: `runcluster` calls it from its plain main thread, once the definitions are Established.
"""

from __future__ import annotations

from typing import Any, Iterable

import httpx

from control import errors
from control.client.component import user_agent
from control.gateway.manifests import AGGREGATION_ROLES, GATEWAY_CLASS, GATEWAYCLASSES

ROLES_PATH = "/apis/rbac.authorization.k8s.io/v1/clusterroles"
OBJECTS = ((ROLES_PATH, AGGREGATION_ROLES), (GATEWAYCLASSES.path(), (GATEWAY_CLASS,)))


def install_objects(url: str, token: str, *, objects: Iterable[tuple[str, Iterable[dict[str, Any]]]] = OBJECTS,
                    transport: httpx.BaseTransport | None = None) -> list[str]:
    problems = []
    headers = {"User-Agent": user_agent("gateway-installer"), "Authorization": f"Bearer {token}"}
    try:
        with httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=10.0, transport=transport) as http:
            for path, items in objects:
                for obj in items:
                    response = http.post(path, json=obj)
                    if response.status_code not in (200, 201, 409):
                        refusal = errors.from_status(response.content, response.status_code)
                        problems.append(f"{obj['kind']} {obj['metadata']['name']}: {response.status_code} "
                                        f"{refusal.message}")
    except httpx.HTTPError as exc:
        problems.append(f"cannot reach the hub at {url}: {exc or type(exc).__name__}")
    return problems
