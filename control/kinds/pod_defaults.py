"""What the API server fills into a pod and a pod template (upstream `pkg/apis/core/v1/defaults.go`).

Guarantees: both functions are idempotent and never raise on odd input (validation reports it).
- `pod_spec_defaults` (pods and pod templates alike): restartPolicy Always, dnsPolicy
  ClusterFirst, securityContext {}, terminationGracePeriodSeconds 30, schedulerName
  default-scheduler; per container (init, regular, ephemeral) imagePullPolicy by tag (Always for
  `:latest` or no tag, IfNotPresent otherwise), terminationMessagePath/Policy, resources {}, ports'
  protocol TCP, probes' timeout 1 / period 10 / success 1 / failure 3, HTTP probes and lifecycle
  handlers path "/" and scheme HTTP, fieldRef apiVersion v1; per volume: only a name means
  `emptyDir: {}`, secret/configMap/downwardAPI/projected defaultMode 0644 (420), hostPath type "",
  a projected service account token 3600 s.
- `pod_defaults` (pods only, as SetDefaults_Pod): the above, plus requests copied from limits where
  unset, enableServiceLinks true, host ports equal to container ports under hostNetwork, and the
  default not-ready/unreachable NoExecute tolerations (the DefaultTolerationSeconds admission).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

Obj = dict[str, Any]

DEFAULT_TOLERATIONS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
DEFAULT_MODE = 0o644  # 420: secret, configMap, downwardAPI and projected volumes
TOKEN_SECONDS = 3600
# Every volume source field; a volume with none of them is an emptyDir (SetDefaults_Volume).
VOLUME_SOURCES = (
    "awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "configMap", "csi", "downwardAPI",
    "emptyDir", "ephemeral", "fc", "flexVolume", "flocker", "gcePersistentDisk", "gitRepo", "glusterfs",
    "hostPath", "image", "iscsi", "nfs", "persistentVolumeClaim", "photonPersistentDisk", "portworxVolume",
    "projected", "quobyte", "rbd", "scaleIO", "secret", "storageos", "vsphereVolume",
)
PROBE_DEFAULTS = (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1), ("failureThreshold", 3))


@lru_cache(maxsize=1)
def _toleration_seconds() -> int:
    from control.client.timings import Timings

    return int(Timings.from_env().toleration_seconds)


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def image_tag(image: str) -> str:
    """The tag as the image reference parser reads it: "latest" when neither tag nor digest is given."""
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        return last.rsplit(":", 1)[1]
    return "" if digest else "latest"


def _http_get(action: Any) -> None:
    if isinstance(action, dict) and isinstance(action.get("httpGet"), dict):
        action["httpGet"].setdefault("path", "/")
        action["httpGet"].setdefault("scheme", "HTTP")


def _probe(probe: Any) -> None:
    if not isinstance(probe, dict):
        return
    for key, value in PROBE_DEFAULTS:
        if not probe.get(key):
            probe[key] = value
    _http_get(probe)


def _field_ref(source: Any) -> None:
    if isinstance(source, dict) and isinstance(source.get("fieldRef"), dict):
        source["fieldRef"].setdefault("apiVersion", "v1")


def _container_defaults(container: dict[str, Any]) -> None:
    image = container.get("image") if isinstance(container.get("image"), str) else ""
    container.setdefault("imagePullPolicy", "Always" if image_tag(image) == "latest" else "IfNotPresent")
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    container.setdefault("resources", {})
    for port in _dicts(container.get("ports")):
        port.setdefault("protocol", "TCP")
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        _probe(container.get(key))
    lifecycle = container.get("lifecycle")
    if isinstance(lifecycle, dict):
        for key in ("postStart", "preStop"):
            _http_get(lifecycle.get(key))
    for env in _dicts(container.get("env")):
        _field_ref(env.get("valueFrom"))


def _items_defaults(source: dict[str, Any]) -> None:
    for item in _dicts(source.get("items")):
        _field_ref(item)


def _volume_defaults(volume: dict[str, Any]) -> None:
    if not any(volume.get(key) is not None for key in VOLUME_SOURCES):
        volume["emptyDir"] = {}
    for key in ("secret", "configMap", "downwardAPI", "projected"):
        source = volume.get(key)
        if isinstance(source, dict):
            source.setdefault("defaultMode", DEFAULT_MODE)
            _items_defaults(source)
    host_path = volume.get("hostPath")
    if isinstance(host_path, dict):
        host_path.setdefault("type", "")
    projected = volume.get("projected")
    for projection in _dicts(projected.get("sources")) if isinstance(projected, dict) else []:
        token = projection.get("serviceAccountToken")
        if isinstance(token, dict):
            token.setdefault("expirationSeconds", TOKEN_SECONDS)
        if isinstance(projection.get("downwardAPI"), dict):
            _items_defaults(projection["downwardAPI"])


def pod_spec_defaults(spec: dict[str, Any]) -> None:
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in _dicts(spec.get(key)):
            _container_defaults(container)
    for volume in _dicts(spec.get("volumes")):
        _volume_defaults(volume)


def _requests_from_limits(container: dict[str, Any]) -> None:
    resources = container.get("resources")
    if not isinstance(resources, dict) or not isinstance(resources.get("limits"), dict):
        return
    requests = resources.setdefault("requests", {})
    if isinstance(requests, dict):
        for name, value in resources["limits"].items():
            requests.setdefault(name, value)


def pod_defaults(pod: Obj) -> None:
    spec = pod.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    pod_spec_defaults(spec)
    spec.setdefault("enableServiceLinks", True)
    for key in ("initContainers", "containers"):
        for container in _dicts(spec.get(key)):
            _requests_from_limits(container)
            if spec.get("hostNetwork") is True:
                for port in _dicts(container.get("ports")):
                    if not port.get("hostPort") and port.get("containerPort") is not None:
                        port["hostPort"] = port["containerPort"]
    tolerations = spec.setdefault("tolerations", [])
    if isinstance(tolerations, list):
        present = {t.get("key") for t in _dicts(tolerations)}
        for key in DEFAULT_TOLERATIONS:
            if key not in present:
                tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                                    "tolerationSeconds": _toleration_seconds()})
