"""Simulated CPU and memory use of the pods one kubelet runs, and the Summary API answer built
from it: a model of (requests served, knobs, time), with time always passed in.

The model, per running container (documented for the workshop; `kubectl top` shows it):
- CPU, in millicores = 1 (idle) + knob + cost x (requests per second the pod answered over the
  trailing window). Knob: annotation `kubekitchen.dev/cpu` ("300m" or "0.3"; a
  `kubekitchen.dev/cpu.<container>` one wins); cost: `kubekitchen.dev/cpu-per-request`
  (default 10m per request/s). Window: `Timings.cpu_window` (10 s; 3 s at the workshop pace).
- Memory (working set = usage): 16Mi, plus 1Mi per 10 requests/s.
- A container's `limits.cpu` caps its CPU (throttling); `stress` and the `kubekitchen.dev/memory`
  knob add to its memory (see `resources`; above `limits.memory` it is OOMKilled instead).
- A node uses the sum of its pods plus a fixed system share (25m CPU, 128Mi).
Only running containers use anything; a pod with none running is not listed.

Guarantees:
- `UsageMeter` keeps, per pod uid, only the request times inside the window plus a count of the
  older ones, so its memory does not grow with the traffic's history.
- `rate` is the number of requests in (now - window, now] divided by the window.
- A container's cumulative CPU (usageCoreNanoSeconds) starts at 0 with each run and never
  decreases: the knob part is integrated piece by piece, and each request adds `cost`
  millicore-seconds spread over the window that follows it (which is what the rate formula
  charges for it).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Iterable

from control.kinds.meta import format_time
from control.kubelet.behaviour import Script
from control.kubelet.containers import Container

Obj = dict[str, Any]
IDLE_MILLICORES = 1.0
BASE_MEMORY = 16 * 2**20
MEMORY_PER_RATE = 2**20 / 10  # 1Mi per 10 requests/s
SYSTEM_MILLICORES = 25.0
SYSTEM_MEMORY = 128 * 2**20
NANO_PER_MILLICORE = 1_000_000  # 1m = 1e6 nanocores; 1m for 1 s = 1e6 core-nanoseconds


def container_millicores(script: Script, rate: float) -> float:
    total = IDLE_MILLICORES + script.cpu + script.cpu_per_request * rate
    return total if script.cpu_limit is None else min(total, script.cpu_limit)  # throttled at the limit


def working_set_bytes(rate: float, extra: float = 0.0) -> int:
    return int(BASE_MEMORY + MEMORY_PER_RATE * rate + extra)


@dataclass
class _Requests:
    times: deque = field(default_factory=deque)  # answered requests still inside the window
    retired: int = 0  # answered requests older than the window


@dataclass
class _Integral:
    container_id: str
    at: float  # the last moment integrated up to
    knob_millicores: float  # idle + knob, as last seen
    effective: float  # the pod's effective request count, as last seen
    core_nanoseconds: float = 0.0


@dataclass(frozen=True)
class ContainerUsage:
    nano_cores: int
    core_nanoseconds: int
    working_set: int


class UsageMeter:
    """Requests answered per pod, and what they cost each container."""

    def __init__(self, window: float):
        self.window = max(0.001, window)
        self._requests: dict[str, _Requests] = {}
        self._integrals: dict[tuple[str, str], _Integral] = {}

    def record_request(self, uid: str, now: float) -> None:
        self._requests.setdefault(uid, _Requests()).times.append(now)

    def _prune(self, uid: str, now: float) -> _Requests:
        requests = self._requests.setdefault(uid, _Requests())
        while requests.times and requests.times[0] <= now - self.window:
            requests.times.popleft()
            requests.retired += 1
        return requests

    def rate(self, uid: str, now: float) -> float:
        """Requests per second over the trailing window."""
        return len(self._prune(uid, now).times) / self.window

    def effective_requests(self, uid: str, now: float) -> float:
        """Requests charged so far: a request counts fully once the window after it has passed,
        proportionally before that (so this grows continuously and never decreases)."""
        requests = self._prune(uid, now)
        return requests.retired + sum(min(1.0, max(0.0, (now - t) / self.window)) for t in requests.times)

    def container_usage(self, uid: str, container: Container, script: Script, now: float) -> ContainerUsage:
        """The usage of one running container at `now` (advances its cumulative CPU)."""
        assert container.current is not None
        rate = self.rate(uid, now)
        effective = self.effective_requests(uid, now)
        knob = IDLE_MILLICORES + script.cpu
        if script.cpu_limit is not None:
            knob = min(knob, script.cpu_limit)
        key = (uid, container.name)
        integral = self._integrals.get(key)
        if integral is None or integral.container_id != container.current.container_id:
            integral = self._integrals[key] = _Integral(container.current.container_id, container.current.started_at,
                                                         knob, effective)
        elapsed = max(0.0, now - integral.at)
        served = script.cpu_per_request * max(0.0, effective - integral.effective)
        if script.cpu_limit is not None:  # throttled: never more than the limit over the interval
            served = min(served, max(0.0, script.cpu_limit - integral.knob_millicores) * elapsed)
        integral.core_nanoseconds += (integral.knob_millicores * elapsed + served) * NANO_PER_MILLICORE
        integral.at, integral.knob_millicores = max(integral.at, now), knob
        integral.effective = max(integral.effective, effective)
        return ContainerUsage(int(container_millicores(script, rate) * NANO_PER_MILLICORE),
                              int(integral.core_nanoseconds), working_set_bytes(rate, script.memory))

    def retain(self, uids: Iterable[str]) -> None:
        """Forget the pods that are gone."""
        keep = set(uids)
        for uid in [u for u in self._requests if u not in keep]:
            del self._requests[uid]
        for key in [k for k in self._integrals if k[0] not in keep]:
            del self._integrals[key]


@dataclass(frozen=True)
class PodView:
    """What the summary needs of one pod: its manifest, its containers now, and their scripts."""

    pod: Obj
    started_at: float
    containers: tuple[Container, ...]
    scripts: dict[str, Script]


def _cpu(at: str, nano_cores: int, core_nanoseconds: int | None = None) -> Obj:
    cpu: Obj = {"time": at, "usageNanoCores": nano_cores}
    if core_nanoseconds is not None:
        cpu["usageCoreNanoSeconds"] = core_nanoseconds
    return cpu


def _memory(at: str, working_set: int, with_usage: bool = True) -> Obj:
    memory: Obj = {"time": at, "workingSetBytes": working_set}
    if with_usage:
        memory["usageBytes"] = working_set
    return memory


def pod_summary(meter: UsageMeter, view: PodView, now: float) -> Obj | None:
    """One entry of `pods` in the Summary, or None when no container of the pod runs."""
    meta = view.pod.get("metadata") or {}
    uid, at = meta.get("uid", ""), format_time(now)
    containers, cpu, cumulative, memory = [], 0, 0, 0
    for c in view.containers:
        if c.state != "running" or c.current is None:
            continue
        usage = meter.container_usage(uid, c, view.scripts.get(c.name, Script()), now)
        cpu, cumulative, memory = cpu + usage.nano_cores, cumulative + usage.core_nanoseconds, memory + usage.working_set
        containers.append({"name": c.name, "startTime": format_time(c.current.started_at),
                           "cpu": _cpu(at, usage.nano_cores, usage.core_nanoseconds),
                           "memory": _memory(at, usage.working_set)})
    if not containers:
        return None
    return {"podRef": {"name": meta.get("name", ""), "namespace": meta.get("namespace", ""), "uid": uid},
            "startTime": format_time(view.started_at), "cpu": _cpu(at, cpu, cumulative), "memory": _memory(at, memory),
            "containers": containers}


def summary(meter: UsageMeter, *, node: str, node_started_at: float, pods: Iterable[PodView], now: float) -> Obj:
    """The kubelet Summary API answer (`GET /stats/summary`) for this node at `now`."""
    views = list(pods)
    meter.retain((v.pod.get("metadata") or {}).get("uid", "") for v in views)
    entries = [entry for v in views if (entry := pod_summary(meter, v, now)) is not None]
    at = format_time(now)
    up = max(0.0, now - node_started_at)
    nano_cores = int(SYSTEM_MILLICORES * NANO_PER_MILLICORE) + sum(e["cpu"]["usageNanoCores"] for e in entries)
    cumulative = int(SYSTEM_MILLICORES * NANO_PER_MILLICORE * up) + sum(e["cpu"]["usageCoreNanoSeconds"] for e in entries)
    memory = SYSTEM_MEMORY + sum(e["memory"]["workingSetBytes"] for e in entries)
    return {"node": {"nodeName": node, "startTime": format_time(node_started_at), "cpu": _cpu(at, nano_cores, cumulative),
                     "memory": _memory(at, memory)},
            "pods": entries}
