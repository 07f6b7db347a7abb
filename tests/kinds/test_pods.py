"""Pod scheduling gates as the API server treats them: a gated pod is created PodScheduled=False
(SchedulingGated) and printed so, its gates may only be removed, and it cannot be bound."""

from __future__ import annotations

from control.kinds.pods import bind_pod, pod_cells, pod_display_status, prepare_pod_for_create, validate_pod_update


def gated(*names):
    return {"metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}],
                     "schedulingGates": [{"name": n} for n in names]}}


def test_a_gated_pod_starts_scheduling_gated_and_prints_so():
    pod = gated("example.com/a")
    prepare_pod_for_create(pod)
    assert pod["status"] == {"phase": "Pending", "qosClass": "BestEffort", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
         "message": "Scheduling is blocked due to non-empty scheduling gates"}]}
    assert pod_display_status(pod) == "SchedulingGated"
    plain = gated()
    prepare_pod_for_create(plain)
    assert plain["status"] == {"phase": "Pending", "qosClass": "BestEffort"} and pod_display_status(plain) == "Pending"


def test_gates_may_be_removed_never_added_and_a_gated_pod_is_not_bound():
    old = gated("a", "b")
    assert validate_pod_update(gated("b"), old) == []
    assert validate_pod_update(gated(), old) == []
    assert validate_pod_update(gated("a", "b", "c"), old) == [{
        "reason": "FieldValueForbidden", "field": "spec.schedulingGates",
        "message": "Forbidden: only deletion is allowed, but found new scheduling gate 'c'"}]
    assert bind_pod(gated("a"), "n1", "2026-01-01T00:00:00Z") == "pod p has non-empty .spec.schedulingGates"
    opened = gated()
    prepare_pod_for_create(gated("a"))
    assert bind_pod(opened, "n1", "2026-01-01T00:00:00Z") == "" and opened["spec"]["nodeName"] == "n1"


def initializing(init_states, app_states=None, conditions=None, inits=None):
    inits = inits or [{"name": f"i{n}", "image": "busybox"} for n in range(len(init_states))]
    return {"metadata": {"name": "p", "namespace": "default"},
            "spec": {"initContainers": inits, "containers": [{"name": "c", "image": "nginx"}]},
            "status": {"phase": "Pending", "conditions": conditions or [],
                       "initContainerStatuses": [{"name": i["name"], "state": s, "restartCount": 2}
                                                 for i, s in zip(inits, init_states)],
                       "containerStatuses": [{"name": "c", "state": s, "ready": False, "restartCount": 0}
                                             for s in app_states or [{"waiting": {"reason": "PodInitializing"}}]]}}


def test_the_status_column_of_a_pod_with_init_containers_reads_as_kubectls():
    done = {"terminated": {"exitCode": 0, "reason": "Completed"}}
    waiting = {"waiting": {"reason": "PodInitializing"}}
    assert pod_display_status(initializing([waiting, waiting])) == "Init:0/2"
    assert pod_display_status(initializing([done, {"running": {}}])) == "Init:1/2"
    assert pod_display_status(initializing([{"terminated": {"exitCode": 1, "reason": "Error"}}, waiting])) == "Init:Error"
    assert pod_display_status(initializing([{"terminated": {"exitCode": 2}}])) == "Init:ExitCode:2"
    assert pod_display_status(initializing([{"terminated": {"exitCode": 0}}])) == "PodInitializing"  # as kubectl
    assert pod_display_status(initializing([{"terminated": {"exitCode": 137, "signal": 9}}])) == "Init:Signal:9"
    assert pod_display_status(initializing([{"waiting": {"reason": "CrashLoopBackOff"}}])) == "Init:CrashLoopBackOff"
    running = initializing([done], [{"running": {}}], [{"type": "Initialized", "status": "True"}])
    running["status"]["phase"] = "Running"
    assert pod_display_status(running) == "Running"
    cells = pod_cells(initializing([done, {"waiting": {"reason": "CrashLoopBackOff"}}]), 0)
    assert cells[1:4] == ["0/1", "Init:CrashLoopBackOff", 4]  # while initializing, the init containers' restarts


def test_a_sidecar_counts_in_ready_and_does_not_hold_initialization_up():
    sidecar = [{"name": "proxy", "image": "envoy", "restartPolicy": "Always"}, {"name": "setup", "image": "busybox"}]
    pod = initializing([{"running": {}}, {"running": {}}], inits=sidecar)
    pod["status"]["initContainerStatuses"][0].update(started=True, ready=True)
    assert pod_display_status(pod) == "Init:1/2"
    assert pod_cells(pod, 0)[1] == "1/2"


def test_a_completed_container_beside_a_running_one_is_not_completed():
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
           "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}],
                      "containerStatuses": [{"name": "a", "ready": True, "state": {"running": {}}},
                                            {"name": "b", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}}
    assert pod_display_status(pod) == "NotReady"
