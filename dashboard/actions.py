"""The buttons on the objects, each one request (or a read then one write) to the hub, made by the
dashboard as its own client so it travels along the dashboard's spoke.

Guarantees:
- Every action returns a short human result or raises the hub's error (`control.errors`), never
  anything else; arguments are checked before any request (`ActionError`).
- `scale` takes either `delta` (the −/+ buttons) or `replicas` (a number, as `kubectl scale
  --replicas=N` sets it).
- Writes that depend on a read (scaling by a delta) carry the resourceVersion they read, so a
  concurrent change answers 409 Conflict instead of being overwritten; a number of replicas is
  set as `kubectl scale --replicas=N` sets it, a merge patch of the scale with no precondition (a
  status the controller wrote meanwhile is no conflict).
- Custom objects are reached by the apiVersion and plural their button carries; only custom
  groups (`custom.is_custom_group`) are accepted there.
- `stale-write` plays optimistic concurrency for real: it reads a Deployment, lets a second client
  (its own User-Agent, so its own spoke) change it, then PUTs the first read with the old
  resourceVersion; the hub's 409 answer (code, reason, message) and both resourceVersions are the
  result (`Answer`, shown as a refusal). It never retries: showing the refusal is the point.
- Spokes are stopped and started declaratively: the dashboard writes the desired state into the
  ConfigMap `kube-system/kubekitchen-spokes` (merge patch on `data`; a kubelet's key is
  `kubelet.<node>`, as ConfigMap keys cannot hold a "/"), the supervisor acts on it.
- `run-now` makes a Job from a CronJob exactly as `kubectl create job NAME --from=cronjob/X` does
  (the template's labels and spec, its annotations plus `cronjob.kubernetes.io/instantiate: manual`,
  a controller ownerReference to the CronJob), named "X-manual-" and a suffix the hub generates.
- `drain` starts `kubectl drain --ignore-daemonsets --delete-emptydir-data --force` in the
  background (`dashboard.drain`) and answers at once with an `Ongoing` line the page keeps asking
  after until the drain ends (in both wordings: the page shows the one of its mode).
"""

from __future__ import annotations

import re
from typing import Any, Awaitable, Callable

from django.utils.translation import gettext as _

from control import errors
from control.client.http import HubClient
from control.client.resources import (
    CONFIGMAPS, CRONJOBS, DEPLOYMENTS, JOBS, NODES, PODS, REPLICATIONCONTROLLERS, Resource,
)
from control.kinds.meta import new_controller_ref
from dashboard.custom import is_custom_group
from dashboard.drain import DRAINS, Progress
from dashboard.hub import SECOND_WRITER_AGENT, current_token
from control.kinds.spokes import spoke_key
from dashboard.presenters import CRASH_ANNOTATION, SPOKES_CONFIGMAP

NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
SPOKES = re.compile(r"^(scheduler|controller-manager|kubelet/[a-z0-9]([-a-z0-9.]*[a-z0-9])?)$")
API_VERSION = re.compile(r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?)/(v[0-9a-z]+)$")
PLURAL = re.compile(r"^[a-z][a-z0-9]{0,62}$")
CRASH_AFTER_SECONDS = "1"
SCALABLE = {"deployments": DEPLOYMENTS, "replicationcontrollers": REPLICATIONCONTROLLERS}  # the rows with −/+
MAX_ORDER_COUNT = 50
MAX_REPLICAS = 1000


class ActionError(ValueError):
    """The form did not name a valid target."""


class Ongoing(str):
    """The first line of an action that goes on in the background: the page asks after `node`'s drain."""

    def __new__(cls, progress: Progress) -> "Ongoing":
        line = super().__new__(cls, progress.line())
        line.node, line.ok, line.kitchen = progress.node, progress.ok, progress.line(kitchen=True)
        return line


class Answer(str):
    """An action's result line that reports a refusal it provoked on purpose (shown as an error)."""

    ok = False


def _name(form: dict[str, str], field: str = "name") -> str:
    value = (form.get(field) or "").strip()
    if not NAME.match(value):
        raise ActionError(f"{field}: {value!r} is not a valid name")
    return value


def form_int(form: dict[str, str], field: str, *, default: str = "", low: int | None = None,
             high: int | None = None) -> int:
    """A whole number from the form, within [low, high] when given; anything else is an ActionError."""
    try:
        value = int(form.get(field) or default)
    except ValueError:
        raise ActionError(f"{field} must be an integer") from None
    if low is not None and high is not None and not low <= value <= high:
        raise ActionError(f"{field} must be between {low} and {high}")
    return value


async def delete_pod(client: HubClient, form: dict[str, str]) -> str:
    namespace, name = _name(form, "namespace"), _name(form)
    await client.delete(PODS, name, namespace)
    return f"pod/{name} deleted"


async def crash_pod(client: HubClient, form: dict[str, str]) -> str:
    namespace, name = _name(form, "namespace"), _name(form)
    patch = {"metadata": {"annotations": {CRASH_ANNOTATION: CRASH_AFTER_SECONDS}}}
    await client.patch(PODS, name, patch, namespace)
    return f"pod/{name} annotated {CRASH_ANNOTATION}={CRASH_AFTER_SECONDS}"


async def cordon(client: HubClient, form: dict[str, str]) -> str:
    name = _name(form)
    await client.patch(NODES, name, {"spec": {"unschedulable": True}})
    return f"node/{name} cordoned"


async def uncordon(client: HubClient, form: dict[str, str]) -> str:
    name = _name(form)
    await client.patch(NODES, name, {"spec": {"unschedulable": None}})
    return f"node/{name} uncordoned"


async def scale(client: HubClient, form: dict[str, str]) -> str:
    namespace, name = _name(form, "namespace"), _name(form)
    wanted = form_int(form, "replicas", low=0, high=MAX_REPLICAS) if form.get("replicas") else None  # kubectl's --replicas
    delta = 0 if wanted is not None else form_int(form, "delta")
    resource = SCALABLE.get(form.get("kind") or "deployments")
    if resource is None:
        raise ActionError(f"kind: {form.get('kind')!r} cannot be scaled here")
    if wanted is not None:
        replicas, patch = wanted, {"spec": {"replicas": wanted}}
    else:
        current = await client.request("GET", resource.path(namespace, name, "scale"))
        replicas = max(0, int((current.get("spec") or {}).get("replicas") or 0) + delta)
        patch = {"metadata": {"resourceVersion": current["metadata"]["resourceVersion"]}, "spec": {"replicas": replicas}}
    await client.patch(resource, name, patch, namespace, subresource="scale")
    shown = resource.kind.lower() + (f".{resource.group}" if resource.group else "")  # as kubectl names it
    return f"{shown}/{name} scaled to {replicas}"


async def drain(client: HubClient, form: dict[str, str]) -> str:
    return Ongoing(DRAINS.start(client, _name(form)))


INSTANTIATE_ANNOTATION = "cronjob.kubernetes.io/instantiate"
MANUAL_SUFFIX = "-manual-"
JOB_NAME_LIMIT = 63  # a Job's name is a label value (job-name) on its pods


def job_from_cronjob(cronjob: dict[str, Any]) -> dict[str, Any]:
    """The Job `kubectl create job --from=cronjob/X` builds (its createJobFromCronJob), with a
    generated name, since a button has no name to give."""
    meta, template = cronjob["metadata"], (cronjob.get("spec") or {}).get("jobTemplate") or {}
    template_meta = template.get("metadata") or {}
    annotations = {INSTANTIATE_ANNOTATION: "manual", **(template_meta.get("annotations") or {})}
    prefix = meta["name"][:JOB_NAME_LIMIT - len(MANUAL_SUFFIX) - 5] + MANUAL_SUFFIX  # the hub adds 5 characters
    job_meta: dict[str, Any] = {"generateName": prefix, "namespace": meta.get("namespace"), "annotations": annotations,
                                "ownerReferences": [new_controller_ref(cronjob, api_version="batch/v1", kind="CronJob",
                                                                       block=None)]}
    if template_meta.get("labels"):
        job_meta["labels"] = template_meta["labels"]
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": job_meta, "spec": template.get("spec") or {}}


async def run_now(client: HubClient, form: dict[str, str]) -> str:
    namespace, name = _name(form, "namespace"), _name(form)
    cronjob = await client.get(CRONJOBS, name, namespace)
    created = await client.create(JOBS, job_from_cronjob(cronjob), namespace)
    return f"job.batch/{created['metadata']['name']} created"


SECOND_WRITER_ANNOTATION = "kubekitchen.dev/second-writer"


async def stale_write(client: HubClient, form: dict[str, str]) -> str:
    """GET a Deployment, let a second writer change it, PUT the first read: the hub answers 409."""
    namespace, name = _name(form, "namespace"), _name(form)
    first = await client.get(DEPLOYMENTS, name, namespace)
    old = first["metadata"]["resourceVersion"]
    second = HubClient(client.server, agent=SECOND_WRITER_AGENT, token=current_token())  # the same user
    try:
        patch = {"metadata": {"annotations": {SECOND_WRITER_ANNOTATION: f"changed after resourceVersion {old}"}}}
        changed = await second.patch(DEPLOYMENTS, name, patch, namespace)
    finally:
        await second.close()
    new = changed["metadata"]["resourceVersion"]
    try:
        await client.replace(DEPLOYMENTS, first)
    except errors.Conflict as exc:
        return Answer(_("PUT deployments/%(name)s with resourceVersion %(old)s (the store holds %(new)s): "
                        "%(code)s %(reason)s: %(message)s")
                      % {"name": name, "old": old, "new": new, "code": exc.code, "reason": exc.reason,
                         "message": exc.message})
    # Only a hub that ignored the resourceVersion gets here: say so plainly.
    return Answer(_("PUT deployments/%(name)s with resourceVersion %(old)s was accepted although the store "
                    "held %(new)s: no 409") % {"name": name, "old": old, "new": new})


async def set_spoke(client: HubClient, form: dict[str, str]) -> str:
    spoke, state = (form.get("spoke") or "").strip(), (form.get("state") or "").strip()
    if not SPOKES.match(spoke) or state not in ("running", "stopped"):
        raise ActionError(f"cannot set spoke {spoke!r} to {state!r}")
    namespace, name = SPOKES_CONFIGMAP
    data = {spoke_key(spoke): state}
    try:
        await client.patch(CONFIGMAPS, name, {"data": data}, namespace)
    except errors.NotFound:
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace},
                "data": data}
        await client.create(CONFIGMAPS, body, namespace)
    return f"{spoke}: {state}"


def _custom_resource(form: dict[str, str], kind: str = "") -> Resource:
    api_version, plural = (form.get("apiVersion") or "").strip(), (form.get("plural") or "").strip()
    match = API_VERSION.match(api_version)
    if not match or not is_custom_group(match.group(1)) or not PLURAL.match(plural):
        raise ActionError(f"{api_version!r} {plural!r} is not a custom resource")
    return Resource(match.group(1), match.group(3), plural, kind)


async def delete_custom(client: HubClient, form: dict[str, str]) -> str:
    resource = _custom_resource(form)
    namespace, name = _name(form, "namespace"), _name(form)
    await client.delete(resource, name, namespace)
    return f"{resource.plural}.{resource.group}/{name} deleted"


async def place_order(client: HubClient, form: dict[str, str]) -> str:
    resource = _custom_resource(form, "Order")
    namespace, menu = _name(form, "namespace"), _name(form, "menu")
    count = form_int(form, "count", low=1, high=MAX_ORDER_COUNT)
    body = {"apiVersion": resource.api_version, "kind": "Order",
            "metadata": {"generateName": f"{menu[:40]}-", "namespace": namespace},
            "spec": {"menu": menu, "count": count}}
    created = await client.create(resource, body, namespace)
    return f"{resource.plural}.{resource.group}/{created['metadata']['name']} created"


ACTIONS: dict[str, Callable[[HubClient, dict[str, str]], Awaitable[str]]] = {
    "delete-pod": delete_pod, "crash": crash_pod, "cordon": cordon, "uncordon": uncordon,
    "scale": scale, "stale-write": stale_write, "spoke": set_spoke, "delete-custom": delete_custom, "place-order": place_order,
    "drain": drain, "run-now": run_now,
}


def form_of(data: Any) -> dict[str, str]:
    return {key: str(data.get(key, "")) for key in data}
