"""The kubelet's image manager (upstream's pkg/kubelet/images): before a container starts, make sure
its image is on the node, pulling it from the simulated registry (`images`; what exists is
`registry.resolve`'s rule) as its imagePullPolicy says, with imagePullSecrets for private images
and a back-off after a failure.

Guarantees:
- `ensure(pod, container, first_start, now)` answers a hold for the container (None: the image is
  there and it may start), the Events to tell now, and when to look again. It is level-triggered:
  asked again at the same moment it answers the same hold and tells nothing new.
- Policy as upstream: Never starts only with an image already on the node (else
  ErrImageNeverPull); IfNotPresent pulls once per node (the node keeps a "pulled" set); Always pulls
  at every start. A reference that cannot be parsed is InvalidImageName.
- A failed pull is ErrImagePull (containerd's message) and starts a back-off per (pod uid, image):
  10 s doubling to 300 s (upstream's flowcontrol.Backoff; reset after 2 x the cap without a
  failure). While it lasts the container shows ImagePullBackOff (from half-way through, so
  `kubectl get -w` shows ErrImagePull first) and nothing is pulled; `kubectl set image` to another
  image is a new key: it is pulled at once.
- A successful pull takes `pull_seconds` (ContainerCreating meanwhile, first start only) and is
  told as Pulling + Pulled ("Successfully pulled image ... Image size: N bytes.") when the
  container starts (`started_events`), so nothing is told for a start that is later rolled back.
- `restart_changed` restarts a running container whose image the spec changed, at once, as the
  kubelet does for a changed container definition (Killing "definition changed").
- The catalogue is the built-in one plus the ConfigMap kube-system/kubekitchen-images, read from
  the kubelet's ConfigMap cache at every pull.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from control.clock import Clock
from control.kubelet.config import BackoffPolicy
from control.kubelet.containers import Container, Happening, go_duration
from control.kubelet.images import (CONFIGMAP_NAME, CONFIGMAP_NAMESPACE, DOCKER_HUB, Catalogue, InvalidImage,
                                    Reference, builtin, configmap_entries, default_pull_policy, parse_reference)
from control.kubelet.registry import resolve
from control.kubelet.initcontainers import completed, init_specs, sidecars
from control.kubelet.podstate import PodRecord

Obj = dict[str, Any]
Event = tuple[str, str, str]
Hold = tuple[str, str]


class Sources(Protocol):
    def configmap(self, namespace: str, name: str) -> Obj | None: ...

    def secret(self, namespace: str, name: str) -> Obj | None: ...


@dataclass
class Ensured:
    hold: Hold | None = None
    events: list[Event] = field(default_factory=list)
    wake: float | None = None


@dataclass
class _Backoff:
    delay: float
    updated: float
    error: str


def registry_key(server: str) -> str:
    """A docker config `auths` key as a registry host: `https://index.docker.io/v1/` -> docker.io."""
    host = server.strip().lower().removeprefix("https://").removeprefix("http://").split("/", 1)[0]
    return DOCKER_HUB if host in ("index.docker.io", "registry-1.docker.io", "docker.io") else host


def secret_registries(secret: Obj) -> set[str]:
    """The registries a docker-registry Secret (dockerconfigjson or dockercfg) has credentials for."""
    data = secret.get("data") or {}
    for key, nested in ((".dockerconfigjson", True), (".dockercfg", False)):
        raw = data.get(key)
        if not isinstance(raw, str):
            continue
        try:
            parsed = json.loads(base64.b64decode(raw))
        except (binascii.Error, ValueError):
            return set()
        auths = parsed.get("auths") if nested and isinstance(parsed, dict) else parsed
        return {registry_key(server) for server in auths} if isinstance(auths, dict) else set()
    return set()


def not_found(ref: Reference) -> str:
    return (f'rpc error: code = NotFound desc = failed to pull and unpack image "{ref}": failed to resolve '
            f'reference "{ref}": {ref}: not found')


def access_denied(ref: Reference) -> str:
    return (f'rpc error: code = Unknown desc = failed to pull and unpack image "{ref}": failed to resolve '
            f'reference "{ref}": pull access denied, repository does not exist or may require authorization: '
            f'server message: insufficient_scope: authorization failed')


def no_such_host(ref: Reference) -> str:
    return (f'rpc error: code = Unknown desc = failed to pull and unpack image "{ref}": failed to resolve '
            f'reference "{ref}": failed to do request: Head "https://{ref.domain}/v2/{ref.path}/manifests/'
            f'{ref.digest or ref.tag}": dial tcp: lookup {ref.domain}: no such host')


def pull_error(catalogue: Catalogue, ref: Reference, registries: set[str]) -> str | None:
    """Why pulling `ref` fails (containerd's message), or None when it succeeds."""
    if not catalogue.knows_registry(ref.domain):
        return no_such_host(ref)
    found = resolve(catalogue, ref)
    if found is not None and found.private and ref.domain not in registries:
        return access_denied(ref)
    return None if found is not None else not_found(ref)


class ImageManager:
    def __init__(self, clock: Clock, sources: Sources | None = None, *, backoff: BackoffPolicy | None = None,
                 pull_seconds: float = 0.0):
        self.clock, self.sources = clock, sources
        self.backoff = backoff or BackoffPolicy(10.0, 300.0)
        self.pull_seconds = max(0.0, pull_seconds)
        self.pulled: set[str] = set()  # normalised references on this node
        self.failures: dict[tuple[str, str], _Backoff] = {}  # by (pod uid, image)
        self.pulling: dict[tuple[str, str], tuple[str, float, float]] = {}  # (uid, container) -> (image, from, done)
        self.announced: dict[tuple[str, str], tuple[str, list[Event]]] = {}  # (uid, container) -> (image, events)
        self.untold: dict[tuple[str, str], list[Event]] = {}  # (uid, container) -> Events kept until its turn

    def catalogue(self) -> Catalogue:
        found = self.sources.configmap(CONFIGMAP_NAMESPACE, CONFIGMAP_NAME) if self.sources else None
        if not found:
            return builtin()
        return builtin().with_entries(configmap_entries(found)[0])

    def _registries(self, pod: Obj) -> tuple[set[str], list[str]]:
        """(registries the pod's pull secrets name, the secrets that could not be had)."""
        meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        registries, missing = set(), []
        for entry in spec.get("imagePullSecrets") or []:
            name = entry.get("name") if isinstance(entry, dict) else None
            if not name:
                continue
            secret = self.sources.secret(meta.get("namespace") or "", name) if self.sources else None
            if secret is None:
                missing.append(name)
            else:
                registries |= secret_registries(secret)
        return registries, missing

    def ensure(self, pod: Obj, container: Obj, first_start: bool, now: float) -> Ensured:
        uid = (pod.get("metadata") or {}).get("uid") or ""
        name, image = container.get("name") or "", str(container.get("image") or "")
        try:
            ref = parse_reference(image)
        except InvalidImage as exc:
            return Ensured(("InvalidImageName", str(exc)), [("Warning", "InspectFailed", str(exc)),
                                                            ("Warning", "Failed", "Error: InvalidImageName")])
        policy = container.get("imagePullPolicy") or default_pull_policy(image)
        present = str(ref) in self.pulled
        announced = self.announced.get((uid, name))
        if announced is not None and announced[0] == image:
            return Ensured()  # decided already; told when the container starts
        if policy == "Never" and not present:
            message = f'Container image "{image}" is not present with pull policy of Never'
            return Ensured(("ErrImageNeverPull", message), [("Warning", "ErrImageNeverPull", message),
                                                            ("Warning", "Failed", "Error: ErrImageNeverPull")])
        if present and policy != "Always":
            self.announced[(uid, name)] = (image, [("Normal", "Pulled",
                                                    f'Container image "{image}" already present on machine')])
            return Ensured()
        return self._pull(pod, uid, name, image, ref, first_start, now)

    def _pull(self, pod: Obj, uid: str, name: str, image: str, ref: Reference, first_start: bool,
              now: float) -> Ensured:
        failed = self.failures.get((uid, image))
        if failed is not None and now - failed.updated < failed.delay:
            show_backoff_at = failed.updated + failed.delay / 2
            end = failed.updated + failed.delay
            if now < show_backoff_at:
                return Ensured(("ErrImagePull", failed.error), wake=show_backoff_at)
            return Ensured(("ImagePullBackOff", f'Back-off pulling image "{image}": ErrImagePull: {failed.error}'),
                           [("Normal", "BackOff", f'Back-off pulling image "{image}"'),
                            ("Warning", "Failed", "Error: ImagePullBackOff")], wake=end)
        pulling = self.pulling.get((uid, name))
        if pulling is not None and pulling[0] == image:
            began, done = pulling[1], pulling[2]
            if now < done:
                return Ensured(("ContainerCreating", ""), wake=done)
            self._succeeded(uid, name, image, ref, done - began)
            return Ensured()
        registries, missing = self._registries(pod)
        said: list[Event] = []
        if missing:
            said.append(("Warning", "FailedToRetrieveImagePullSecret",
                         f"Unable to retrieve some image pull secrets ({', '.join(missing)}); attempting to pull "
                         "the image may not succeed."))
        error = pull_error(self.catalogue(), ref, registries)
        if error is not None:
            delay = self.backoff.base if failed is None or now - failed.updated > 2 * self.backoff.cap \
                else min(self.backoff.cap, failed.delay * 2)
            self.failures[(uid, image)] = _Backoff(delay, now, error)
            said += [("Normal", "Pulling", f'Pulling image "{image}"'),
                     ("Warning", "Failed", f'Failed to pull image "{image}": {error}'),
                     ("Warning", "Failed", "Error: ErrImagePull")]
            return Ensured(("ErrImagePull", error), said, wake=now + delay / 2)
        self.failures.pop((uid, image), None)
        if first_start and self.pull_seconds > 0:
            self.pulling[(uid, name)] = (image, now, now + self.pull_seconds)
            return Ensured(("ContainerCreating", ""), said + [("Normal", "Pulling", f'Pulling image "{image}"')],
                           wake=now + self.pull_seconds)
        self._succeeded(uid, name, image, ref, 0.0, pulling_told=False)
        return Ensured(None, said)

    def _succeeded(self, uid: str, name: str, image: str, ref: Reference, took: float,
                   pulling_told: bool = True) -> None:
        self.pulling.pop((uid, name), None)
        self.pulled.add(str(ref))
        size = resolve(self.catalogue(), ref) or builtin().find(ref)
        spent = go_duration(took) if took >= 1 or took == 0 else f"{took * 1000:g}ms"
        events: list[Event] = [] if pulling_told else [("Normal", "Pulling", f'Pulling image "{image}"')]
        events.append(("Normal", "Pulled", f'Successfully pulled image "{image}" in {spent} ({spent} including '
                       f'waiting). Image size: {size.size if size else 0} bytes.'))
        self.announced[(uid, name)] = (image, events)

    def started_events(self, uid: str, name: str, image: str) -> list[Event]:
        """The Pulling/Pulled Events of a container that just started (told once)."""
        announced = self.announced.pop((uid, name), None)
        if announced is None or announced[0] != image:
            return [("Normal", "Pulled", f'Container image "{image}" already present on machine')]
        return announced[1]

    def forget(self, uid: str) -> None:
        self.failures = {k: v for k, v in self.failures.items() if k[0] != uid}
        self.pulling = {k: v for k, v in self.pulling.items() if k[0] != uid}
        self.announced = {k: v for k, v in self.announced.items() if k[0] != uid}
        self.untold = {k: v for k, v in self.untold.items() if k[0] != uid}


def restart_changed(pod: Obj, record: PodRecord, now: float) -> tuple[PodRecord, tuple[Happening, ...]]:
    """Containers whose image the pod's spec changed (`kubectl set image`): a running one is killed
    and started again at once with the new image, whatever the restartPolicy (upstream's
    computePodActions: "Container definition changed"); one not running just takes the new image."""
    images = {c.get("name"): c.get("image") for c in (pod.get("spec") or {}).get("containers") or []
              if isinstance(c, dict)}
    containers, happenings = [], []
    for c in record.containers:
        image = images.get(c.name)
        if not image or image == c.image:
            containers.append(c)
            continue
        if c.state == "running" and c.current is not None:
            ended = replace(c.current, finished_at=now, exit_code=0, stopped=True)
            c = replace(c, current=None, previous=ended, restart_at=now)
            happenings.append(Happening("changed", c.name, now, run=ended.number))
        containers.append(replace(c, image=image))
    if not happenings and all(a is b for a, b in zip(containers, record.containers)):
        return record, ()
    return replace(record, containers=tuple(containers)), tuple(happenings)


def waiting_turn(pod: Obj, containers: tuple[Container, ...]) -> set[str]:
    """The containers whose turn to start has not come: an init container before them has not
    completed (a sidecar: not started). Their images are pulled ahead, but a failure is told only
    when their turn comes (the kubelet shows PodInitializing until then)."""
    side, names = sidecars(pod), [c.get("name") for c in init_specs(pod)]
    by_name = {c.name: c for c in containers}
    waiting: set[str] = set()
    blocked = False
    for name in names:
        found = by_name.get(str(name))
        if blocked:
            waiting.add(str(name))
        elif found is None or not (completed(found) or (name in side and found.last_run is not None)):
            blocked = True
    if blocked:
        waiting |= {c.name for c in containers if c.name not in names}
    return waiting
