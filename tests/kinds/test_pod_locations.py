"""A pod's connect locations (control.kinds.pod_locations): kube-apiserver's LogLocation,
ExecLocation, AttachLocation and PortForwardLocation as pure functions of the pod and its Node."""

from __future__ import annotations

import pytest

from control import errors
from control.kinds.pod_locations import POD_CONNECT, stream_container
from control.kinds.pods import POD

NODE = {"metadata": {"name": "n1"}, "status": {"addresses": [{"type": "InternalIP", "address": "127.0.0.9"}],
                                               "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}}}}


def pod(node: str = "n1", containers: tuple[str, ...] = ("app",), init: tuple[str, ...] = ()) -> dict:
    return {"metadata": {"name": "web", "namespace": "default"},
            "spec": {"nodeName": node, "containers": [{"name": c} for c in containers],
                     "initContainers": [{"name": c} for c in init]}}


def refusal(sub: str, obj: dict, node: dict | None, query: dict) -> tuple[int, str]:
    with pytest.raises(errors.ApiError) as caught:
        POD_CONNECT.location(sub, obj, node, query)
    return caught.value.code, str(caught.value)


def test_the_pod_kind_brings_its_locations():
    assert POD.connect is POD_CONNECT and set(POD_CONNECT.locations) == {"log", "exec", "attach", "portforward"}
    assert set(POD_CONNECT.locations) <= set(POD.subresources)
    assert POD_CONNECT.host(pod()) == "n1" and POD_CONNECT.host({"spec": {}}) == ""


def test_log_location_is_the_containers_log_on_the_nodes_kubelet():
    where = POD_CONNECT.location("log", pod(), NODE, {"follow": ["true"], "tailLines": ["3"], "other": ["x"]})
    assert (where.node, where.address, where.port) == ("n1", "127.0.0.9", 10250)
    assert where.path == "/containerLogs/default/web/app?follow=true&tailLines=3"
    assert POD_CONNECT.location("log", pod(), NODE, {}).path == "/containerLogs/default/web/app"


def test_log_refusals_in_upstreams_order():
    assert refusal("log", pod(containers=("a", "b")), NODE, {}) == (
        400, "a container name must be specified for pod web, choose one of: [a b]")
    assert refusal("log", pod(), NODE, {"container": ["ghost"]}) == (400, "container ghost is not valid for pod web")
    assert refusal("log", pod(node=""), None, {}) == (
        400, 'container "app" in pod "web" is waiting to start: ContainerCreating')
    assert refusal("log", pod(), None, {}) == (503, "the kubelet of node n1 publishes no endpoint")


def test_exec_location_carries_the_command_and_the_streams():
    where = POD_CONNECT.location("exec", pod(), NODE, {"command": ["sh", "-c", "echo hi"], "stdout": ["true"]})
    assert where.path == ("/exec/default/web/app?command=sh&command=-c&command=echo+hi"
                          "&stdin=0&stdout=1&stderr=0&tty=0")
    assert POD_CONNECT.location("attach", pod(), NODE, {"stdin": ["1"]}).path.startswith("/attach/default/web/app?")


def test_exec_refusals_in_upstreams_order():
    assert refusal("exec", pod(node=""), None, {"stdout": ["1"]}) == (
        400, "you must specify at least one command for the container")
    assert refusal("exec", pod(node=""), None, {"command": ["ls"]}) == (
        400, "you must specify at least 1 of stdin, stdout, stderr")
    assert refusal("exec", pod(node=""), None, {"command": ["ls"], "stdout": ["1"]}) == (
        400, "pod web does not have a host assigned")


def test_portforward_location_is_the_pods_kubelet():
    where = POD_CONNECT.location("portforward", pod(), NODE, {})
    assert (where.address, where.port, where.path) == ("127.0.0.9", 10250, "/portForward/default/web")
    assert refusal("portforward", pod(node=""), None, {}) == (400, "pod web does not have a host assigned")


def test_container_rules_are_kube_apiservers():
    obj = pod(containers=("a", "b"), init=("init",))
    assert stream_container(obj, "b") == "b" and stream_container(obj, "init") == "init"
    assert stream_container(pod(containers=("only",)), "") == "only"
    with pytest.raises(errors.BadRequest) as caught:
        stream_container(obj, "")
    assert str(caught.value) == ("a container name must be specified for pod web, choose one of: [a b] "
                                 "or one of the init containers: [init]")
    with pytest.raises(errors.BadRequest) as caught:
        stream_container(obj, "ghost")
    assert str(caught.value) == "container ghost is not valid for pod web"


def test_a_binding_must_name_a_node():
    assert POD.validate_binding({"target": {"name": "n1"}}) == []
    assert POD.validate_binding({"target": {"kind": "Node", "name": "n1"}}) == []
    assert POD.validate_binding({"target": {}})[0]["field"] == "target.name"
    assert POD.validate_binding({"target": {"kind": "Pod", "name": "x"}})[0]["message"] == (
        "Invalid value: \"Pod\": must be empty or 'Node'")
