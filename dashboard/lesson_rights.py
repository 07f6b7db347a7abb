"""The rights a lesson step needs, so that a viewer without them is shown "watch the instructor do
it" instead of a button that would answer 403, and a check they may not read is not made.

Guarantees:
- `action_rights` lists the access-review rights of a step's (already scoped) action: each object
  of an `apply` (create, in its namespace; a cluster-scoped kind at the cluster), a `delete`
  (list and delete), and each dashboard button by what its request does (a kubelet's or the
  scheduler's stop patches the spokes ConfigMap in kube-system, a cordon patches the node; `traffic`
  is the Service's `services/proxy`, as the hub authorizes a person's run: `create` on the Service
  its target names, in the namespace the name says, else the form's).
- `command_rights` lists what a kubectl-only step asks for that an attendee's namespace does not
  give: `kubectl drain`, `cordon`, `uncordon` and `taint` (nodes), so a step with no button but a
  cluster command still says who does it.
- A kind the hub does not serve needs no right here: the action and the check report it themselves.
"""

from __future__ import annotations

import re
from typing import Any

from control.auth.requestinfo import TRAFFIC_PATH, service_proxy_attributes
from control.client.http import HubClient
from dashboard import manifests
from dashboard.access import PATCH_NODES, SET_SPOKES, Right
from dashboard.lesson_checks import Resolve
from dashboard.lesson_scope import Scope, scoped_documents
from dashboard.lessons import Action, manifest_text

_CLUSTER_COMMAND = re.compile(r"(?<![\w/.-])kubectl\s+(?:-\S+\s+)*(?:drain|cordon|uncordon|taint)\b")


def _traffic_rights(form: dict[str, str]) -> tuple[Right, ...]:
    """A traffic run to a named Service needs its proxy (an address: the node's own path, which
    no access review of a resource names; the hub answers that one)."""
    attrs = service_proxy_attributes("POST", TRAFFIC_PATH, form)
    if attrs is None:
        return ()
    return (Right(attrs.verb, attrs.resource, attrs.api_group, attrs.namespace, attrs.name, attrs.subresource),)


def _button_rights(action: Action) -> tuple[Right, ...]:
    namespace = dict(action.form).get("namespace", action.namespace)
    if action.do == "traffic":
        return _traffic_rights(dict(action.form))
    return {
        "spoke": (SET_SPOKES,),
        "cordon": (PATCH_NODES,),
        "uncordon": (PATCH_NODES,),
        "static-pod": (PATCH_NODES,),  # the control-plane node's files are its administrator's
        "delete-pod": (Right("delete", "pods", namespace=namespace),),
        "crash": (Right("patch", "pods", namespace=namespace),),
        "exec": (Right("create", "pods", namespace=namespace, subresource="exec"),),  # as kubectl exec
        "scale": (Right("patch", "deployments", "apps", namespace, subresource="scale"),),
        "stale-write": (Right("update", "deployments", "apps", namespace),),
        # the badge lesson: approving is writing the approval (the signer's `approve` is checked by the hub)
        "approve-csr": (Right("update", "certificatesigningrequests", "certificates.k8s.io",
                              subresource="approval"),),
        "fetch-badge": (Right("get", "certificatesigningrequests", "certificates.k8s.io"),),
        "as-badge": (Right("get", "certificatesigningrequests", "certificates.k8s.io"),),
        "front-door": (Right("get", "ingresses", "networking.k8s.io", namespace),),  # its address, then traffic
    }.get(action.do, ())


async def action_rights(client: HubClient, action: Action, scope: Scope, resolve: Resolve) -> list[Right]:
    if action.do:
        return list(_button_rights(action))
    if action.delete is not None:
        kind, api_version, _ = action.delete
        resource = await resolve(client, api_version, kind)
        if resource is None:
            return []
        return [Right(verb, resource.plural, resource.group, action.namespace) for verb in ("list", "delete")]
    try:
        documents = scoped_documents(manifests.parse(manifest_text(action)), scope)
    except manifests.ManifestError:
        return []  # the button reports it
    rights: list[Right] = []
    for document in documents:
        resource = await resolve(client, str(document.get("apiVersion", "")), str(document.get("kind", "")))
        if resource is None:
            continue
        meta: dict[str, Any] = document.get("metadata") or {}
        namespace = (meta.get("namespace") or action.namespace) if resource.namespaced else ""
        rights.append(Right("create", resource.plural, resource.group, namespace))
    return rights


def command_rights(command: str) -> list[Right]:
    return [PATCH_NODES] if _CLUSTER_COMMAND.search(command or "") else []

