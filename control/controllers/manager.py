"""The controller-manager: one process hosting many controllers over shared informers.

Guarantees: every controller module exposes `build(*, client, informers, clock, timings, recorder)
-> Runner`; controllers share one watch per resource; the process identifies itself as
`kube-controller-manager`, and runs until cancelled. Events are recorded from a background task
(`EventQueue`, as client-go's broadcaster does), so a controller never waits on one: a DaemonSet
creating 50 pods does not wait for 50 `SuccessfulCreate` events between its batches. Each
controller's events carry the source component its upstream counterpart names
(`EVENT_SOURCES`: what `kubectl describe` shows under "From", e.g. `job-controller`).
"""

from __future__ import annotations

import importlib

from control.clock import REAL, Clock
from control.client.component import connect, run_all
from control.client.events import EventQueue, EventRecorder
from control.client.shared import SharedInformers
from control.client.timings import Timings

CONTROLLERS = {
    "replicaset": "control.controllers.replicaset",
    "replicationcontroller": "control.controllers.replication",
    "deployment": "control.controllers.deployment",
    "endpoints": "control.controllers.endpoints",
    "endpointslice": "control.controllers.endpointslice",
    "endpointslicemirroring": "control.controllers.endpointslicemirroring",
    "garbagecollector": "control.controllers.garbagecollector",
    "namespace": "control.controllers.namespace",
    "nodelifecycle": "control.controllers.nodelifecycle",
    "servicelb": "control.controllers.servicelb",
    "horizontalpodautoscaling": "control.controllers.hpa",
    "serviceaccount": "control.controllers.serviceaccounts",
    "root-ca-cert-publisher": "control.controllers.rootca",
    "job": "control.controllers.job",
    "ttl-after-finished": "control.controllers.ttlafterfinished",
    "cronjob": "control.controllers.cronjob",
    "disruption": "control.controllers.disruption",
    "daemonset": "control.controllers.daemonset",
    "statefulset": "control.controllers.statefulset",
    "persistentvolume-binder": "control.controllers.volumebinder",
    "pvc-protection": "control.controllers.pvcprotection",
    "pv-protection": "control.controllers.pvprotection",
    "clusterrole-aggregation": "control.controllers.clusterroleaggregation",
    "resourcequota": "control.controllers.resourcequota",
    "csrsigning": "control.controllers.csrsigning",
}

# The `source.component` of each controller's events, as kube-controller-manager's controllers
# name their recorders (`pkg/controller/*`: e.g. job_controller.go "job-controller"; the disruption
# controller's is "controllermanager"); controllers not listed record none of their own.
EVENT_SOURCES = {
    "replicaset": "replicaset-controller",
    "replicationcontroller": "replication-controller",
    "deployment": "deployment-controller",
    "endpoints": "endpoint-controller",
    "endpointslice": "endpointslice-controller",
    "garbagecollector": "garbage-collector-controller",
    "namespace": "namespace-controller",
    "nodelifecycle": "node-controller",
    "servicelb": "service-controller",
    "horizontalpodautoscaling": "horizontal-pod-autoscaler",
    "job": "job-controller",
    "cronjob": "cronjob-controller",
    "disruption": "controllermanager",
    "daemonset": "daemonset-controller",
    "statefulset": "statefulset-controller",
    "persistentvolume-binder": "persistentvolume-controller",
}


async def run_controller_manager(server: str, *, controllers: list[str] | None = None, clock: Clock | None = None,
                                 timings: Timings | None = None) -> None:
    clock = clock or REAL
    timings = timings or Timings.from_env()
    client = connect(server, "kube-controller-manager")
    informers = SharedInformers(client, clock=clock)
    recorder = EventQueue(EventRecorder(client, "controller-manager", clock=clock))
    runners = []
    for name in controllers or list(CONTROLLERS):
        if name not in CONTROLLERS:
            raise ValueError(f"unknown controller {name!r}; choose from {', '.join(CONTROLLERS)}")
        module = importlib.import_module(CONTROLLERS[name])
        events = recorder.named(EVENT_SOURCES.get(name, name + "-controller"))
        runners.append(module.build(client=client, informers=informers, clock=clock, timings=timings, recorder=events))
    await run_all(client, [informers.run(), recorder.run(), *(runner.run() for runner in runners)])
