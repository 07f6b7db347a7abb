"""ResourceQuota and LimitRange with the real kubectl: `kubectl create quota` then a pod past its
count is refused with upstream's words, `kubectl get/describe quota` show used against hard (the
resourcequota controller's status); a LimitRange's defaults land on a pod without resources."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Cluster, wait_for

pytestmark = pytest.mark.e2e

LIMITRANGE = """
apiVersion: v1
kind: LimitRange
metadata: {name: defaults}
spec:
  limits:
  - type: Container
    default: {cpu: 500m, memory: 256Mi}
    defaultRequest: {cpu: 100m, memory: 128Mi}
    max: {cpu: "1"}
"""


@pytest.fixture(scope="module")
def cluster():
    running = Cluster(nodes=0).start()  # the controller-manager is what matters; pods may stay Pending
    try:
        yield running
    finally:
        running.stop()


def test_quota_refuses_the_third_pod_and_reports_used_over_hard(cluster):
    cluster.kubectl("create", "namespace", "q1")
    cluster.kubectl("-n", "q1", "create", "quota", "q", "--hard=pods=2")
    for name in ("a", "b"):
        cluster.kubectl("-n", "q1", "run", name, "--image=nginx")
    refused = cluster.kubectl("-n", "q1", "run", "c", "--image=nginx", check=False)
    assert refused.returncode != 0
    assert refused.stderr.strip() == ('Error from server (Forbidden): pods "c" is forbidden: exceeded quota: q, '
                                      'requested: pods=1, used: pods=2, limited: pods=2')
    wait_for(lambda: "pods: 2/2" in cluster.kubectl("-n", "q1", "get", "quota").stdout, what="used 2/2")
    table = cluster.kubectl("-n", "q1", "get", "quota").stdout.splitlines()
    assert table[0].split() == ["NAME", "AGE", "REQUEST", "LIMIT"]
    described = cluster.kubectl("-n", "q1", "describe", "quota", "q").stdout
    assert [line.split() for line in described.splitlines()[-2:]] == [["--------", "----", "----"],
                                                                       ["pods", "2", "2"]]
    cluster.kubectl("-n", "q1", "delete", "pod", "a", "--grace-period=0", "--force")
    wait_for(lambda: cluster.kubectl("-n", "q1", "run", "c", "--image=nginx", check=False).returncode == 0,
             what="room for a pod once one is gone")


def test_a_limitrange_gives_a_pod_its_defaults_and_refuses_past_max(cluster):
    cluster.kubectl("create", "namespace", "l1")
    cluster.kubectl("-n", "l1", "create", "-f", "-", input=LIMITRANGE)
    assert cluster.kubectl("-n", "l1", "get", "limits").stdout.split()[:3] == ["NAME", "CREATED", "AT"]
    cluster.kubectl("-n", "l1", "run", "plain", "--image=nginx")
    pod = json.loads(cluster.kubectl("-n", "l1", "get", "pod", "plain", "-o", "json").stdout)
    assert pod["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "500m", "memory": "256Mi"},
                                                         "requests": {"cpu": "100m", "memory": "128Mi"}}
    assert "cpu, memory request for container plain" in pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"]
    big = cluster.kubectl("-n", "l1", "run", "big", "--image=nginx", "--overrides",
                          json.dumps({"spec": {"containers": [{"name": "big", "image": "nginx",
                                                               "resources": {"limits": {"cpu": "2"}}}]}}),
                          check=False)
    assert big.stderr.strip() == ('Error from server (Forbidden): pods "big" is forbidden: maximum cpu usage per '
                                  'Container is 1, but limit is 2')
