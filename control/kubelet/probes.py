"""The prober (upstream pkg/kubelet/prober): liveness, readiness and startup probes of running
containers, run at their moments, with upstream's Events.

Handlers:
- `exec`: the command runs in the container's files as they are at that moment (its main command
  replayed: `process`), with its env, through the simulated shell; exit 0 is success, anything
  else a failure whose output is the message; sleeping past `timeoutSeconds` is a failure
  (`command "..." timed out`).
- `httpGet`, `tcpSocket` (and `grpc`, checked as a TCP connection): against the container's
  simulated server. A server image listens on its declared containerPorts (and its well-known
  port, e.g. nginx 80, or the ports the image catalogue gives it when the pod keeps its default
  command); a shell or tool image (catalogue) listens nowhere; anything else refuses
  (`dial tcp IP:PORT: connect: connection refused`). A listening server answers every path 200,
  except agnhost's `liveness` server (the kubernetes.io liveness-http example): 200 for its first
  10 seconds, then 500 (`HTTP probe failed with statuscode: 500`).

Guarantees: `probe_pass` runs every probe due at one moment (`probestate` keeps the schedule and
the thresholds), emits `Unhealthy` for each failed probe (`Liveness probe failed: ...`) and, when
a liveness or startup probe has failed `failureThreshold` times, kills the run (exit 137) with
`Killing` (`Container x failed liveness probe, will be restarted`); the restart follows the pod's
restartPolicy and the crash-loop back-off. Checking touches only the run's own files.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

from control.kubelet.behaviour import SHELL_IMAGES, image_name
from control.kubelet.config import BackoffPolicy
from control.kubelet.containers import Container, Happening, kill
from control.kubelet.filesystem import pod_hostname
from control.kubelet.images import image_facts
from control.kubelet.podstate import PodRecord, restart_policy
from control.kubelet.process import TimedOut, run_once
from control.kubelet.probestate import (KINDS, Settings, current_state, has_started, probe_of, put,
                                        record_result)

Obj = dict[str, Any]
Check = Callable[[Obj, PodRecord, Container, str, Obj, float], tuple[bool, str]]
MAX_PASSES = 1_000  # probe moments caught up in one sync at most (a kubelet that slept long skips ahead)
WELL_KNOWN_PORTS = {"nginx": (80,), "httpd": (80,), "apache": (80,), "caddy": (80,), "traefik": (80,),
                    "redis": (6379,), "postgres": (5432,), "mysql": (3306,), "mariadb": (3306,),
                    "mongo": (27017,), "memcached": (11211,), "rabbitmq": (5672,), "goproxy": (8080,),
                    "echoserver": (8080,), "hello-app": (8080,)}
AGNHOST_LIVENESS_SECONDS = 10


def container_specs(pod: Obj) -> dict[str, Obj]:
    return {c.get("name", ""): c for c in (pod.get("spec") or {}).get("containers") or [] if isinstance(c, dict)}


def listening_ports(spec: Obj) -> set[int]:
    """The TCP ports the container's simulated server listens on."""
    name = image_name(str(spec.get("image") or ""))
    facts = image_facts(str(spec.get("image") or ""))  # the image catalogue (`images`)
    if name in SHELL_IMAGES or (facts is not None and (facts.shell or not facts.server)):
        return set()
    ports = {p.get("containerPort") for p in spec.get("ports") or []
             if isinstance(p, dict) and (p.get("protocol") or "TCP") == "TCP"}
    ports |= set(WELL_KNOWN_PORTS.get(name, ()))
    if facts is not None and not spec.get("command") and not spec.get("args"):
        ports |= set(facts.ports)  # its default command runs: its server listens where it EXPOSEs
    if name == "agnhost" and (spec.get("args") or [None])[0] in ("liveness", "netexec"):
        ports.add(8080)
    return {p for p in ports if isinstance(p, int)}


def resolve_port(spec: Obj, port: Any) -> int | None:
    """A probe's port: a number, or the name of one of the container's ports."""
    if isinstance(port, int) and not isinstance(port, bool):
        return port
    text = str(port or "")
    if text.isdigit():
        return int(text)
    return next((p.get("containerPort") for p in spec.get("ports") or [] if isinstance(p, dict)
                 and p.get("name") == text), None)


def network_check(spec: Obj, probe: Obj, pod_ip: str, started_at: float, at: float) -> tuple[bool, str]:
    handler = probe.get("httpGet") or probe.get("tcpSocket") or probe.get("grpc") or {}
    port = resolve_port(spec, handler.get("port"))
    host = str(handler.get("host") or pod_ip)
    if port is None:
        return False, f"unable to find port {handler.get('port')!r} in the container's ports"
    refused = f"dial tcp {host}:{port}: connect: connection refused"
    if "httpGet" in probe:
        scheme = str(handler.get("scheme") or "HTTP").lower()
        path = str(handler.get("path") or "/")
        if port not in listening_ports(spec):
            return False, f'Get "{scheme}://{host}:{port}{path}": {refused}'
        args = spec.get("args") or []
        if image_name(str(spec.get("image") or "")) == "agnhost" and args[:1] == ["liveness"] \
                and at - started_at > AGNHOST_LIVENESS_SECONDS:
            return False, "HTTP probe failed with statuscode: 500"
        return True, ""
    if port not in listening_ports(spec):
        return False, refused
    return True, ""


class Prober:
    """Runs probe handlers against the kubelet's runtime (files, env, replayed main commands)."""

    def __init__(self, runtime: Any):
        self.runtime = runtime

    def check(self, pod: Obj, record: PodRecord, c: Container, kind: str, probe: Obj, at: float) -> tuple[bool, str]:
        run = c.current
        assert run is not None
        spec = container_specs(pod).get(c.name) or {}
        if "exec" not in probe:
            return network_check(spec, probe, record.pod_ip, run.started_at, at)
        argv = [str(word) for word in (probe.get("exec") or {}).get("command") or []]
        if not argv:
            return False, "exec probe has no command"
        fs = self.runtime.replayed(pod, c.name, run.container_id, record.pod_ip, run.started_at, at)
        made = self.runtime.config(pod, c.name, run.container_id, record.host_ip, record.pod_ip)
        try:
            outcome = run_once(fs, argv, dict(made.env), pod_hostname(pod)[0], at, Settings.of(probe).timeout)
        except TimedOut as exc:
            return False, str(exc)
        return outcome.exit_code == 0, outcome.output.rstrip("\n")


def probe_pass(pod: Obj, record: PodRecord, at: float, check: Check,
               backoff: BackoffPolicy) -> tuple[PodRecord, tuple[Happening, ...]]:
    """Run every probe due at `at` of the containers running then."""
    specs, policy = container_specs(pod), restart_policy(pod)
    states, containers, happenings = record.probes, [], []
    for c in record.containers:
        spec = specs.get(c.name) or {}
        for kind in KINDS:
            state = current_state(states, spec, c, kind)
            if state is None or state.done or state.next_at > at:
                continue
            probe = probe_of(spec, kind) or {}
            settings = Settings.of(probe)
            if kind != "startup" and not has_started(spec, c, states):  # the startup probe gates the others
                states = put(states, replace(state, next_at=at + settings.period), _live_runs(record.containers))
                continue
            ok, message = check(pod, record, c, kind, probe, at)
            state = record_result(state, ok, settings, at)
            states = put(states, state, _live_runs(record.containers))
            if not ok:
                happenings.append(Happening("unhealthy", c.name, at, run=state.run,
                                            message=f"{kind.capitalize()} probe failed: {message}"))
            if state.done and state.result == "failure":
                happenings.append(Happening("killing", c.name, at, run=state.run,
                                            message=f"Container {c.name} failed {kind} probe, will be restarted"))
                c, happened = kill(c, at, policy, backoff)
                happenings += happened
                break
        containers.append(c)
    return replace(record, containers=tuple(containers), probes=states), tuple(happenings)


def _live_runs(containers: tuple[Container, ...]) -> dict[str, int]:
    return {c.name: c.current.number for c in containers if c.current is not None and c.current.running}
