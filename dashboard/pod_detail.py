"""A pod's detail, as a small htmx partial: what `kubectl describe pod` would tell a beginner first.

Guarantees:
- `describe(pod, events)` is a pure function: for each container (init containers first, marked)
  its image, its state as kubectl words it (Running, Waiting: ImagePullBackOff, Terminated:
  OOMKilled (exit code 137)), ready, restarts, the NAMES of its environment variables with where
  each comes from (a ConfigMap's or a Secret's key, a field, a resource) and never a value — not
  even a literal one — and its mounts with the kind and name of each volume's source; the pod's
  STATUS as `kubectl get pods` prints it; and its core/v1 Events, newest first.
- The view reads the pod and its Events through the hub as the dashboard's client (so it shows on
  the picture), the Events by kubectl describe's field selector; a pod the hub does not have is a
  404 partial with the hub's message, never a 500.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from control import errors
from control.client.resources import EVENTS, PODS
from control.kinds.meta import metadata as _meta
from control.kinds.pods import pod_display_status, pod_restarts
from dashboard import hub
from dashboard.login import login_required
from dashboard.views import localized

Obj = dict[str, Any]

# A volume's source, by the field that names it: (kind shown, the field holding its name).
VOLUME_SOURCES = (("configMap", "ConfigMap", "name"), ("secret", "Secret", "secretName"),
                  ("persistentVolumeClaim", "PersistentVolumeClaim", "claimName"),
                  ("hostPath", "hostPath", "path"), ("emptyDir", "emptyDir", ""),
                  ("downwardAPI", "downwardAPI", ""), ("projected", "projected", ""))


def _volume_source(volume: Obj) -> tuple[str, str]:
    """(kind, name) of a volume's source: ("ConfigMap", "settings"), ("emptyDir", ""), a projected
    volume's sources listed as its name ("ConfigMap/a, Secret/b, serviceAccountToken")."""
    for field, kind, name_field in VOLUME_SOURCES:
        source = volume.get(field)
        if source is None:
            continue
        if field == "projected":
            parts = []
            for item in (source or {}).get("sources") or []:
                for sub, sub_kind in (("configMap", "ConfigMap"), ("secret", "Secret")):
                    if isinstance(item.get(sub), dict):
                        parts.append(f"{sub_kind}/{item[sub].get('name', '')}")
                for sub in ("serviceAccountToken", "downwardAPI", "clusterTrustBundle"):
                    if sub in item:
                        parts.append(sub)
            return kind, ", ".join(parts)
        return kind, str((source or {}).get(name_field, "")) if name_field else ""
    other = next((k for k in volume if k != "name"), "")
    return other, ""


def _env_source(env: Obj) -> str:
    """Where a variable's value comes from, never the value: "Secret db/password", "" for a literal."""
    source = env.get("valueFrom") or {}
    for field, kind in (("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")):
        if isinstance(source.get(field), dict):
            ref = source[field]
            return f"{kind} {ref.get('name', '')}/{ref.get('key', '')}"
    if isinstance(source.get("fieldRef"), dict):
        return f"field {source['fieldRef'].get('fieldPath', '')}"
    if isinstance(source.get("resourceFieldRef"), dict):
        return f"resource {source['resourceFieldRef'].get('resource', '')}"
    return ""


def _env_from(source: Obj) -> str:
    for field, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
        if isinstance(source.get(field), dict):
            prefix = f" ({source['prefix']}…)" if source.get("prefix") else ""
            return f"{kind} {source[field].get('name', '')}{prefix}"
    return ""


def state_text(status: Obj | None) -> tuple[str, str]:
    """(state, reason) of a container as describe prints its State: ("Running", ""),
    ("Waiting", "CrashLoopBackOff"), ("Terminated", "OOMKilled (exit code 137)")."""
    state = (status or {}).get("state") or {}
    if "running" in state:
        return "Running", ""
    if "terminated" in state:
        terminated = state["terminated"] or {}
        return "Terminated", f"{terminated.get('reason') or 'Error'} (exit code {terminated.get('exitCode', 0)})"
    if "waiting" in state:
        return "Waiting", str((state["waiting"] or {}).get("reason") or "")
    return "Waiting", ""


def _container(container: Obj, status: Obj | None, volumes: dict[str, tuple[str, str]], init: bool) -> Obj:
    state, reason = state_text(status)
    env = [{"name": str(e.get("name", "")), "source": _env_source(e)}
           for e in container.get("env") or [] if isinstance(e, dict)]
    mounts = []
    for mount in container.get("volumeMounts") or []:
        if not isinstance(mount, dict):
            continue
        kind, name = volumes.get(str(mount.get("name", "")), ("", ""))
        mounts.append({"path": str(mount.get("mountPath", "")), "volume": str(mount.get("name", "")),
                       "kind": kind, "source": name, "readOnly": bool(mount.get("readOnly")),
                       "subPath": str(mount.get("subPath", ""))})
    return {"name": str(container.get("name", "")), "image": str(container.get("image", "")), "init": init,
            "state": state, "reason": reason, "ready": bool((status or {}).get("ready")),
            "succeeded": state == "Terminated" and ((status or {}).get("state") or {}).get("terminated", {}).get("exitCode") == 0,
            "restarts": int((status or {}).get("restartCount") or 0), "env": env,
            "envFrom": [text for text in (_env_from(s) for s in container.get("envFrom") or [] if isinstance(s, dict)) if text],
            "mounts": mounts}


def _event(event: Obj) -> Obj:
    series = event.get("series") or {}
    return {"type": event.get("type") or "Normal", "reason": event.get("reason") or "",
            "message": event.get("message") or "", "count": int(event.get("count") or series.get("count") or 1),
            "last": event.get("lastTimestamp") or series.get("lastObservedTime") or event.get("eventTime")
            or _meta(event).get("creationTimestamp") or "",
            "rv": int(_meta(event).get("resourceVersion") or 0)}


def describe(pod: Obj, events: list[Obj]) -> Obj:
    """The detail of one pod (see the module's guarantees)."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    volumes = {str(v.get("name", "")): _volume_source(v) for v in spec.get("volumes") or [] if isinstance(v, dict)}
    statuses = {str(s.get("name", "")): s for s in status.get("containerStatuses") or [] if isinstance(s, dict)}
    init_statuses = {str(s.get("name", "")): s for s in status.get("initContainerStatuses") or [] if isinstance(s, dict)}
    containers = [_container(c, init_statuses.get(str(c.get("name", ""))), volumes, True)
                  for c in spec.get("initContainers") or [] if isinstance(c, dict)]
    containers += [_container(c, statuses.get(str(c.get("name", ""))), volumes, False)
                   for c in spec.get("containers") or [] if isinstance(c, dict)]
    meta = _meta(pod)
    listed = sorted((_event(e) for e in events if isinstance(e, dict)), key=lambda e: (e["last"], e["rv"]), reverse=True)
    running = status.get("phase") == "Running" and not meta.get("deletionTimestamp")
    return {"ns": meta.get("namespace", ""), "name": meta.get("name", ""), "status": pod_display_status(pod),
            "restarts": pod_restarts(pod), "node": spec.get("nodeName", ""), "ip": status.get("podIP", ""),
            "containers": containers, "events": listed, "running": running,
            "shellContainer": next((c["name"] for c in containers if not c["init"]), "")}


@require_GET
@localized
@login_required
async def pod_detail(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    try:
        async with hub.client_for(hub.scope_of(request)) as client:
            pod = await client.get(PODS, name, namespace)
            selector = f"involvedObject.kind=Pod,involvedObject.name={name},involvedObject.namespace={namespace}"
            events = (await client.list(EVENTS, namespace, field_selector=selector)).get("items") or []
    except errors.ApiError as exc:
        return render(request, "dashboard/_pod_detail.html", {"message": exc.message}, status=exc.code)
    return render(request, "dashboard/_pod_detail.html", {"pod": describe(pod, events)})
