"""The buttons only lessons have: each does what the kubectl command beside it does, one request
(or a read, then one write) through the dashboard's own client, so it travels on its spoke.

Guarantees:
- `rollout-undo` is `kubectl rollout undo deployment/NAME`: the Deployment's template becomes the
  one of the ReplicaSet with the previous revision (`deployment.kubernetes.io/revision`), without
  its pod-template-hash label, written with the resourceVersion read (a concurrent change is a 409).
  No earlier revision: an `ActionError` with kubectl's words.
- `as-user` is `kubectl get pods --as=system:serviceaccount:NS:NAME`: the same LIST, sent as the
  admin with `Impersonate-User`; a refusal (403) is the result, shown as one (`Answer`).
- `old-watch` is `kubectl get --raw '...?watch=1&resourceVersion=1'`: a watch from a revision the
  hub may have compacted; the ERROR event (410 Gone) is the result, then the relist an informer
  does (its resourceVersion). A hub that still holds revision 1 says so.
- `traffic` sends the traffic form's requests from a node to a Service and sums up who answered.
Every button returns a short line or raises the hub's error (`control.errors`) or `ActionError`.
"""

from __future__ import annotations

import json
from typing import Any, Awaitable, Callable

import httpx

from control import errors
from control.client.http import HubClient
from control.client.resources import DEPLOYMENTS, PODS, REPLICASETS
from dashboard import network
from dashboard.actions import NAME, ActionError, Answer
from dashboard.hub import cluster_ca, current_token

REVISION = "deployment.kubernetes.io/revision"
HASH_LABEL = "pod-template-hash"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"


def _name(form: dict[str, str], field: str = "name") -> str:
    value = (form.get(field) or "").strip()
    if not NAME.match(value):
        raise ActionError(f"{field}: {value!r} is not a valid name")
    return value


def previous_template(deployment: dict[str, Any], replicasets: list[dict[str, Any]]) -> dict[str, Any]:
    """The pod template of the Deployment's ReplicaSet with the highest revision below the current
    one, as `kubectl rollout undo` picks it; ActionError when there is none."""
    uid = deployment["metadata"].get("uid")
    owned = [rs for rs in replicasets
             if any(ref.get("uid") == uid and ref.get("controller") for ref in rs["metadata"].get("ownerReferences") or [])]
    revisions = sorted(((int(rs["metadata"].get("annotations", {}).get(REVISION, "0") or 0), rs) for rs in owned),
                       key=lambda pair: pair[0])
    if len(revisions) < 2:
        raise ActionError(f'no rollout history found for deployment "{deployment["metadata"]["name"]}"')
    template = json.loads(json.dumps(revisions[-2][1]["spec"]["template"]))  # a copy: cached objects are read-only
    (template.get("metadata") or {}).get("labels", {}).pop(HASH_LABEL, None)
    return template


async def rollout_undo(client: HubClient, form: dict[str, str]) -> str:
    namespace, name = _name(form, "namespace"), _name(form)
    deployment = await client.get(DEPLOYMENTS, name, namespace)
    replicasets = (await client.list(REPLICASETS, namespace)).get("items") or []
    template = previous_template(deployment, replicasets)
    patch = {"metadata": {"resourceVersion": deployment["metadata"]["resourceVersion"]}, "spec": {"template": template}}
    await client.patch(DEPLOYMENTS, name, patch, namespace)
    return f"deployment.apps/{name} rolled back"


async def as_user(client: HubClient, form: dict[str, str]) -> str:
    namespace, account = _name(form, "namespace"), _name(form, "serviceAccount")
    user = f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{account}"
    headers = {"Impersonate-User": user, "User-Agent": client.agent, "Accept": "application/json"}
    token = current_token()
    if token:
        headers["Authorization"] = f"Bearer {token}"
    ca = cluster_ca(client.server)
    verify: Any = True
    if ca is not None:
        import ssl

        verify = ssl.create_default_context(cadata=ca.decode())
    async with httpx.AsyncClient(base_url=client.server, headers=headers, verify=verify, timeout=client.timeout) as session:
        answer = await session.get(PODS.path(namespace))
    if answer.status_code >= 300:
        refused = errors.from_status(answer.content, answer.status_code)
        return Answer(f"{user}: {refused.code} {refused.reason}: {refused.message}")
    count = len(answer.json().get("items") or [])
    return f"{user}: allowed, {count} pod(s) listed"


async def old_watch(client: HubClient, form: dict[str, str]) -> str:
    namespace = _name(form, "namespace")
    path = PODS.path(namespace)
    first: dict[str, Any] = {}
    async for event in client.stream_lines("GET", path, params={"watch": "1", "resourceVersion": "1"}, read_timeout=10):
        first = event
        break
    relisted = await client.list(PODS, namespace)
    fresh = (relisted.get("metadata") or {}).get("resourceVersion", "")
    if first.get("type") != "ERROR":
        return f"revision 1 is still kept: the watch resumed ({first.get('type', 'no event')}); relist at {fresh}"
    status = first.get("object") or {}
    return Answer(f"ERROR {status.get('code')} {status.get('reason')}: {status.get('message')}; "
                  f"relisted at resourceVersion {fresh}")


async def traffic(client: HubClient, form: dict[str, str]) -> str:
    summary = await network.send_traffic(client.server, form)
    answered = ", ".join(f"{pod} {count}" for pod, count in summary.pods) or "nobody"
    line = f"{summary.sent} request(s) to {form.get('target')}: {answered}"
    return line + (f"; {summary.failed} failed" if summary.failed else "") + (f" ({summary.error})" if summary.error else "")


BUTTONS: dict[str, Callable[[HubClient, dict[str, str]], Awaitable[str]]] = {
    "rollout-undo": rollout_undo, "as-user": as_user, "old-watch": old_watch, "traffic": traffic,
}
