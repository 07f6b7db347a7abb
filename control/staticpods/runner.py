"""The control-plane node's kubelet for its static pods: runcluster's thread that reads the
manifests folder, tells the supervisor what each component's file lets it run, and keeps a mirror
pod of every manifest in the hub, as upstream's kubelet does (pkg/kubelet/config/file.go,
pkg/kubelet/pod/mirror_client.go, pkg/kubelet/status).

Guarantees (one `sync` pass, every `period` seconds; the hub is asked only when this node's own
state changed — a file, a process, a back-off — or every `resync` seconds, so an idle cluster's
hub is not listed twice a second: a mirror pod deleted by hand comes back within `resync`):
- A manifest of a component run by a spoke (kube-scheduler, kube-controller-manager) decides that
  spoke: its flags are handed to the real process (`Supervisor.set_static`; a changed file restarts
  it); an image that is not the component's own or a command that is not its binary holds it (nothing
  runs) and its container waits in ImagePullBackOff / CrashLoopBackOff, retried on the kubelet's
  crash back-off (KK_CRASH_BACKOFF), each failed start counted as a restart. Fixing the file lets
  the spoke start at once. kube-apiserver and etcd run in the hub: their pods show the hub's process.
- A file that cannot be read as a Pod is skipped with the kubelet's log line ("Could not process
  manifest file") and one Warning event on the Node per version of the file; nothing else changes.
- Mirror pods are written as the node (`system:node:<node>`, NodeRestriction allows a node its own
  mirror pods): created when missing (also after a `kubectl delete`, which the runner finishes at
  once, as the kubelet's status manager does), replaced when the file's hash changed, deleted when the
  file is gone, and their status written only when it changed. A hub that does not answer is
  retried on the next pass; the runner never raises out of its thread.
- With `kube_proxies`, each pass also writes the status of kubeadm's kube-proxy DaemonSet pods
  from each node's kube-proxy process (`control.staticpods.addons`).
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import httpx

from control.clock import REAL, Clock
from control.kinds.meta import format_time
from control.staticpods import manifests as files
from control.staticpods.addons import KubeProxyPods
from control.staticpods.mirror import (MIRROR, ContainerView, config_hash, mirror_pod, pod_status, same_status,
                                       stripped_status)

log = logging.getLogger(__name__)


@dataclass
class Failing:
    """A container that cannot start (its image or command), retried on the crash back-off."""

    attempts: int = 0
    next_try: float = 0.0
    last_try: float | None = None


@dataclass
class Seen:
    """One version (hash) of one manifest, as first read."""

    at: float
    base_starts: int  # the spoke's starts before this version's first run
    failing: Failing = field(default_factory=Failing)


class StaticPodRunner:
    def __init__(self, url: str, token: str, data_dir: Path, node: str, supervisor: Any, *,
                 hub_running: Callable[[], bool], hub_started: float, node_ip: Callable[[], str],
                 backoff: tuple[float, float] = (10.0, 300.0), clock: Clock = REAL, period: float = 1.0,
                 resync: float = 10.0, transport: httpx.BaseTransport | None = None, kube_proxies: KubeProxyPods | None = None):
        self.folder, self.kubelet_dir = files.folder_of(data_dir), Path(data_dir) / "kubelet"
        self.node, self.supervisor, self.hub_running, self.hub_started = node, supervisor, hub_running, hub_started
        self.node_ip, self.backoff, self.clock, self.period, self.resync = node_ip, backoff, clock, period, resync
        self._told: tuple[Any, float] | None = None  # (this node's state, when) the hub last heard it
        self.http = httpx.Client(base_url=url, timeout=5, transport=transport,
                                 headers={"Authorization": f"Bearer {token}", "User-Agent": f"kubelet/{node} (static pods)"})
        self.seen: dict[str, Seen] = {}  # by config hash
        self.current: dict[Path, str] = {}  # each file's hash as last read
        self.reported: set[tuple[str, str]] = set()  # unreadable (file, message) already logged
        self._stop = threading.Event()
        self.kube_proxies = kube_proxies  # kubeadm's kube-proxy DaemonSet's pods, each node's own process

    # --- the files --------------------------------------------------------------------------

    def _seen(self, manifest: files.Manifest, spoke: str | None) -> Seen:
        """This version of the file as first read; a file changed back to an earlier version is a
        new pod again (the kubelet removed the old one's containers), its restarts counted anew."""
        digest = config_hash(manifest, self.node)
        if self.current.get(manifest.path) != digest:
            self.current[manifest.path] = digest
            self.seen.pop(digest, None)
        if digest not in self.seen:
            starts = self.supervisor.runs_of(spoke).starts if spoke else 0
            self.seen[digest] = Seen(self.clock.now(), starts)
        return self.seen[digest]

    def _failing_view(self, seen: Seen, verdict: files.Verdict, pod: str, container: str,
                      log_file: Path | None = None) -> ContainerView:
        now, failing = self.clock.now(), seen.failing
        if now >= failing.next_try:
            failing.attempts += 1
            failing.last_try = now
            if isinstance(verdict, files.ExitFailure) and log_file is not None:  # what the run printed
                log_file.parent.mkdir(parents=True, exist_ok=True)
                if log_file.exists():
                    log_file.replace(log_file.with_suffix(".previous"))
                log_file.write_text(verdict.output + "\n")
            delay = min(self.backoff[0] * 2 ** (failing.attempts - 1), self.backoff[1])
            failing.next_try = now + delay
        wait = min(self.backoff[0] * 2 ** (failing.attempts - 1), self.backoff[1])
        if isinstance(verdict, files.ImagePullFailure):
            fresh = failing.last_try == now  # only the pass that tried says ErrImagePull
            reason = "ErrImagePull" if fresh else "ImagePullBackOff"
            message = verdict.message if fresh else f'Back-off pulling image "{verdict.image}"'
            return ContainerView("waiting", 0, reason=reason, message=message)
        if isinstance(verdict, files.ExitFailure):
            code, reason, message = verdict.code, "Error", ""
        else:
            assert isinstance(verdict, files.StartFailure)
            code, reason, message = 128, "StartError", verdict.message
        return ContainerView("waiting", failing.attempts - 1 if failing.attempts else 0, reason="CrashLoopBackOff",
                             message=f"back-off {wait:.0f}s restarting failed container={container} pod={pod}_kube-system",
                             last_exit_code=code, last_reason=reason, last_message=message,
                             last_started_at=failing.last_try, last_finished_at=failing.last_try)

    def _spoke_view(self, spoke: str, seen: Seen) -> ContainerView:
        runs = self.supervisor.runs_of(spoke)
        restarts = max(0, runs.starts - seen.base_starts - 1)
        if self.supervisor.desired.get(spoke) == "stopped":
            return ContainerView("stopped", restarts, last_started_at=runs.started_wall, last_finished_at=runs.finished_wall)
        ended = runs.exit_code is not None and runs.starts - seen.base_starts > (0 if not runs.running else 1)
        last = dict(last_exit_code=runs.exit_code, last_reason="Error" if runs.exit_code else "Completed",
                    last_started_at=runs.previous_started_wall if runs.running else runs.started_wall,
                    last_finished_at=runs.finished_wall) if ended else {}
        if runs.running:
            return ContainerView("running", restarts, started_at=runs.started_wall, **last)
        if runs.starts - seen.base_starts <= 0:
            return ContainerView("waiting", 0, reason="ContainerCreating")
        return ContainerView("waiting", restarts, reason="CrashLoopBackOff",
                             message=f"back-off restarting failed container", **last)

    def desired(self) -> tuple[dict[str, dict[str, Any]], list[files.Unreadable]]:
        """The mirror pods the files call for (status included), by namespace/name; the unreadable files."""
        pods, unreadable = {}, []
        for found in files.read_folder(self.folder):
            if isinstance(found, files.Unreadable):
                unreadable.append(found)
                continue
            spoke = files.SPOKE_OF.get(found.component) if found.component in files.SPOKE_OF else None
            runs_here = spoke is not None and spoke in self.supervisor.spokes
            seen = self._seen(found, spoke if runs_here else None)
            node_uid = self._node_uid or ""
            pod = mirror_pod(found, self.node, node_uid, seen.at)
            name, container = pod["metadata"]["name"], pod["spec"]["containers"][0]["name"]
            verdict = files.judge(found)
            if runs_here:
                assert spoke is not None
                log_file = files.log_path(self.kubelet_dir, pod["metadata"]["namespace"], name, container)
                self.supervisor.log_files[spoke] = log_file
                self.supervisor.set_static(spoke, verdict.flags if isinstance(verdict, files.Start) else None)
                view = (self._spoke_view(spoke, seen) if isinstance(verdict, files.Start)
                        else self._failing_view(seen, verdict, name, container, log_file))
            elif found.component in files.SPOKE_OF:  # in the hub's own process
                view = (ContainerView("running", 0, started_at=self.hub_started) if self.hub_running()
                        else ContainerView("waiting", 0, reason="CrashLoopBackOff"))
            else:
                view = ContainerView("waiting", 0, reason="ContainerCreating")
            pod["status"] = pod_status(pod, view, seen.at, self.node_ip(), self.clock.now())
            pods[f"{pod['metadata']['namespace']}/{name}"] = pod
        return pods, unreadable

    # --- the hub ------------------------------------------------------------------------------

    _node_uid: str | None = None

    def sync(self) -> None:
        """One pass: files read, spokes told, mirror pods and events written."""
        if self._node_uid is None:
            answer = self.http.get(f"/api/v1/nodes/{self.node}")
            if answer.status_code != 200:  # not registered yet (a mirror pod needs its owner), or refused
                log.info("static pods: node %s not readable yet (%s)", self.node, answer.status_code)
                return
            self._node_uid = answer.json()["metadata"]["uid"]
        wanted, unreadable = self.desired()
        for bad in unreadable:
            self._report(bad)
        state, now = self._local_state(wanted), self.clock.monotonic()
        if self._told is not None and self._told[0] == state and now - self._told[1] < self.resync:
            return  # nothing of ours changed since the hub last heard it
        listing = self.http.get("/api/v1/pods", params={"fieldSelector": f"spec.nodeName={self.node}"})
        if listing.status_code != 200:
            return
        existing = {f"{p['metadata']['namespace']}/{p['metadata']['name']}": p for p in listing.json().get("items") or []
                    if MIRROR in (p["metadata"].get("annotations") or {})}
        for key, pod in existing.items():
            goes = key not in wanted or pod["metadata"].get("deletionTimestamp") or (
                pod["metadata"]["annotations"].get(MIRROR) != wanted[key]["metadata"]["annotations"][MIRROR])
            if goes:  # gone from the folder, deleted by someone, or its file changed: replaced
                self.http.request("DELETE", self._path(key), json={"kind": "DeleteOptions", "apiVersion": "v1",
                                                                   "gracePeriodSeconds": 0})
        for key, pod in wanted.items():
            current = existing.get(key)
            replaced = current is None or current["metadata"].get("deletionTimestamp") or (
                current["metadata"]["annotations"].get(MIRROR) != pod["metadata"]["annotations"][MIRROR])
            if replaced:
                status = pod.pop("status")
                created = self.http.post(f"/api/v1/namespaces/{pod['metadata']['namespace']}/pods", json=pod)
                if created.status_code != 201:
                    log.warning('"Failed creating a mirror pod" pod="%s" err="%s"', key, created.text[:300])
                    continue
                current, pod["status"] = created.json(), status
            if not same_status(current.get("status") or {}, pod["status"]):
                self.http.put(f"{self._path(key)}/status", json={**current, "status": pod["status"]})
        if self.kube_proxies is not None:
            proxies = self.http.get("/api/v1/namespaces/kube-system/pods")
            if proxies.status_code != 200:
                return
            self.kube_proxies.sync(proxies.json().get("items") or [])
        self._told = (state, now)

    def _local_state(self, wanted: dict[str, Any]) -> Any:
        """What this node would tell the hub: each mirror pod's hash and status, each kube-proxy's
        process, whether the hub's own process runs."""
        pods = tuple(sorted((key, pod["metadata"]["annotations"].get(MIRROR),
                             json.dumps(stripped_status(pod.get("status") or {}), sort_keys=True, default=str))
                            for key, pod in wanted.items()))
        proxies = ()
        if self.kube_proxies is not None:
            proxies = tuple((spoke, self.kube_proxies.view(spoke)) for spoke in sorted(self.supervisor.spokes)
                            if spoke.startswith("kube-proxy/"))
        return pods, proxies, self.hub_running()

    def _path(self, key: str) -> str:
        namespace, name = key.split("/", 1)
        return f"/api/v1/namespaces/{namespace}/pods/{name}"

    def _report(self, bad: files.Unreadable) -> None:
        if (str(bad.path), bad.message) in self.reported:
            return
        self.reported.add((str(bad.path), bad.message))
        log.error('"Could not process manifest file" err="%s" path="%s"', bad.message, bad.path)
        now = format_time(self.clock.now())
        event = {"apiVersion": "v1", "kind": "Event",
                 "metadata": {"generateName": f"{self.node}.", "namespace": "default"},
                 "involvedObject": {"apiVersion": "v1", "kind": "Node", "name": self.node, "uid": self._node_uid or ""},
                 "reason": "FailedToReadStaticPodManifest", "type": "Warning",
                 "message": f"Could not process manifest file {bad.path.name}: {bad.message}",
                 "source": {"component": "kubelet", "host": self.node}, "firstTimestamp": now, "lastTimestamp": now,
                 "count": 1, "reportingComponent": "kubelet", "reportingInstance": self.node}
        self.http.post("/api/v1/namespaces/default/events", json=event)

    # --- the thread ---------------------------------------------------------------------------

    def run(self) -> None:
        while not self._stop.is_set():
            try:
                self.sync()
            except httpx.HTTPError as exc:
                log.info("static pods: the hub did not answer (%s); again in %.0f s", exc, self.period)
            except Exception:  # noqa: BLE001 - the kubelet's loop must outlive one bad pass
                log.exception("static pods: a pass failed")
            self._stop.wait(self.period)

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self.run, name="static-pods", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        self._stop.set()
