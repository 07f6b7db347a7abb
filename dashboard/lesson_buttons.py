"""The buttons only lessons have: each does what the kubectl command beside it does, one request
(or a read, then one write) through the dashboard's own client, so it travels on its spoke.

Guarantees:
- `rollout-undo` is `kubectl rollout undo deployment/NAME`: the Deployment's template becomes the
  one of the ReplicaSet with the previous revision (`deployment.kubernetes.io/revision`), without
  its pod-template-hash label, written with the resourceVersion read (a concurrent change is a 409).
  No earlier revision: an `ActionError` with kubectl's words.
- A provoked refusal is a `Refused` line carrying the hub's code, which a lesson step's `answer`
  expects.
- `as-user` is `kubectl get pods --as=system:serviceaccount:NS:NAME`: the same LIST, sent as the
  admin with `Impersonate-User`; a refusal (403) is the result, shown as one (`Answer`).
- `old-watch` is `kubectl get --raw '...?watch=1&resourceVersion=1'`: a watch from a revision the
  hub may have compacted; the ERROR event (410 Gone) is the result, then the relist an informer
  does (its resourceVersion). A hub that still holds revision 1 says so.
- `traffic` sends the traffic form's requests from a node to a Service and sums up who answered
  (a run where nobody answered is a refusal, 503; 504 when NetworkPolicies dropped them: they
  timed out, and the line names the policies); a run
  of more than `WAIT_FOR_AT_MOST` requests goes on in the background and the button answers at
  once with how long it will take.
- `static-pod` edits a control-plane component's manifest file (`dashboard.control_plane`).
- `front-door` sends requests from a node to an Ingress's address with a Host and path
  (`dashboard.lesson_ingress`).
- `gateway-traffic` sends guests through a Gateway's listener from this machine (`dashboard.lesson_gateway`).
- `exec` is `kubectl exec POD [-c CONTAINER] -- COMMAND` (`dashboard.lesson_exec`): the command's
  output, collapsed to one short line; a non-zero exit is a refusal, 504 when the command says it
  timed out (wget's "download timed out", curl's "Connection timed out": a connection a
  NetworkPolicy dropped), else 500, with kubectl's "command terminated with exit code N".
Every button returns a short line or raises the hub's error (`control.errors`) or `ActionError`.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import shlex
import ssl
from typing import Any, Awaitable, Callable

import httpx

from control import errors
from control.client.http import HubClient
from control.client.resources import DEPLOYMENTS, PODS, REPLICASETS
from dashboard import lesson_exec, lesson_gateway, network
from dashboard.actions import NAME, ActionError, Answer
from dashboard.control_plane import static_pod
from dashboard.lesson_ingress import front_door
from dashboard.hub import cluster_ca, current_token

REVISION = "deployment.kubernetes.io/revision"
HASH_LABEL = "pod-template-hash"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
WAIT_FOR_AT_MOST = 100  # requests; more are sent in the background (the page's request would time out)
INTERVAL_MS = 100  # kube-proxy's default pace between two requests of a traffic run
_running: set[asyncio.Task] = set()  # background traffic runs, held until they end


class Refused(Answer):
    """A refusal the button provoked on purpose, with the hub's status code (403, 410)."""

    def __new__(cls, line: str, code: int) -> "Refused":
        refused = super().__new__(cls, line)
        refused.code = code
        return refused


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
    template = copy.deepcopy(revisions[-2][1]["spec"]["template"])  # the listed object stays as it was
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


@functools.lru_cache(maxsize=8)
def _tls_context(ca: bytes | None) -> ssl.SSLContext:
    """The TLS context of a request made as another user, made once per CA: the hub's own, or
    httpx's default (a client made without one loads the whole CA bundle, some 20-200 ms of the
    event loop, on every press of the button). A context is safe to share between clients."""
    return ssl.create_default_context(cadata=ca.decode()) if ca is not None else httpx.create_ssl_context()


async def as_user(client: HubClient, form: dict[str, str]) -> str:
    namespace, account = _name(form, "namespace"), _name(form, "serviceAccount")
    user = f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{account}"
    headers = {"Impersonate-User": user, "User-Agent": client.agent, "Accept": "application/json"}
    token = current_token()
    if token:
        headers["Authorization"] = f"Bearer {token}"
    verify = _tls_context(cluster_ca(client.server))
    async with httpx.AsyncClient(base_url=client.server, headers=headers, verify=verify, timeout=client.timeout) as session:
        answer = await session.get(PODS.path(namespace))
    if answer.status_code >= 300:
        refused = errors.from_status(answer.content, answer.status_code)
        return Refused(f"{refused.code} {refused.reason}: {refused.message}", refused.code)  # the message names the user
    count = len(answer.json().get("items") or [])
    return f"allowed: {count} pod(s) listed as {user}"


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
    code = int(status.get("code") or 410)
    return Refused(f"ERROR {code} {status.get('reason')}: {status.get('message')}; relisted at resourceVersion {fresh}", code)


async def traffic(client: HubClient, form: dict[str, str]) -> str:
    params = network.traffic_params(form)  # the form is checked before anything is sent
    if int(params["count"]) > WAIT_FOR_AT_MOST:  # a long run (a rush for the autoscaler) goes on in the background
        task = asyncio.get_running_loop().create_task(network.send_traffic(client.server, form))
        _running.add(task)
        task.add_done_callback(_running.discard)
        return (f"sending {params['count']} requests from {params['node']} to {params['target']} "
                f"(one every {INTERVAL_MS} ms, about {int(params['count']) * INTERVAL_MS // 1000} s)")
    summary = await network.send_traffic(client.server, form)
    answered = ", ".join(f"{pod} {count}" for pod, count in summary.pods) or "nobody"
    line = f"{summary.sent} request(s) to {params['target']}: {answered}"
    other = summary.failed - summary.dropped  # failed for another reason than a NetworkPolicy
    line += (f"; {other} failed" if other else "") + (f" ({summary.error})" if summary.error else "")
    if summary.dropped:
        line += f"; {summary.dropped} timed out, dropped by NetworkPolicy {', '.join(sorted(summary.policies))}"
    if summary.answered:
        return line
    return Refused(line, 504 if summary.dropped and not other else 503)


SHOWN_OUTPUT = 160  # characters of a command's output on the button's line


async def exec_in_pod(client: HubClient, form: dict[str, str]) -> str:
    namespace, pod = _name(form, "namespace"), _name(form, "pod")
    container = _name(form, "container") if form.get("container") else ""
    try:
        command = shlex.split(form.get("command") or "")
    except ValueError as exc:
        raise ActionError(f"command: {exc}") from None
    if not command:
        raise ActionError("you must specify at least one command for the container")
    try:
        result = await lesson_exec.run_in_pod(client.server, current_token(), cluster_ca(client.server), namespace, pod,
                                              command, container=container, agent=client.agent)
    except lesson_exec.ExecFailed as exc:
        raise ActionError(f"exec in pod {pod}: {exc}") from None
    shown = " ".join(result.output.split())
    shown = shown if len(shown) <= SHOWN_OUTPUT else shown[:SHOWN_OUTPUT - 1] + "…"
    if result.exit_code == 0:
        return shown or "(no output, exit code 0)"
    code = 504 if "timed out" in result.output.lower() else 500
    return Refused(f"command terminated with exit code {result.exit_code}: {shown}".rstrip(": "), code)


BUTTONS: dict[str, Callable[[HubClient, dict[str, str]], Awaitable[str]]] = {
    "rollout-undo": rollout_undo, "as-user": as_user, "old-watch": old_watch, "traffic": traffic,
    "static-pod": static_pod, "front-door": front_door, "gateway-traffic": lesson_gateway.gateway_traffic,
    "exec": exec_in_pod,
}
