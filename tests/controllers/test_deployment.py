"""The Deployment controller's reconcile against a fake hub, driven step by step like a cluster
whose ReplicaSets report (or withhold) availability at once."""

from __future__ import annotations

import copy

from control.clock import FakeClock
from control.client.resources import DEPLOYMENTS, PODS, REPLICASETS
from control.controllers import rollout
from control.controllers.deployment import DeploymentController
from control.kinds.hashing import template_hash

from .fakes import START, FakeClient, fill, informers, merge, pod, replicaset, run, template
from .test_rollout import deployment


class Cluster:
    """A Deployment controller over fake caches; `step` reconciles once and plays the writes back
    into the caches, with each ReplicaSet's pods available at once (or never, for `slow`)."""

    def __init__(self, deploy, *objs, slow: set[str] = frozenset()):
        self.clock, self.client, shared = FakeClock(START), FakeClient(), informers()
        self.deployments, self.rss, self.pods = shared.get(DEPLOYMENTS), shared.get(REPLICASETS), shared.get(PODS)
        self.controller = DeploymentController(self.client, self.deployments, self.rss, self.pods, clock=self.clock)
        self.slow = set(slow)
        fill(self.deployments, deploy)
        self.client.store(DEPLOYMENTS, deploy)
        for obj in objs:
            fill(self.rss if obj["kind"] == "ReplicaSet" else self.pods, obj)

    @property
    def deploy(self):
        return self.deployments.cache.get("default/web")

    def sizes(self):
        return {rs["metadata"]["name"]: rs["spec"]["replicas"] for rs in self.rss.cache.list()}

    def available(self):
        return sum(int(rs.get("status", {}).get("availableReplicas") or 0) for rs in self.rss.cache.list())

    def step(self):
        self.client.actions.clear()
        result = run(self.controller.reconcile("default/web"))
        for action in self.client.actions:
            if action.plural == "replicasets" and action.verb in ("create", "replace"):
                rs = copy.deepcopy(action.body)
                rs["metadata"].setdefault("uid", f"uid-{rs['metadata']['name']}")
                rs["metadata"].setdefault("creationTimestamp", "2027-01-15T08:00:00Z")
                n = rs["spec"]["replicas"]
                fast = not any(rs["metadata"]["name"].startswith(s) for s in self.slow) or \
                    not rollout.same_template(rs, self.deploy)
                rs["status"] = {"replicas": n, "readyReplicas": n if fast else 0, "availableReplicas": n if fast else 0,
                                "observedGeneration": 1}
                fill(self.rss, rs)
            elif action.plural == "deployments" and action.verb == "replace/status":
                fill(self.deployments, {**self.deploy, "status": action.body["status"]})
            elif action.plural == "deployments" and action.verb == "patch":
                fill(self.deployments, merge(self.deploy, action.body))
        return result

    def writes(self):
        return [a for a in self.client.actions if a.verb not in ("get", "list")]


def new_template(image="nginx:2"):
    return template({"app": "web"}, image)


def test_a_new_deployment_gets_one_replicaset_named_by_its_template_hash():
    d = deployment(3, surge="25%", unavailable="25%")
    cluster = Cluster(d)
    cluster.step()
    [create] = cluster.client.of("create", "replicasets")
    rs = create.body
    h = template_hash(d["spec"]["template"])
    assert rs["metadata"]["name"] == f"web-{h}"
    assert rs["metadata"]["labels"] == {"app": "web", "pod-template-hash": h}
    assert rs["spec"]["selector"] == {"matchLabels": {"app": "web", "pod-template-hash": h}}
    assert rs["spec"]["template"]["metadata"]["labels"]["pod-template-hash"] == h
    assert rs["spec"]["replicas"] == 3
    assert rs["metadata"]["annotations"] == {rollout.REVISION: "1", rollout.DESIRED: "3", rollout.MAX_REPLICAS: "4"}
    assert rs["metadata"]["ownerReferences"][0]["uid"] == "uid-d"
    assert cluster.deploy["metadata"]["annotations"][rollout.REVISION] == "1"
    assert rollout.condition(cluster.deploy["status"], "Progressing")["reason"] == "NewReplicaSetCreated"
    for _ in range(3):
        cluster.step()
    status = cluster.deploy["status"]
    assert (status["replicas"], status["updatedReplicas"], status["availableReplicas"]) == (3, 3, 3)
    assert rollout.condition(status, "Progressing")["reason"] == "NewReplicaSetAvailable"
    assert cluster.client.of("create", "replicasets") == [], "idempotent once done"


def rolled(d, old_image="nginx:1.25"):
    old = replicaset("web-old", d["spec"]["replicas"], image=old_image, annotations={rollout.REVISION: "1",
                     rollout.DESIRED: str(d["spec"]["replicas"])}, owners=[d],
                     status={"replicas": d["spec"]["replicas"], "availableReplicas": d["spec"]["replicas"]})
    d = copy.deepcopy(d)
    d["spec"]["template"] = new_template()
    d["metadata"]["generation"] = 2
    return d, old


def test_rolling_update_respects_max_surge_and_max_unavailable_at_every_step():
    d, old = rolled(deployment(4, surge=1, unavailable=1))
    cluster = Cluster(d, old)
    for _ in range(20):
        cluster.step()
        assert sum(cluster.sizes().values()) <= 5, "never more than replicas + maxSurge"
        assert cluster.available() >= 3, "never fewer than replicas - maxUnavailable available"
        if not cluster.writes():
            break
    new_name = f"web-{template_hash(d['spec']['template'])}"
    assert cluster.sizes() == {"web-old": 0, new_name: 4}
    status = cluster.deploy["status"]
    assert status["updatedReplicas"] == status["replicas"] == status["availableReplicas"] == 4
    assert status["observedGeneration"] == 2
    assert rollout.condition(status, "Progressing")["reason"] == "NewReplicaSetAvailable"
    assert cluster.deploy["metadata"]["annotations"][rollout.REVISION] == "2"


def test_rolling_update_waits_while_new_pods_are_not_available():
    d, old = rolled(deployment(4, surge=1, unavailable=1))
    new_name = f"web-{template_hash(d['spec']['template'])}"
    cluster = Cluster(d, old, slow={new_name})
    for _ in range(10):
        cluster.step()
    assert cluster.sizes() == {"web-old": 3, new_name: 2}, "one surge pod plus one unavailable slot, then waits"
    assert cluster.writes() == []
    assert cluster.deploy["status"]["unavailableReplicas"] == 2


def test_recreate_scales_old_to_zero_waits_for_their_pods_then_scales_up():
    d, old = rolled(deployment(3, strategy="Recreate"))
    pods = [pod(f"old-{i}", owners=[old], phase="Running") for i in range(3)]
    cluster = Cluster(d, old, *pods)
    cluster.step()
    assert cluster.sizes() == {"web-old": 0}
    assert cluster.client.of("create", "replicasets") == []
    cluster.step()
    assert cluster.client.of("create", "replicasets") == [], "old pods still there: wait"
    for p in pods:
        cluster.pods.cache.pop(f"default/{p['metadata']['name']}")
    cluster.step()
    [create] = cluster.client.of("create", "replicasets")
    assert create.body["spec"]["replicas"] == 3


def test_rollback_reuses_the_old_replicaset_and_gives_it_the_next_revision():
    d = deployment(3, surge=1, unavailable=0)
    v1 = replicaset("web-v1", 0, image="nginx:1.25", owners=[d], annotations={rollout.REVISION: "1"}, created=START - 900)
    v2 = replicaset("web-v2", 3, image="nginx:2", owners=[d], annotations={rollout.REVISION: "2", rollout.DESIRED: "3"},
                    status={"replicas": 3, "availableReplicas": 3})
    assert rollout.same_template(v1, d), "the deployment's template is v1's again (kubectl rollout undo)"
    cluster = Cluster(d, v1, v2)
    for _ in range(10):
        cluster.step()
    assert cluster.client.of("create", "replicasets") == []
    assert cluster.sizes() == {"web-v1": 3, "web-v2": 0}
    v1_now = cluster.rss.cache.get("default/web-v1")
    assert rollout.revision(v1_now) == 3
    assert v1_now["metadata"]["annotations"][rollout.REVISION_HISTORY] == "1", "the revision it had is kept"
    assert rollout.REVISION_HISTORY not in cluster.rss.cache.get("default/web-v2")["metadata"]["annotations"]
    assert cluster.deploy["metadata"]["annotations"][rollout.REVISION] == "3"


def test_a_second_rollback_to_the_same_template_appends_to_its_revision_history():
    d = deployment(3, surge=1, unavailable=0)
    v1 = replicaset("web-v1", 0, image="nginx:1.25", owners=[d], created=START - 900,
                    annotations={rollout.REVISION: "3", rollout.REVISION_HISTORY: "1"})
    v2 = replicaset("web-v2", 3, image="nginx:2", owners=[d], annotations={rollout.REVISION: "4", rollout.DESIRED: "3"},
                    status={"replicas": 3, "availableReplicas": 3})
    cluster = Cluster(d, v1, v2)
    cluster.step()
    [replace] = [a for a in cluster.client.of("replace", "replicasets") if a.name == "web-v1"][:1]
    assert replace.body["metadata"]["annotations"][rollout.REVISION] == "5"
    assert replace.body["metadata"]["annotations"][rollout.REVISION_HISTORY] == "1,3"
    d_annotations = cluster.deploy["metadata"].get("annotations") or {}
    assert d_annotations.get(rollout.REVISION) == "5"
    assert rollout.REVISION_HISTORY not in d_annotations, "the history is the ReplicaSet's, not the Deployment's"


def test_a_paused_deployment_scales_but_does_not_roll():
    d, old = rolled(deployment(3))
    d["spec"]["paused"] = True
    d["spec"]["replicas"] = 5
    cluster = Cluster(d, old)
    cluster.step()
    assert cluster.client.of("create", "replicasets") == []
    assert cluster.sizes() == {"web-old": 5}
    assert rollout.condition(cluster.deploy["status"], "Progressing")["reason"] == "DeploymentPaused"


def test_old_replicasets_beyond_the_history_limit_are_deleted_oldest_first():
    d = deployment(2)
    d["spec"]["revisionHistoryLimit"] = 1
    olds = [replicaset(f"web-r{i}", 0, image=f"nginx:{i}", owners=[d], annotations={rollout.REVISION: str(i)},
                       status={"replicas": 0, "observedGeneration": 1}) for i in (1, 2, 3)]
    current = replicaset("web-now", 2, owners=[d], annotations={rollout.REVISION: "4", rollout.DESIRED: "2"},
                         status={"replicas": 2, "availableReplicas": 2})
    cluster = Cluster(d, *olds, current)
    cluster.step()
    assert [a.name for a in cluster.client.of("delete", "replicasets")] == ["web-r1", "web-r2"]


def test_a_matching_orphan_replicaset_is_adopted():
    d = deployment(2)
    orphan = replicaset("web-orphan", 2, annotations={rollout.REVISION: "1", rollout.DESIRED: "2"},
                        status={"replicas": 2, "availableReplicas": 2})
    cluster = Cluster(d, orphan)
    cluster.client.store(REPLICASETS, orphan)
    cluster.step()
    [patch] = cluster.client.of("patch", "replicasets")
    assert patch.name == "web-orphan"
    assert patch.body["metadata"]["ownerReferences"][0]["uid"] == "uid-d"
    assert cluster.client.of("create", "replicasets") == [], "the adopted set has the current template"
