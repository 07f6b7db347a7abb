"""Images and resources with the real kubectl against a one-node cluster: a typo'd image is
ErrImagePull then ImagePullBackOff until `kubectl set image` fixes it; a pod over its memory
limit is OOMKilled, and so is one whose exec'd `stress` takes it over; `stress --cpu` is throttled
at `limits.cpu` in `kubectl top` (and is not without a limit); requests above limits are refused as
the API server refuses them."""

from __future__ import annotations

import json
import re
from functools import partial

import pytest

from tests.conftest import Cluster, ready_cluster, wait_for

pytestmark = pytest.mark.e2e
eventually = partial(wait_for, timeout=20)

OOM = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "oom"},
       "spec": {"restartPolicy": "Never", "containers": [{
           "name": "stress", "image": "polinux/stress", "command": ["stress"],
           "args": ["--vm", "1", "--vm-bytes", "250M", "--vm-hang", "1"],
           "resources": {"requests": {"memory": "50Mi"}, "limits": {"memory": "100Mi"}}}]}}
LIMITED = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "limited"},
           "spec": {"containers": [{"name": "web", "image": "nginx:1.27",
                                    "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}}}]}}
GREEDY = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "greedy"},
          "spec": {"containers": [{"name": "web", "image": "nginx:1.27",
                                   "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}]}}


@pytest.fixture(scope="module")
def cluster():
    yield from ready_cluster(1, env={"KK_IMAGE_BACKOFF": "6:30", "KK_IMAGE_PULL_SECONDS": "0.2"})


def status_of(cluster: Cluster, pod: str) -> str:
    line = cluster.kubectl("get", "pod", pod, "--no-headers", check=False).stdout.split()
    return line[2] if len(line) > 2 else ""


def pod_json(cluster: Cluster, pod: str) -> dict:
    return json.loads(cluster.kubectl("get", "pod", pod, "-o", "json").stdout)


def test_a_typo_in_the_image_backs_off_until_set_image_fixes_it(cluster):
    cluster.kubectl("run", "bad", "--image=ngnix:latestt")
    eventually(lambda: status_of(cluster, "bad") == "ErrImagePull", what="ErrImagePull")
    eventually(lambda: status_of(cluster, "bad") == "ImagePullBackOff", what="ImagePullBackOff")
    waiting = pod_json(cluster, "bad")["status"]["containerStatuses"][0]["state"]["waiting"]
    assert waiting["message"].startswith('Back-off pulling image "ngnix:latestt": ErrImagePull: rpc error: code = '
                                         'NotFound desc = failed to pull and unpack image '
                                         '"docker.io/library/ngnix:latestt"')
    events = cluster.kubectl("get", "events", "--field-selector", "involvedObject.name=bad").stdout
    assert "Failed to pull image \"ngnix:latestt\"" in events and "Back-off pulling image" in events
    cluster.kubectl("set", "image", "pod/bad", "bad=nginx:1.27")
    eventually(lambda: status_of(cluster, "bad") == "Running", what="Running after set image")


def test_a_pod_over_its_memory_limit_is_oom_killed(cluster):
    cluster.kubectl("apply", "-f", "-", input=json.dumps(OOM))
    eventually(lambda: status_of(cluster, "oom") == "OOMKilled", what="OOMKilled")
    status = pod_json(cluster, "oom")["status"]
    terminated = status["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["reason"], terminated["exitCode"], status["qosClass"]) == ("OOMKilled", 137, "Burstable")


def test_stress_by_exec_over_the_limit_is_oom_killed_and_restarted(cluster):
    cluster.kubectl("apply", "-f", "-", input=json.dumps(LIMITED))
    eventually(lambda: status_of(cluster, "limited") == "Running", what="limited Running")
    assert pod_json(cluster, "limited")["status"]["qosClass"] == "Guaranteed"
    done = cluster.kubectl("exec", "limited", "--", "stress", "--vm", "1", "--vm-bytes", "200M", check=False)
    assert done.returncode == 137, done.stderr
    last = eventually(lambda: pod_json(cluster, "limited")["status"]["containerStatuses"][0]["lastState"]
                      .get("terminated"), what="the OOM kill in lastState")
    assert (last["reason"], last["exitCode"]) == ("OOMKilled", 137)


def spinning(name: str, limits: dict) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "s", "image": "polinux/stress", "command": ["stress"],
                                     "args": ["--cpu", "2"], "resources": {"limits": limits}}]}}


def test_cpu_is_throttled_at_the_limit_in_kubectl_top(cluster):
    cluster.kubectl("apply", "-f", "-", input=json.dumps(spinning("capped", {"cpu": "200m"})))
    cluster.kubectl("apply", "-f", "-", input=json.dumps(spinning("free", {})))

    def cpu() -> dict[str, int] | None:
        top = cluster.kubectl("top", "pod", "--no-headers", check=False).stdout
        found = dict(re.findall(r"^(capped|free)\s+(\d+)m\s", top, re.M))
        return {k: int(v) for k, v in found.items()} if len(found) == 2 else None

    seen = eventually(cpu, timeout=40, what="kubectl top of both pods")
    assert seen["capped"] == 200, seen  # two workers want 2000m; the limit throttles them
    assert seen["free"] > 2000, seen  # idle + two workers, nothing to hold them back
    cluster.kubectl("delete", "pod", "capped", "free", "--grace-period=0", "--force")


def test_requests_above_limits_are_refused(cluster):
    refused = cluster.kubectl("apply", "-f", "-", input=json.dumps(GREEDY), check=False)
    assert refused.returncode != 0
    assert 'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1' \
        in refused.stderr
