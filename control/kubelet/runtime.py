"""The kubelet's container runtime side of a pod: before a container starts, its volumes are set up
and its environment made; while it runs, its files and its environment are what exec sees.

Guarantees:
- `prepare(pod, record)` (called by the pod worker at every sync, before stepping the pod) fetches
  the ServiceAccount tokens the pod's projected volumes need (TokenRequest through the hub, bound
  to the pod, refreshed at 80 % of their lifetime) and its claims (GET through the hub, as the
  kubelet does), syncs the pod's volumes, and makes the config of every container about to start.
  It answers the holds: `ContainerCreating` for every container while a volume is not set up,
  `CreateContainerConfigError` (Kubernetes' message) for a container whose env cannot be made, and
  the Events to tell (FailedMount, Failed, InvalidEnvironmentVariableNames) once per new trouble.
  A container due to start first has its image ensured (`pulls`: ErrImagePull, ImagePullBackOff,
  ErrImageNeverPull, InvalidImageName, or ContainerCreating while a pull takes its time).
- A run's config (env, command, args) is made once, just before it starts, and kept for the run:
  a later ConfigMap change does not reach a running container's env. A run's files are made when
  it starts (or at the first exec if that comes first) and dropped when the run is no more.
- ConfigMaps, Secrets and Services are read from the kubelet's informer caches, never the database.
- A run's main command has the network exec has (`network(namespace, source IP)`, the kubelet's
  `NetworkHandle`; a hostNetwork pod's traffic is its node's own): `begin` replays a command that
  names a network tool as soon as its run starts, and from then on it is stepped live (`process`);
  any other command is replayed only when something reads it, and costs nothing on the network
  unless it reaches it. `end` (the run is over) stops its timers.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from control import errors
from control.client.informer import Cache
from control.client.resources import PERSISTENTVOLUMECLAIMS, SERVICEACCOUNTS
from control.clock import Clock
from control.kubelet.containers import Container, next_run_id, start_due
from control.kubelet.envvars import ConfigError, ContainerEnv, NodeFacts, resolve
from control.kubelet.filesystem import Filesystem, pod_hostname
from control.kubelet.process import MainProcess, Output, names_network
from control.kubelet.config import BackoffPolicy
from control.kubelet.projection import MountError, Tokens, token_sources
from control.kubelet.loads import Loads
from control.kubelet.pulls import ImageManager, waiting_turn
from control.kubelet.volumes import Claims, VolumeManager, claim_volumes

log = logging.getLogger(__name__)
Obj = dict[str, Any]
Event = tuple[str, str, str]  # (type, reason, message)
REFRESH_AT = 0.8  # upstream's token manager renews a token at 80 % of its lifetime
MAX_TOKEN_RETRY = 60.0  # seconds between failing TokenRequests at most


class CacheSources:
    """ConfigMaps and Secrets from the kubelet's informer caches (None: not there)."""

    def __init__(self, configmaps: Cache | None = None, secrets: Cache | None = None, services: Cache | None = None):
        self.configmaps, self.secrets, self.service_cache = configmaps, secrets, services

    def configmap(self, namespace: str, name: str) -> Obj | None:
        return self.configmaps.get(f"{namespace}/{name}") if self.configmaps is not None else None

    def secret(self, namespace: str, name: str) -> Obj | None:
        return self.secrets.get(f"{namespace}/{name}") if self.secrets is not None else None

    def services(self, namespace: str) -> list[Obj]:
        return self.service_cache.by_index("namespace", namespace) if self.service_cache is not None else []


@dataclass
class Preparation:
    holds: dict[str, tuple[str, str]] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    wake: float | None = None  # when a token is due for renewal
    retry: bool = False  # something is missing that no watch will announce: look again after the sync period


class TokenCache:
    """ServiceAccount tokens for pods' projected volumes, by (pod uid, audience, lifetime)."""

    def __init__(self, client: Any, clock: Clock):
        self.client, self.clock = client, clock
        self.tokens: dict[tuple[str, str, int], tuple[str, float]] = {}  # -> (token, renew at)
        self.failures: dict[tuple[str, str, int], str] = {}  # -> why the last request failed
        self.retry_at: dict[tuple[str, str, int], tuple[int, float]] = {}  # -> (failures in a row, next try)

    async def ensure(self, pod: Obj) -> None:
        meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        uid, now = meta.get("uid") or "", self.clock.now()
        for audience, seconds in token_sources(pod):
            key = (uid, audience, seconds)
            held = self.tokens.get(key)
            if held is not None and now < held[1]:
                continue
            failed, next_try = self.retry_at.get(key, (0, 0.0))
            if now < next_try:
                continue  # a failing request is retried with back-off (1 s doubling to a minute), not at every sync
            body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                    "spec": {"audiences": [audience] if audience else [], "expirationSeconds": seconds,
                             "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": meta.get("name"),
                                                "uid": uid}}}
            account = spec.get("serviceAccountName") or "default"
            try:
                answer = await self.client.request("POST", SERVICEACCOUNTS.path(meta.get("namespace"), account, "token"),
                                                   body=body)
                token = str(((answer or {}).get("status") or {}).get("token") or "")
            except errors.ApiError as exc:
                log.info("token for pod %s/%s: %s", meta.get("namespace"), meta.get("name"), exc)
                self.failures[key] = str(exc)
                self.retry_at[key] = (failed + 1, now + min(MAX_TOKEN_RETRY, 2.0 ** failed))
                continue  # the volume waits (a first token) or keeps the one it has
            if token:
                self.tokens[key] = (token, now + REFRESH_AT * seconds)
                self.failures.pop(key, None)
                self.retry_at.pop(key, None)

    def missing(self, uid: str) -> bool:
        """Whether a token of the pod could not be had (the kubelet tries again at its next sync)."""
        return any(key[0] == uid for key in self.failures)

    def lookup(self, uid: str) -> Tokens:
        def token(audience: str, seconds: int) -> str:
            held = self.tokens.get((uid, audience, seconds))
            if held is None:
                raise MountError(f"failed to fetch token: {self.failures.get((uid, audience, seconds), 'not requested')}")
            return held[0]
        return token

    def renew_at(self, uid: str) -> float | None:
        """When a token of the pod is next due for renewal (after any back-off of a failed try)."""
        moments = [max(at, self.retry_at.get(key, (0, 0.0))[1]) for key, (_, at) in self.tokens.items()
                   if key[0] == uid]
        return min(moments) if moments else None

    def forget(self, uid: str) -> None:
        self.tokens = {k: v for k, v in self.tokens.items() if k[0] != uid}
        self.failures = {k: v for k, v in self.failures.items() if k[0] != uid}
        self.retry_at = {k: v for k, v in self.retry_at.items() if k[0] != uid}


def source_ip(pod: Obj, pod_ip: str) -> str:
    """The address a pod's own traffic is sent from ("" for a hostNetwork pod: its node's own)."""
    return "" if (pod.get("spec") or {}).get("hostNetwork") else pod_ip


def _containers(pod: Obj) -> dict[str, Obj]:
    """The pod's containers by name, init containers too (their names are unique across both)."""
    spec = pod.get("spec") or {}
    return {c.get("name", ""): c for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])
            if isinstance(c, dict)}


class Runtime:
    def __init__(self, client: Any, *, clock: Clock, configmaps: Cache | None = None, secrets: Cache | None = None,
                 services: Cache | None = None, data_dir: Path | None = None, facts: NodeFacts | None = None,
                 image_backoff: BackoffPolicy | None = None, pull_seconds: float = 0.0,
                 network: Callable[[str, str], Any] | None = None):
        self.client, self.clock = client, clock
        self.network = network  # (namespace, source IP) -> the shell's network (None: no network)
        self.sources = CacheSources(configmaps, secrets, services)
        self.images = ImageManager(clock, self.sources, backoff=image_backoff, pull_seconds=pull_seconds)
        self.loads = Loads()  # what exec'd `stress` holds, by container run ID
        self.volumes = VolumeManager(data_dir)
        self.tokens = TokenCache(client, clock)
        self.facts = facts or NodeFacts()
        self.configs: dict[str, ContainerEnv] = {}  # by container run ID
        self.sandboxes: dict[str, Filesystem] = {}  # by container run ID
        self.processes: dict[str, MainProcess] = {}  # by container run ID: its main command, replayed
        self.outputs: dict[str, Output] = {}  # by container run ID: what it printed (kept after the run, for --previous)
        self.troubles: dict[str, set[str]] = {}  # by pod uid: the FailedMount messages told last

    def facts_for(self, host_ip: str, pod_ip: str) -> NodeFacts:
        return NodeFacts(host_ip=host_ip, pod_ip=pod_ip, cpu=self.facts.cpu, memory=self.facts.memory,
                         ephemeral_storage=self.facts.ephemeral_storage)

    async def _claims(self, pod: Obj) -> Claims:
        meta = pod.get("metadata") or {}
        namespace, uid, out = meta.get("namespace") or "", meta.get("uid") or "", {}
        for volume, claim in claim_volumes(pod).items():
            if self.volumes.mounted(uid, volume):
                continue
            prefix = f"error processing PVC {namespace}/{claim}: "
            try:
                found = await self.client.get(PERSISTENTVOLUMECLAIMS, claim, namespace)
            except errors.NotFound:
                out[claim] = MountError(prefix + f'failed to fetch PVC from API server: persistentvolumeclaims '
                                                 f'"{claim}" not found')
                continue
            except errors.ApiError as exc:
                out[claim] = MountError(prefix + str(exc))
                continue
            bound = str((found.get("spec") or {}).get("volumeName") or "")
            if not bound or (found.get("status") or {}).get("phase") not in (None, "Bound"):
                out[claim] = MountError(prefix + "PVC is not bound")
            else:
                out[claim] = bound
        return out

    async def prepare(self, pod: Obj, containers: tuple[Container, ...], host_ip: str, pod_ip: str) -> Preparation:
        meta = pod.get("metadata") or {}
        uid, now = meta.get("uid") or "", self.clock.now()
        facts = self.facts_for(host_ip, pod_ip)
        await self.tokens.ensure(pod)
        failures = self.volumes.sync(pod, self.sources, facts, self.tokens.lookup(uid), await self._claims(pod))
        out = Preparation(wake=self.tokens.renew_at(uid), retry=bool(failures) or self.tokens.missing(uid))
        told, self.troubles[uid] = self.troubles.get(uid, set()), set(failures)
        out.events += [("Warning", "FailedMount", message) for message in failures if message not in told]
        specs = _containers(pod)
        waiting = waiting_turn(pod, containers)  # behind an init container: told when their turn comes
        for c in containers:
            if c.state not in ("creating", "backoff"):
                continue
            if failures and c.last_run is None:
                out.holds[c.name] = ("ContainerCreating", "")
                continue
            if start_due(c, now):  # the image first, as upstream's startContainer does (`pulls`)
                ensured = self.images.ensure(pod, specs.get(c.name) or {}, c.last_run is None, now)
                fresh = ensured.events if ensured.hold is None or ensured.hold != c.hold else []
                if c.name in waiting:  # told when its turn comes
                    self.images.untold[(uid, c.name)] = self.images.untold.get((uid, c.name), []) + fresh
                else:
                    out.events += self.images.untold.pop((uid, c.name), []) + fresh
                if ensured.wake is not None:
                    out.wake = ensured.wake if out.wake is None else min(out.wake, ensured.wake)
                if ensured.hold is not None:
                    out.holds[c.name] = ensured.hold
                    continue
            try:
                made = resolve(pod, specs.get(c.name) or {}, self.sources, facts)
            except ConfigError as exc:
                if start_due(c, now):
                    out.holds[c.name] = ("CreateContainerConfigError", str(exc))
                    if c.hold != out.holds[c.name]:
                        out.events.append(("Warning", "Failed", f"Error: {exc}"))
                continue
            self.configs[next_run_id(c)] = made
            if start_due(c, now):
                out.events += [("Warning", "InvalidEnvironmentVariableNames", text) for text in made.skipped]
        return out

    def config(self, pod: Obj, name: str, run_id: str, host_ip: str = "", pod_ip: str = "") -> ContainerEnv:
        """The config a run started with (made now if the kubelet has none: adopted after a restart)."""
        made = self.configs.get(run_id)
        if made is None:
            try:
                made = resolve(pod, _containers(pod).get(name) or {}, self.sources, self.facts_for(host_ip, pod_ip))
            except ConfigError:
                made = ContainerEnv({}, (), ())
            self.configs[run_id] = made
        return made

    def files(self, pod: Obj, name: str, run_id: str, pod_ip: str) -> Filesystem:
        """A run's files: made with its mounts the first time they are asked for."""
        fs = self.sandboxes.get(run_id)
        if fs is None:
            made = self.configs.get(run_id)
            fs = self.sandboxes[run_id] = self.volumes.filesystem(pod, _containers(pod).get(name) or {}, pod_ip,
                                                                  made.env if made else None)
        return fs

    def replayed(self, pod: Obj, name: str, run_id: str, pod_ip: str, started_at: float, until: float) -> Filesystem:
        """A run's files with its main command replayed up to `until` (`process`): what a probe or
        an exec sees at that moment."""
        fs = self.files(pod, name, run_id, pod_ip)
        process = self.processes.get(run_id)
        if process is None:
            made = self.configs.get(run_id)
            argv = list(made.command + made.args) if made else []
            network = None
            if self.network is not None:
                network = self.network(str((pod.get("metadata") or {}).get("namespace") or ""), source_ip(pod, pod_ip))
            process = self.processes[run_id] = MainProcess(fs, argv, dict(made.env) if made else {},
                                                           pod_hostname(pod)[0], started_at, network=network,
                                                           host=self.clock)
            self.outputs[run_id] = process.output
        process.advance(until)
        return fs

    def begin(self, pod: Obj, name: str, run_id: str, pod_ip: str, started_at: float,
              finished_at: float | None = None) -> None:
        """A run just started: a command that names a network tool is replayed now, and live from
        then on (until its run ends: `end`; one that already ended is replayed to its end)."""
        made = self.configs.get(run_id)
        if self.network is None or made is None or not names_network(made.command + made.args):
            return
        now = self.clock.now()
        self.replayed(pod, name, run_id, pod_ip, started_at, now if finished_at is None else min(now, finished_at))
        if finished_at is not None:
            self.end(run_id)

    def end(self, run_id: str) -> None:
        """A run is over: its command is no longer stepped by timers (its log is still read back)."""
        process = self.processes.get(run_id)
        if process is not None:
            process.quiet()

    def printed(self, run_id: str, until: float) -> list[tuple[float, str]]:
        """What a run's main command printed by `until` (replayed as far as it was asked: `replayed`)."""
        output = self.outputs.get(run_id)
        return output.until(until) if output is not None else []

    def forget_output(self, run_id: str) -> None:
        """A run older than the previous one: its log is no longer served."""
        self.outputs.pop(run_id, None)

    def keep_only(self, live: set[str]) -> None:
        """Forget the files and configs of runs that are no more (called with the live run IDs)."""
        for gone in set(self.sandboxes) - live:
            del self.sandboxes[gone]
        for gone in set(self.processes) - live:
            self.processes.pop(gone).stop()

    def forget_files(self, run_id: str) -> None:
        """A run is over and another started: its files and its replayed command go (not its config)."""
        self.sandboxes.pop(run_id, None)
        process = self.processes.pop(run_id, None)
        if process is not None:
            process.stop()

    def forget_runs(self, run_ids: set[str]) -> None:
        for run_id in run_ids:
            self.sandboxes.pop(run_id, None)
            self.configs.pop(run_id, None)
            self.outputs.pop(run_id, None)
            process = self.processes.pop(run_id, None)
            if process is not None:
                process.stop()
        self.loads.forget(run_ids)

    def forget(self, uid: str, run_ids: set[str]) -> None:
        """The pod is gone: its volumes (not a claim's files), tokens, runs' files and configs."""
        self.volumes.forget(uid)
        self.tokens.forget(uid)
        self.images.forget(uid)
        self.troubles.pop(uid, None)
        self.forget_runs(run_ids)
