"""The kubelet's pod worker: `reconcile(key)` carries out, for one pod bound to this node, what
the pure state machine (`podstate`, `containers`) says, through the hub.

Guarantees:
- Level-triggered: it reads the pod from the informer's cache, steps its record to now, writes the
  pod's status only when it differs (through the status subresource, with the cached
  resourceVersion, so a stale cache gets 409 Conflict, which the runner retries; it never loops),
  then tells Events, then asks to be woken when the next thing is due.
- The in-memory record of a pod is committed only after its status write succeeded, so a failed
  write replays the same transitions (and Events) next time, not new ones.
- Graceful deletion: a pod with deletionTimestamp starts nothing again; its running containers are
  told to stop (Killing, preStop) and run on (exec, logs) until they end, at the latest
  min(deletionGracePeriodSeconds, termination_seconds) later; then the final delete is sent with
  grace 0 and a uid precondition (a new pod with the same name is never deleted by mistake).
- Before each step the runtime (`runtime.Runtime`) sets up the pod's volumes and makes the config
  of the containers about to start; a container that cannot start yet is held (ContainerCreating
  or CreateContainerConfigError) and the pod is looked at again after the sync period (and at once
  when a ConfigMap or Secret it uses changes). A run's files are made when it starts.
- Probes (`probes`) run at their moments: the step stops at each to run those due, so a probe's
  kill changes what follows; postStart/preStop hooks (`hooks`) run as runs start and stop; a run
  that ended keeps its termination message (`termination`).
- A pod that vanished from the hub, or came back with a new uid, is forgotten: its IP is freed and
  its logs, volumes and files go. A pod found already running here (kubelet restart) is adopted, not restarted; a
  pod that finished before this kubelet started is left alone.
"""

from __future__ import annotations

import asyncio
import logging
import random
from dataclasses import replace
from functools import partial
from typing import Any

from control import errors
from control.client.informer import Cache
from control.client.resources import PODS
from control.client.runner import DONE, Result, requeue_after
from control.clock import Clock
from control.kinds.meta import is_condition_true
from control.kinds.serviceaccounts import MIRROR_POD_ANNOTATION as MIRROR_POD
from control.kinds.staticpods import HOST_PROCESS
from control.kubelet.behaviour import Script, script_for
from control.kubelet.config import KubeletConfig
from control.kubelet.containers import Container, Happening, Run, advance, container_id, kill
from control.kubelet.filesystem import pod_hostname
from control.kubelet.hooks import run_hook
from control.kubelet.images import image_log
from control.kubelet.process import TimedOut, run_once
from control.kubelet.loads import enforce
from control.kubelet.logs import LogTarget, run_lines
from control.kubelet.termination import with_messages
from control.kubelet.node import IpPool
from control.kubelet.podstate import PodRecord, PodStep, new_record, restart_policy, scripts_of, step_pod
from control.kubelet.probes import MAX_PASSES, Prober, container_specs, probe_pass
from control.kubelet.probestate import next_due
from control.kubelet.podstatus import record_from_status, render_status
from control.kubelet.pulls import restart_changed
from control.kubelet.runtime import Event, Runtime

log = logging.getLogger(__name__)
Obj = dict[str, Any]
CATCH_UP_SECONDS = 300.0  # of a run's time replayed at a turn before a log request reads it (~60 ms of CPU)


def container_spec(pod: Obj, name: str) -> Obj | None:
    spec = pod.get("spec") or {}
    return next((c for c in (spec.get("containers") or []) + (spec.get("initContainers") or [])
                 if isinstance(c, dict) and c.get("name") == name), None)


def _has_run_before(pod: Obj) -> bool:
    status_of = pod.get("status") or {}
    for status in (status_of.get("initContainerStatuses") or []) + (status_of.get("containerStatuses") or []):
        state = (status.get("state") or {}) if isinstance(status, dict) else {}
        if state.get("running") or state.get("terminated") or (status.get("lastState") or {}).get("terminated"):
            return True
    return False


def knob_failures(pod: Obj, status: Obj, now: float) -> tuple[Happening, ...]:
    """An `unready-knob` happening per knob-failed container when the pod just turned not Ready
    because of the `kubekitchen.dev/unready` annotation (so it gets an Unhealthy event)."""
    if not is_condition_true(pod, "Ready") or is_condition_true({"status": status}, "Ready"):
        return ()
    return tuple(Happening("unready-knob", c.get("name", ""), now) for c in (pod.get("spec") or {}).get("containers") or []
                 if script_for(pod, c).unready)


class PodWorker:
    def __init__(self, client: Any, pods: Cache, *, node: str, host_ip: str, pool: IpPool, config: KubeletConfig,
                 clock: Clock, events: Any, rng: random.Random | None = None, runtime: Runtime | None = None):
        self.client, self.pods, self.node, self.host_ip = client, pods, node, host_ip
        self.pool, self.config, self.clock, self.events = pool, config, clock, events
        self.rng = rng or random.Random()
        self.records: dict[str, PodRecord] = {}
        self.runtime = runtime or Runtime(client, clock=clock, data_dir=config.data_dir,
                                          image_backoff=config.image_backoff, pull_seconds=config.pull_seconds)
        self.prober = Prober(self.runtime)

    # --- reconcile -------------------------------------------------------------------------------

    async def reconcile(self, key: str) -> Result:
        pod = self.pods.get(key)
        record = self.records.get(key)
        if record is not None and (pod is None or pod["metadata"].get("uid") != record.uid):
            self.forget(key)
            record = None
        if pod is None or (pod.get("spec") or {}).get("nodeName") != self.node:
            return DONE
        meta = pod["metadata"]
        if MIRROR_POD in (meta.get("annotations") or {}) or HOST_PROCESS in (meta.get("annotations") or {}):
            return DONE  # a static pod's mirror, or the node's own process: control.staticpods reports them
        now = self.clock.now()
        if record is None:
            if meta.get("deletionTimestamp"):  # nothing of it runs here: let it go at once
                await self._final_delete(pod)
                return DONE
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                return DONE
            record = self.admit(pod, now)
        holds, said, wakes = None, [], []
        changed: tuple[Happening, ...] = ()
        if record.stopping_since is None and not meta.get("deletionTimestamp"):  # `kubectl set image`
            record, changed = restart_changed(pod, record, now)
        if record.stopping_since is None and not meta.get("deletionTimestamp"):
            prepared = await self.runtime.prepare(pod, record.init_containers + record.containers, record.host_ip,
                                                  record.pod_ip)
            holds, said = prepared.holds, prepared.events
            wakes += [prepared.wake] if prepared.wake is not None else []
            wakes += [now + self.config.sync_seconds] if holds or prepared.retry else []
        step = self.step(pod, record, now, holds)
        step = replace(step, happenings=changed + step.happenings) if changed else step
        if step.record.stopping_since is None:  # exec'd stress over the memory limit: the OOM killer
            step = enforce(pod, step, self.runtime.loads, scripts_of(pod), now, restart_policy(pod), self.config.backoff)
        step = replace(step, record=with_messages(pod, step.record, step.happenings, partial(self._files_at, pod, record),
                                                  partial(self._log_lines, pod, record)))
        await self.say(pod, said)  # before the write: the runtime tells each new trouble once
        status = render_status(pod, step.record, now)
        if status != (pod.get("status") or {}):
            await self.client.replace_status(PODS, {**pod, "apiVersion": "v1", "kind": "Pod", "status": status})
        self.records[key] = step.record
        self._started(pod, step.record, step.happenings)
        await self.tell(pod, step.happenings + knob_failures(pod, status, now))
        if step.delete_due:
            await self._final_delete(pod)
            self.forget(key)
            return DONE
        wakes += [step.wake] if step.wake is not None else []
        probe_at = next_due(container_specs(pod), step.record.containers, step.record.probes)
        wakes += [probe_at] if probe_at is not None and step.record.stopping_since is None else []
        if wakes:
            return requeue_after(max(0.0, min(wakes) - now))
        return DONE

    def step(self, pod: Obj, record: PodRecord, now: float, holds: dict[str, tuple[str, str]] | None) -> PodStep:
        """`step_pod` to `now`, stopping at every probe moment on the way to run the probes due then
        (a probe's kill changes what happens after it)."""
        happenings: list[Happening] = []
        specs = container_specs(pod)
        for _ in range(MAX_PASSES):
            if record.stopping_since is not None or (pod.get("metadata") or {}).get("deletionTimestamp"):
                break
            due = next_due(specs, record.containers, record.probes)
            if due is None or due > now:
                break
            step = step_pod(pod, record, due, backoff=self.config.backoff,
                            termination_seconds=self.config.termination_seconds, holds=holds)
            happenings += step.happenings
            due = next_due(specs, step.record.containers, step.record.probes)  # the step may have ended runs
            record = step.record
            if due is None or due > now:
                continue
            record, happened = probe_pass(pod, record, due, self.prober.check, self.config.backoff)
            happenings += happened
        step = step_pod(pod, record, now, backoff=self.config.backoff,
                        termination_seconds=self.config.termination_seconds, holds=holds)
        step = replace(step, happenings=tuple(happenings) + step.happenings)
        return self._hooks(pod, record, step)

    def _hooks(self, pod: Obj, before: PodRecord, step: PodStep) -> PodStep:
        """Run the postStart hooks of runs that just started (a failure kills the run) and the
        preStop hooks of runs the deletion stops."""
        record, extra = step.record, []
        for h in step.happenings:
            if h.kind not in ("started", "stopping"):
                continue
            spec, c = container_spec(pod, h.container) or {}, record.container(h.container)
            run = c.current if c is not None else None
            if c is None or run is None or run.number != h.run:
                continue
            stopping = h.kind == "stopping"
            failed = run_hook(pod, spec, "preStop" if stopping else "postStart", h.at,
                              partial(self._hook_runner, pod, record, run))
            if failed is None:
                continue
            extra.append(Happening("hook-failed", c.name, h.at, run=run.number,
                                   message=("FailedPreStopHook" if stopping else "FailedPostStartHook") + "|" + failed))
            if not stopping:
                killed, happened = kill(c, h.at, restart_policy(pod), self.config.backoff)
                record = replace(record, containers=tuple(killed if x.name == c.name else x for x in record.containers))
                extra += happened
        return replace(step, record=record, happenings=step.happenings + tuple(extra)) if extra else step

    def _hook_runner(self, pod: Obj, record: PodRecord, run: Run, name: str, argv: list[str],
                     at: float) -> tuple[int | None, str]:
        fs = self.runtime.replayed(pod, name, run.container_id, record.pod_ip, run.started_at, at)
        made = self.runtime.config(pod, name, run.container_id, record.host_ip, record.pod_ip)
        grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
        try:
            done = run_once(fs, argv, dict(made.env), pod_hostname(pod)[0], at, float(grace if grace else 30))
        except TimedOut:
            return None, ""
        return done.exit_code, done.output.rstrip("\n")

    def _files_at(self, pod: Obj, record: PodRecord, c: Container, run: Run) -> Any:
        """A run's files as its command left them when it ended (None when nothing could have
        written them: no command and no files made)."""
        made = self.runtime.configs.get(run.container_id)
        if run.container_id not in self.runtime.sandboxes and not (made and (made.command or made.args)):
            return None
        return self.runtime.replayed(pod, c.name, run.container_id, record.pod_ip, run.started_at,
                                     run.finished_at or run.started_at)

    def _log_lines(self, pod: Obj, record: PodRecord, c: Container, run: Run) -> list[str]:
        spec = container_spec(pod, c.name) or {}
        end = run.finished_at or run.started_at
        lines = run_lines(c.name, spec.get("image") or c.image, run, script_for(pod, spec), end,
                          self.config.log_interval, self._printed(pod, record, c.name, run, end))
        return [line.text for line in lines]

    def _printed(self, pod: Obj, record: PodRecord, name: str, run: Run, until: float) -> list[tuple[float, str]]:
        """What a run's command printed by `until` (not past its end): replayed as far as that when
        it is still replaying, or was never replayed; read back when the run is over and forgotten."""
        moment = min(until, run.finished_at) if run.finished_at is not None else until
        made = self.runtime.config(pod, name, run.container_id, record.host_ip, record.pod_ip)  # adopted: made now
        if not (made.command or made.args):  # the image's own command: what it prints when it starts
            return [line for line in image_log(container_spec(pod, name) or {}, run.started_at) if line[0] <= moment]
        if self._replays(run):
            self.runtime.replayed(pod, name, run.container_id, record.pod_ip, run.started_at, moment)
        return self.runtime.printed(run.container_id, moment)

    def _replays(self, run: Run) -> bool:
        """Whether a run's command is (still, or yet to be) replayed, rather than read back when over."""
        return run.container_id in self.runtime.processes or run.container_id not in self.runtime.outputs

    async def _catch_up(self, pod: Obj, record: PodRecord, name: str, run: Run, until: float) -> None:
        """Replay a long history before a log request reads it, CATCH_UP_SECONDS of the run's time at
        a turn, letting the kubelet's other work in between (the first `kubectl logs` of a pod that
        ran a day replays a day: it must not hold up heartbeats)."""
        moment = min(until, run.finished_at) if run.finished_at is not None else until
        made = self.runtime.config(pod, name, run.container_id, record.host_ip, record.pod_ip)
        if not (made.command or made.args) or not self._replays(run):
            return
        process = self.runtime.processes.get(run.container_id)
        reached = process.reached if process is not None else run.started_at
        while reached + CATCH_UP_SECONDS < moment:
            reached += CATCH_UP_SECONDS
            self.runtime.replayed(pod, name, run.container_id, record.pod_ip, run.started_at, reached)
            await asyncio.sleep(0)

    def _started(self, pod: Obj, record: PodRecord, happenings: tuple[Happening, ...]) -> None:
        """Make the files of every run that just started, as they are at its start (and start its
        command at once when it reaches the network: `Runtime.begin`); a run that ended is quieted."""
        for happening in happenings:
            if happening.kind in ("exited", "stopped"):
                ended = record.container(happening.container)
                if ended is not None:
                    self.runtime.end(container_id(ended.seed, happening.run))
                continue
            container = record.container(happening.container) if happening.kind == "started" else None
            if container is not None:
                run_id = container_id(container.seed, happening.run)
                if happening.run > 0:  # a restart starts from fresh files: the last run's go (its log stays)
                    ended = container.previous
                    if ended is not None and ended.container_id == container_id(container.seed, happening.run - 1):
                        self._printed(pod, record, container.name, ended, ended.finished_at or ended.started_at)
                    self.runtime.forget_files(container_id(container.seed, happening.run - 1))
                if happening.run > 1:  # only the current and the previous run's logs are served
                    self.runtime.forget_output(container_id(container.seed, happening.run - 2))
                self.runtime.config(pod, container.name, run_id, record.host_ip, record.pod_ip)
                self.runtime.files(pod, container.name, run_id, record.pod_ip)
                run = container.current
                if run is not None and run.container_id == run_id:
                    self.runtime.begin(pod, container.name, run_id, record.pod_ip, run.started_at, run.finished_at)

    def admit(self, pod: Obj, now: float) -> PodRecord:
        """Take a pod on: reserve its IP and create (or adopt) its record."""
        meta, spec = pod["metadata"], pod.get("spec") or {}
        uid, status = meta.get("uid", ""), pod.get("status") or {}
        low, high = self.config.start_delay
        delay = self.rng.uniform(low, high)
        if _has_run_before(pod):
            if spec.get("hostNetwork"):
                ip = self.host_ip
            else:
                ip = self.pool.claim(uid, status["podIP"]) if status.get("podIP") else self.pool.allocate(uid)
            record = record_from_status(pod, now, host_ip=self.host_ip, pod_ip=ip, backoff=self.config.backoff,
                                        default_start_delay=delay)
        else:
            ip = self.host_ip if spec.get("hostNetwork") else self.pool.allocate(uid)
            record = new_record(pod, now, host_ip=self.host_ip, pod_ip=ip, default_start_delay=delay)
        self.records[record.key] = record
        return record

    def forget(self, key: str) -> None:
        record = self.records.pop(key, None)
        if record is not None:
            self.pool.release(record.uid)
            runs = {container_id(c.seed, n) for c in record.containers + record.init_containers
                    for n in range(c.restart_count + 2)}
            self.runtime.forget(record.uid, runs)

    async def _final_delete(self, pod: Obj) -> None:
        meta = pod["metadata"]
        try:
            await self.client.delete(PODS, meta["name"], meta.get("namespace"), grace_period=0,
                                     preconditions={"uid": meta.get("uid")})
        except (errors.NotFound, errors.Conflict):
            pass  # already gone, or the name now belongs to another pod

    # --- events --------------------------------------------------------------------------------

    async def tell(self, pod: Obj, happenings: tuple[Happening, ...]) -> None:
        """Record each distinct Event once (a fast-forward through many restarts is one count)."""
        subject = {**pod, "apiVersion": "v1", "kind": "Pod"}
        told: set[tuple[str, str, str]] = set()
        for happening in happenings:
            for type_, reason, message in self.event_texts(pod, happening):
                if (type_, reason, message) not in told:
                    told.add((type_, reason, message))
                    await self.events.record(subject, type_, reason, message)

    async def say(self, pod: Obj, events: list[Event]) -> None:
        """Record the runtime's Events (FailedMount, Failed, InvalidEnvironmentVariableNames)."""
        subject = {**pod, "apiVersion": "v1", "kind": "Pod"}
        for type_, reason, message in dict.fromkeys(events):
            await self.events.record(subject, type_, reason, message)

    def event_texts(self, pod: Obj, happening: Happening) -> list[tuple[str, str, str]]:
        meta = pod["metadata"]
        spec = container_spec(pod, happening.container) or {}
        image, name = spec.get("image", ""), happening.container
        if happening.kind == "started":
            pulled = self.runtime.images.started_events(meta.get("uid", ""), name, image)
            return [*pulled, ("Normal", "Created", f"Created container: {name}"),
                    ("Normal", "Started", f"Started container {name}")]
        if happening.kind == "backoff":
            return [("Warning", "BackOff", f"Back-off restarting failed container {name} in pod "
                     f"{meta.get('name')}_{meta.get('namespace')}({meta.get('uid')})")]
        if happening.kind == "unready":
            return [("Warning", "Unhealthy", "Readiness probe failed: the kitchen says this container is never ready")]
        if happening.kind == "unready-knob":
            return [("Warning", "Unhealthy", "Readiness probe failed: the annotation kubekitchen.dev/unready says so")]
        if happening.kind == "changed":
            return [("Normal", "Killing", f"Container {name} definition changed, will be restarted")]
        if happening.kind == "stopping":
            return [("Normal", "Killing", f"Stopping container {name}")]
        if happening.kind == "unhealthy":
            return [("Warning", "Unhealthy", happening.message)]
        if happening.kind == "killing":
            return [("Normal", "Killing", happening.message)]
        if happening.kind == "hook-failed":
            reason, _, message = happening.message.partition("|")
            return [("Warning", reason, message)]
        return []

    # --- what runs now (traffic, stats) ---------------------------------------------------------

    def current(self, namespace: str, name: str) -> tuple[Obj, PodRecord, tuple[Container, ...]] | None:
        """The pod, its record and its containers advanced to this moment (nothing is written),
        or None when this kubelet does not run it."""
        key = f"{namespace}/{name}"
        record, pod = self.records.get(key), self.pods.get(key)
        if record is None or pod is None or pod["metadata"].get("uid") != record.uid:
            return None
        if record.stopping_since is not None:
            return pod, record, record.containers
        scripts, policy, now = scripts_of(pod), restart_policy(pod), self.clock.now()
        containers = tuple(advance(c, scripts.get(c.name, Script()), policy, now, self.config.backoff)[0]
                           for c in record.containers)
        return pod, record, containers

    def all_current(self) -> list[tuple[Obj, PodRecord, tuple[Container, ...]]]:
        return [found for key in list(self.records) if (found := self.current(*key.split("/", 1))) is not None]

    # --- logs ----------------------------------------------------------------------------------

    def log_target(self, namespace: str, name: str, container: str) -> LogTarget | None:
        """The container as it is now (advanced to this moment), for the log server."""
        key = f"{namespace}/{name}"
        record, pod = self.records.get(key), self.pods.get(key)
        found = record.container(container) if record else None
        if found is None:
            return None
        spec = container_spec(pod, container) if pod else None
        script = script_for(pod, spec) if pod and spec else Script()
        if pod is not None and record and record.stopping_since is None and found in record.containers:
            found, _ = advance(found, script, restart_policy(pod), self.clock.now(), self.config.backoff)
        if pod is None or record is None:
            return LogTarget(found, script, (spec or {}).get("image") or found.image)
        return LogTarget(found, script, (spec or {}).get("image") or found.image,
                         partial(self._printed, pod, record, container), partial(self._catch_up, pod, record, container))

