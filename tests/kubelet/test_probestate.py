"""The prober's bookkeeping: thresholds, schedules, the startup gate, readiness from results."""

from __future__ import annotations

from control.kubelet.probestate import ProbeState, Settings, record_result


def test_thresholds_count_results_in_a_row():
    state = ProbeState("c", "liveness", 0, 0.0)
    settings = Settings(failure_threshold=3)
    for _ in range(2):
        state = record_result(state, False, settings, 0.0)
        assert state.result == "" and not state.done
    state = record_result(state, False, settings, 0.0)
    assert state.result == "failure" and state.done
    ready = ProbeState("c", "readiness", 0, 0.0)
    ready = record_result(ready, True, Settings(success_threshold=2), 0.0)
    assert ready.result == ""
    assert record_result(ready, True, Settings(success_threshold=2), 0.0).result == "success"


def test_probes_are_due_from_the_initial_delay_and_a_startup_probe_gates_readiness():
    from control.kubelet.containers import Container, Run
    from control.kubelet.probestate import has_started, next_due, probe_ready, put

    run = Run(number=0, container_id="x", started_at=100.0)
    c = Container("app", "nginx", "uid/app", 100.0, 0.0, current=run)
    spec = {"readinessProbe": {"tcpSocket": {"port": 80}, "initialDelaySeconds": 5},
            "startupProbe": {"tcpSocket": {"port": 80}, "initialDelaySeconds": 2}}
    assert next_due({"app": spec}, (c,), ()) == 102.0
    assert not has_started(spec, c, ()) and not probe_ready(spec, c, ())
    started = record_result(ProbeState("app", "startup", 0, 102.0), True, Settings(), 102.0)
    states = put((), started, {"app": 0})
    assert has_started(spec, c, states) and not probe_ready(spec, c, states)  # readiness not yet succeeded
    assert next_due({"app": spec}, (c,), states) == 105.0  # a started container's startup probe is done
    ready = record_result(ProbeState("app", "readiness", 0, 105.0), True, Settings(), 105.0)
    assert probe_ready(spec, c, put(states, ready, {"app": 0}))
    assert probe_ready({}, c, ())  # no probes: the script decides
