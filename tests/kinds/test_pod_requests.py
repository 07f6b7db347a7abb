"""control.kinds.pod_requests: upstream's PodRequests and PodLimits (component-helpers/resource),
with the cases of its own table tests: init containers' peak, sidecars, overhead, non-missing."""

from __future__ import annotations

import pytest

from control.kinds.pod_requests import (container_limits, container_requests, pod_limits, pod_requests,
                                        sidecars_and_containers)


def c(name: str = "c", cpu: str | None = None, memory: str | None = None, limits: dict | None = None,
      restart: str | None = None) -> dict:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    container = {"name": name, "resources": {"requests": requests, **({"limits": limits} if limits else {})}}
    if restart:
        container["restartPolicy"] = restart
    return container


def pod(containers=(), init=(), overhead=None) -> dict:
    spec = {"containers": list(containers), "initContainers": list(init)}
    if overhead:
        spec["overhead"] = overhead
    return {"metadata": {"name": "p"}, "spec": spec}


def test_app_containers_are_summed():
    assert pod_requests(pod([c(cpu="100m", memory="1Mi"), c(cpu="200m")])) == pytest.approx(
        {"cpu": 0.3, "memory": 2**20})


def test_the_largest_init_container_wins_when_it_asks_for_more():
    p = pod([c(cpu="100m"), c(cpu="100m")], init=[c(cpu="500m"), c(cpu="50m", memory="1Gi")])
    assert pod_requests(p) == pytest.approx({"cpu": 0.5, "memory": 2**30})


def test_sidecars_run_beside_the_app_and_under_later_init_containers():
    # upstream's "restartable init container" case: sidecar 1 + init 2 run together, then sidecar + app
    p = pod([c(cpu="1")], init=[c("side", cpu="1", restart="Always"), c("init", cpu="3")])
    assert pod_requests(p) == pytest.approx({"cpu": 4.0})  # max(1 side + 1 app, 1 side + 3 init)
    p = pod([c(cpu="3")], init=[c("side", cpu="1", restart="Always"), c("init", cpu="2")])
    assert pod_requests(p) == pytest.approx({"cpu": 4.0})  # 1 side + 3 app
    assert [x["name"] for x in sidecars_and_containers(p)] == ["c", "side"]


def test_overhead_is_added_to_requests_even_where_no_container_asks():
    p = pod([c(cpu="100m")], overhead={"cpu": "250m", "memory": "120Mi"})
    assert pod_requests(p) == pytest.approx({"cpu": 0.35, "memory": 120 * 2**20})
    assert pod_requests(p, exclude_overhead=True) == pytest.approx({"cpu": 0.1})


def test_overhead_is_added_to_limits_only_where_a_limit_is_set():
    p = pod([c(limits={"cpu": "1"})], overhead={"cpu": "250m", "memory": "120Mi"})
    assert pod_limits(p) == pytest.approx({"cpu": 1.25})


def test_non_missing_fills_only_what_a_container_does_not_state():
    p = pod([c(cpu="0"), c(memory="1Mi")])
    assert pod_requests(p, non_missing={"cpu": 0.1, "memory": 200 * 2**20}) == pytest.approx(
        {"cpu": 0.1, "memory": 200 * 2**20 + 2**20})


def test_a_missing_request_is_its_limit_and_bad_input_is_ignored():
    assert container_requests(c(limits={"cpu": "2", "memory": "1Gi"}, cpu="1")) == pytest.approx(
        {"cpu": 1.0, "memory": 2**30})
    assert container_requests({"resources": {"requests": {"cpu": "lots"}}}) == {}
    assert container_limits({"resources": "nonsense"}) == {}
    assert pod_requests({"spec": {"containers": ["x", None], "initContainers": None, "overhead": "y"}}) == {}
    assert pod_requests({}) == {} and pod_limits({"spec": None}) == {}
