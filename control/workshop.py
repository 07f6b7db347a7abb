"""A workshop's attendees, provisioned on a running hub over HTTP; their codes, claims and
kubeconfigs are kept in the data folder by `control.roster` (the contract the dashboard reads).

Guarantees:
- `provision(url, data, names)` gives each attendee, idempotently (run it again and nothing changes,
  nothing fails): a namespace of their name; a user of their name in the token file (group
  `ATTENDEES`); a RoleBinding `workshop-admin` to the ClusterRole `admin` in their namespace; a view
  of the cluster's nodes (get/list/watch, the ClusterRole and ClusterRoleBinding `NODES_VIEW`, bound
  to the group); a ResourceQuota and a LimitRange `workshop` in their namespace, sized for a laptop
  (`ATTENDEE_QUOTA`, `ATTENDEE_LIMITS`: the 11th pod is refused, a container without resources gets
  the defaults);
  a kubeconfig (`roster.write_kubeconfig`, owner-only) whose context's namespace is theirs,
  over the hub's HTTPS address when it has one (for a hub listening on every address, the machine's
  primary address: 0.0.0.0 names no machine on an attendee's laptop); and a join code
  (`roster.join_code`). An object that already exists is left as it is (an instructor's edits
  survive); a refusal of the hub raises `WorkshopError` with its message.
- `attendee_names(count=N)` is attendee-1..attendee-N; `read_names(text)` one name a line (blank lines
  and `#` comments skipped); a name that cannot be a namespace (DNS-1123 label) is refused by name.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any, Callable

import httpx

from control import roster
from control.auth import tokenfile

ATTENDEES = "kubekitchen:attendees"
NODES_VIEW = "kubekitchen:workshop-nodes-view"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
RBAC_GROUP = "rbac.authorization.k8s.io"


class WorkshopError(RuntimeError):
    """A name that cannot be an attendee's, or the hub refused an object."""


def attendee_names(count: int) -> list[str]:
    if count < 1:
        raise WorkshopError("--attendees must be at least 1")
    return [f"attendee-{n}" for n in range(1, count + 1)]


def read_names(text: str) -> list[str]:
    names = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    names = list(dict.fromkeys(name for name in names if name))
    bad = [name for name in names if not roster.LABEL.match(name) or name.startswith(("kube-", "system"))]
    if bad:
        raise WorkshopError(f"not a valid attendee name (a DNS-1123 label, not kube-* or system*): {', '.join(bad)}")
    if not names:
        raise WorkshopError("the attendees file names no one")
    return names


Api = Callable[[str, str, dict[str, Any] | None], httpx.Response]
# What one attendee may use: enough for every lesson (the largest runs 10 pods), small enough that
# thirty attendees' runaway Deployments cannot fill the hub.
ATTENDEE_QUOTA = {"pods": "10", "services": "10", "persistentvolumeclaims": "5", "configmaps": "20",
                  "secrets": "20", "requests.cpu": "4", "requests.memory": "4Gi", "limits.cpu": "8",
                  "limits.memory": "8Gi"}
# A container that says nothing gets these (so the quota's cpu/memory can count it); none may ask for
# more than a small laptop's share.
ATTENDEE_LIMITS = {"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"},
                   "defaultRequest": {"cpu": "100m", "memory": "64Mi"}, "max": {"cpu": "2", "memory": "2Gi"}}


def _binding(kind: str, name: str, namespace: str, role_kind: str, role: str, subject: dict[str, str]) -> dict:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": f"{RBAC_GROUP}/v1", "kind": kind, "metadata": meta,
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": role_kind, "name": role}, "subjects": [subject]}


def cluster_objects() -> list[tuple[str, dict[str, Any]]]:
    """(collection path, object) the whole workshop shares: the view of the nodes, for the group."""
    role = {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "ClusterRole", "metadata": {"name": NODES_VIEW},
            "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]}]}
    binding = _binding("ClusterRoleBinding", NODES_VIEW, "", "ClusterRole", NODES_VIEW,
                       {"apiGroup": RBAC_GROUP, "kind": "Group", "name": ATTENDEES})
    return [(f"{RBAC}/clusterroles", role), (f"{RBAC}/clusterrolebindings", binding)]


def attendee_objects(name: str) -> list[tuple[str, dict[str, Any]]]:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    binding = _binding("RoleBinding", "workshop-admin", name, "ClusterRole", "admin",
                       {"apiGroup": RBAC_GROUP, "kind": "User", "name": name})
    quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "workshop", "namespace": name},
             "spec": {"hard": dict(ATTENDEE_QUOTA)}}
    limits = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "workshop", "namespace": name},
              "spec": {"limits": [dict(ATTENDEE_LIMITS)]}}
    # the LimitRange before the quota: a pod created in between must already get its defaults
    return [("/api/v1/namespaces", namespace), (f"{RBAC}/namespaces/{name}/rolebindings", binding),
            (f"/api/v1/namespaces/{name}/limitranges", limits), (f"/api/v1/namespaces/{name}/resourcequotas", quota)]


def _creator(client: httpx.Client) -> Callable[[str, dict[str, Any]], None]:
    def create(path: str, body: dict[str, Any]) -> None:
        answer = client.post(path, json=body)
        if answer.status_code == 409 and answer.json().get("reason") == "AlreadyExists":
            return  # provisioned before: left as it is
        if answer.status_code >= 300:
            try:
                message = answer.json().get("message") or answer.text
            except ValueError:
                message = answer.text
            raise WorkshopError(f"{body['kind']} {body['metadata']['name']}: {answer.status_code} {message}")
    return create


def kubectl_server(data: Path, url: str) -> tuple[str, bytes]:
    """(server, CA) for an attendee's kubectl: the hub's HTTPS address when it has one (kubectl
    sends no token over plain HTTP)."""
    from control import keys
    from control.auth.serving import secure_url_for

    secure = secure_url_for(data, url)
    return (_reachable(secure), keys.ca_certificate(data)) if secure else (_reachable(url), b"")


def _reachable(url: str) -> str:
    """`url` with an unspecified host (0.0.0.0, ::: the hub listens on every address) replaced by
    the machine's primary address, which other machines can reach and the serving certificate names."""
    from urllib.parse import urlsplit

    from control.serving.hosts import machine_names

    parts = urlsplit(url)
    if parts.hostname not in ("0.0.0.0", "::"):
        return url
    for name in machine_names():
        try:
            address = ipaddress.ip_address(name)
        except ValueError:
            continue  # the machine's name: attendees' laptops may not resolve it
        return parts._replace(netloc=f"{address}:{parts.port}" if parts.port else str(address)).geturl()
    return url


def provision(url: str, data: Path, names: list[str], *, admin: str | None = None,
              transport: httpx.BaseTransport | None = None) -> dict[str, str]:
    """Provision every attendee (see the module's guarantees); {name: join code}."""
    try:
        return _provision(url, Path(data), names, admin, transport)
    except httpx.HTTPError as exc:
        raise WorkshopError(f"cannot reach the hub at {url}: {exc or type(exc).__name__}") from None


def _provision(url: str, data: Path, names: list[str], admin: str | None,
               transport: httpx.BaseTransport | None) -> dict[str, str]:
    admin = admin or tokenfile.admin_token(data)
    server, ca = kubectl_server(data, url)
    codes: dict[str, str] = {}
    with httpx.Client(base_url=url, headers={**tokenfile.bearer(admin), "User-Agent": "workshop (kube-kitchen)"},
                      transport=transport, timeout=30.0) as client:
        create = _creator(client)
        for path, body in cluster_objects():
            create(path, body)
        for name in names:
            for path, body in attendee_objects(name):
                create(path, body)
            token = tokenfile.token_of(data, name, (ATTENDEES,))
            roster.write_kubeconfig(data, name, server, token, ca)
            codes[name] = roster.join_code(data, name)
    return codes
