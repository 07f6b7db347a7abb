"""Probe and lifecycle validation with the API server's causes."""

from __future__ import annotations

from control.kinds.pods import validate_pod


def manifest(**spec):
    return {"metadata": {"name": "web", "namespace": "default"},
            "spec": {"containers": [{"name": "app", "image": "nginx"}], **spec}}


def test_probe_validation_answers_as_the_api_server():
    pod = manifest(containers=[{"name": "app", "image": "nginx", "livenessProbe": {
        "exec": {"command": ["true"]}, "httpGet": {"port": 80}, "successThreshold": 2}}])
    causes = {(c["field"], c["message"]) for c in validate_pod(pod)}
    assert ("spec.containers[0].livenessProbe.httpGet", "Forbidden: may not specify more than 1 handler type") in causes
    assert ("spec.containers[0].livenessProbe.successThreshold", "Invalid value: 2: must be 1") in causes
    pod = manifest(containers=[{"name": "app", "image": "nginx", "readinessProbe": {"successThreshold": 2}}])
    assert [(c["field"], c["message"]) for c in validate_pod(pod)] == [
        ("spec.containers[0].readinessProbe", "Required value: must specify a handler type")]
    pod = manifest(initContainers=[{"name": "i", "image": "busybox", "readinessProbe": {"tcpSocket": {"port": 1}}}])
    assert [c["message"] for c in validate_pod(pod)] == [
        "Forbidden: may not be set for init containers without restartPolicy=Always"]


def test_hooks_need_one_handler_and_probe_numbers_are_not_negative():
    pod = manifest(containers=[{"name": "app", "image": "nginx", "lifecycle": {"postStart": {}},
                                "readinessProbe": {"tcpSocket": {"port": 80}, "periodSeconds": -1}}])
    assert sorted((c["field"], c["message"]) for c in validate_pod(pod)) == [
        ("spec.containers[0].lifecycle.postStart", "Required value: must specify a handler type"),
        ("spec.containers[0].readinessProbe.periodSeconds", "Invalid value: -1: must be greater than or equal to 0")]
    fine = manifest(containers=[{"name": "app", "image": "nginx", "livenessProbe": {"exec": {"command": ["true"]},
                                                                                   "successThreshold": 1}}])
    assert validate_pod(fine) == []
    assert [c["field"] for c in validate_pod(manifest(containers=[
        {"name": "app", "image": "nginx", "startupProbe": {"exec": {}}}]))] == ["spec.containers[0].startupProbe.exec.command"]
