"""The StatefulSet controller's reconcile against a fake hub: ordinal pods and their identity,
claims before pods, OrderedReady and Parallel, reverse scale-down, revisions and the rolling
update with partition, the claim retention policy, status."""

from __future__ import annotations

import copy

from control import errors
from control.clock import FakeClock
from control.client.resources import CONTROLLERREVISIONS, PERSISTENTVOLUMECLAIMS, PODS, STATEFULSETS
from control.controllers import statefulsetpods as sp
from control.controllers.statefulset import StatefulSetController
from control.kinds.meta import format_time
from control.kinds.statefulsets import statefulset_defaults

from .fakes import START, FakeClient, Recorder, fill, informers, metadata, pod, quota_refusal, run, template


def statefulset(name: str = "web", replicas: int = 3, *, policy: str = "OrderedReady", image: str = "nginx:1.25",
                partition: int | None = None, retention: dict | None = None, claims: bool = True) -> dict:
    labels = {"app": name}
    spec = {"replicas": replicas, "serviceName": name, "podManagementPolicy": policy,
            "selector": {"matchLabels": labels}, "template": template(labels, image)}
    if claims:
        spec["volumeClaimTemplates"] = [{"metadata": {"name": "data"},
                                         "spec": {"accessModes": ["ReadWriteOnce"],
                                                  "resources": {"requests": {"storage": "1Gi"}}}}]
    if partition is not None:
        spec["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"partition": partition}}
    if retention:
        spec["persistentVolumeClaimRetentionPolicy"] = retention
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": metadata(name, generation=1), "spec": spec,
           "status": {}}
    statefulset_defaults(sts)
    return sts


def setup(sts, *objs, clock=None):
    clock = clock or FakeClock(START)
    client, shared = FakeClient(), informers(clock)
    sets, pods = shared.get(STATEFULSETS), shared.get(PODS)
    revisions, claims = shared.get(CONTROLLERREVISIONS), shared.get(PERSISTENTVOLUMECLAIMS)
    controller = StatefulSetController(client, sets, pods, revisions, claims, clock=clock)
    fill(sets, sts)
    client.store(STATEFULSETS, sts)
    for obj in objs:
        fill({"Pod": pods, "ControllerRevision": revisions, "PersistentVolumeClaim": claims}[obj["kind"]], obj)
    return controller, client


def revision(sts, number: int = 1) -> dict:
    rev = sp.new_revision(sts, number)
    rev["metadata"].update(uid=f"uid-{rev['metadata']['name']}", resourceVersion="7")
    return rev


def member(sts, ordinal: int, rev: dict, *, ready: bool = True, phase: str = "Running", **extra) -> dict:
    body = sp.new_pod(sts, rev, ordinal)
    shaped = pod(body["metadata"]["name"], labels=body["metadata"]["labels"], owners=[sts], phase=phase, ready=ready,
                 node="node-1", ip=f"10.244.0.{ordinal + 10}", **extra)
    shaped["spec"] = body["spec"]
    return shaped


def claim(sts, ordinal: int, **meta) -> dict:
    body = sp.new_claim(sts, sts["spec"]["volumeClaimTemplates"][0], f"{sts['metadata']['name']}-{ordinal}")
    body["metadata"] = metadata(body["metadata"]["name"], labels=body["metadata"]["labels"], **meta)
    return body


def names(client, verb: str, plural: str) -> list[str]:
    return [a.name for a in client.of(verb, plural)]


def test_first_pass_makes_a_revision_then_the_claim_then_web_0_only():
    sts = statefulset()
    controller, client = setup(sts)
    run(controller.reconcile("default/web"))
    assert [(a.verb, a.plural) for a in client.actions if a.verb == "create"] == [
        ("create", "controllerrevisions"), ("create", "persistentvolumeclaims"), ("create", "pods")]
    created = client.of("create", "pods")[0].body
    rev = client.of("create", "controllerrevisions")[0].body
    assert rev["metadata"]["name"].startswith("web-") and rev["revision"] == 1
    assert rev["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
    assert created["metadata"]["name"] == "web-0"
    assert created["metadata"]["labels"] == {"app": "web", "statefulset.kubernetes.io/pod-name": "web-0",
                                             "apps.kubernetes.io/pod-index": "0",
                                             "controller-revision-hash": rev["metadata"]["name"]}
    assert created["spec"]["hostname"] == "web-0" and created["spec"]["subdomain"] == "web"
    assert created["spec"]["volumes"] == [{"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}}]
    assert created["metadata"]["ownerReferences"][0]["controller"] is True
    pvc = client.of("create", "persistentvolumeclaims")[0].body
    assert pvc["metadata"]["name"] == "data-web-0" and pvc["metadata"]["labels"] == {"app": "web"}
    assert pvc["spec"]["resources"] == {"requests": {"storage": "1Gi"}}
    assert "ownerReferences" not in pvc["metadata"], "Retain/Retain leaves claims unowned"
    status = client.of("replace/status", "statefulsets")[0].body["status"]
    assert status["updateRevision"] == status["currentRevision"] == rev["metadata"]["name"]
    assert status["observedGeneration"] == 1 and status["replicas"] == 0


def test_ordered_ready_waits_for_each_pod_to_be_running_and_ready():
    sts = statefulset()
    rev = revision(sts)
    controller, client = setup(sts, rev, claim(sts, 0), member(sts, 0, rev, ready=False))
    run(controller.reconcile("default/web"))
    assert names(client, "create", "pods") == [] and names(client, "create", "controllerrevisions") == []
    controller, client = setup(sts, rev, claim(sts, 0), member(sts, 0, rev))
    run(controller.reconcile("default/web"))
    assert names(client, "create", "persistentvolumeclaims") == ["data-web-1"]
    assert names(client, "create", "pods") == ["web-1"]


def test_parallel_creates_every_missing_pod_at_once():
    sts = statefulset(policy="Parallel")
    rev = revision(sts)
    controller, client = setup(sts, rev, member(sts, 1, rev, ready=False), claim(sts, 1))
    run(controller.reconcile("default/web"))
    assert names(client, "create", "pods") == ["web-0", "web-2"]
    assert names(client, "create", "persistentvolumeclaims") == ["data-web-0", "data-web-2"]


def test_an_existing_claim_is_reused_and_one_being_deleted_blocks_the_pod():
    sts = statefulset()
    rev = revision(sts)
    controller, client = setup(sts, rev, claim(sts, 0, deletionTimestamp=format_time(START)))
    run(controller.reconcile("default/web"))
    assert names(client, "create", "pods") == [] and names(client, "create", "persistentvolumeclaims") == []
    controller, client = setup(sts, rev, claim(sts, 0))
    run(controller.reconcile("default/web"))
    assert names(client, "create", "persistentvolumeclaims") == [] and names(client, "create", "pods") == ["web-0"]


def test_scale_down_removes_the_highest_ordinal_first_one_at_a_time_and_keeps_claims():
    sts = statefulset(replicas=2)
    rev = revision(sts)
    pods = [member(sts, i, rev) for i in range(5)]
    claims = [claim(sts, i) for i in range(5)]
    controller, client = setup(sts, rev, *pods, *claims)
    run(controller.reconcile("default/web"))
    assert names(client, "delete", "pods") == ["web-4"]
    assert client.of("delete", "pods")[0].options["preconditions"] == {"uid": "uid-web-4"}
    assert names(client, "delete", "persistentvolumeclaims") == [] and client.of("patch", "persistentvolumeclaims") == []
    pods[4] = member(sts, 4, rev, deleting=format_time(START))
    controller, client = setup(sts, rev, *pods, *claims)
    run(controller.reconcile("default/web"))
    assert names(client, "delete", "pods") == [], "web-3 waits until web-4 is gone"
    controller, client = setup(sts, rev, *pods[:4], *claims)
    run(controller.reconcile("default/web"))
    assert names(client, "delete", "pods") == ["web-3"]


def test_scale_down_waits_while_a_kept_pod_is_unhealthy_but_parallel_does_not():
    sts = statefulset(replicas=1)
    rev = revision(sts)
    pods = [member(sts, 0, rev, ready=False), member(sts, 1, rev), member(sts, 2, rev)]
    controller, client = setup(sts, rev, *pods)
    run(controller.reconcile("default/web"))
    assert names(client, "delete", "pods") == []
    parallel = statefulset(replicas=1, policy="Parallel")
    controller, client = setup(parallel, rev, *pods)
    run(controller.reconcile("default/web"))
    assert sorted(names(client, "delete", "pods")) == ["web-1", "web-2"]


def test_a_failed_member_is_deleted_to_be_recreated_under_its_name():
    sts = statefulset(replicas=1)
    rev = revision(sts)
    controller, client = setup(sts, rev, claim(sts, 0), member(sts, 0, rev, phase="Failed", ready=False))
    run(controller.reconcile("default/web"))
    assert names(client, "delete", "pods") == ["web-0"] and names(client, "create", "pods") == []


def test_a_member_whose_identity_was_changed_gets_it_back():
    sts = statefulset(replicas=1, claims=False)
    rev = revision(sts)
    odd = member(sts, 0, rev)
    del odd["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"]
    odd["spec"]["subdomain"] = "other"
    controller, client = setup(sts, rev, odd)
    run(controller.reconcile("default/web"))
    patch = client.of("patch", "pods")[0].body
    assert patch["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] == "web-0"
    assert patch["spec"] == {"hostname": "web-0", "subdomain": "web"}


def test_a_new_template_is_a_new_revision_and_rolls_from_the_highest_ordinal():
    old = statefulset()
    old_rev = revision(old)
    new = statefulset(image="nginx:1.27")
    new["metadata"]["generation"] = 2
    new["status"] = {"currentRevision": old_rev["metadata"]["name"]}
    pods = [member(old, i, old_rev) for i in range(3)]
    controller, client = setup(new, old_rev, *pods, *(claim(old, i) for i in range(3)))
    run(controller.reconcile("default/web"))
    created = client.of("create", "controllerrevisions")[0].body
    assert created["revision"] == 2 and created["metadata"]["name"] != old_rev["metadata"]["name"]
    assert names(client, "delete", "pods") == ["web-2"]
    status = client.of("replace/status", "statefulsets")[0].body["status"]
    assert status["currentRevision"] == old_rev["metadata"]["name"]
    assert status["updateRevision"] == created["metadata"]["name"]
    assert (status["currentReplicas"], status["updatedReplicas"], status["readyReplicas"]) == (3, 0, 3)


def test_a_new_revision_carries_the_sets_annotations_for_rollout_history():
    # upstream's newRevision copies set.Annotations: `kubectl rollout history` reads CHANGE-CAUSE there
    old = statefulset()
    old_rev = revision(old)
    new = statefulset(image="nginx:1.27")
    new["metadata"]["annotations"] = {"kubernetes.io/change-cause": "kubectl set image sts/web nginx=nginx:1.27"}
    new["status"] = {"currentRevision": old_rev["metadata"]["name"]}
    controller, client = setup(new, old_rev, *(member(old, i, old_rev) for i in range(3)))
    run(controller.reconcile("default/web"))
    created = client.of("create", "controllerrevisions")[0].body
    assert created["metadata"]["annotations"] == new["metadata"]["annotations"]
    assert "annotations" not in old_rev["metadata"], "a set without annotations gives a revision without any"


def test_the_rolling_update_waits_for_the_updated_pod_and_stops_at_the_partition():
    old = statefulset(partition=1)
    old_rev = revision(old)
    new = statefulset(image="nginx:1.27", partition=1)
    new_rev = revision(new, 2)
    new["status"] = {"currentRevision": old_rev["metadata"]["name"]}
    pods = [member(old, 0, old_rev), member(old, 1, old_rev), member(new, 2, new_rev, ready=False)]
    controller, client = setup(new, old_rev, new_rev, *pods)
    run(controller.reconcile("default/web"))
    assert names(client, "delete", "pods") == [], "web-1 waits for web-2 to be ready"
    pods[2] = member(new, 2, new_rev)
    controller, client = setup(new, old_rev, new_rev, *pods)
    run(controller.reconcile("default/web"))
    assert names(client, "delete", "pods") == ["web-1"]
    pods[1] = member(new, 1, new_rev)
    controller, client = setup(new, old_rev, new_rev, *pods)
    run(controller.reconcile("default/web"))
    assert names(client, "delete", "pods") == [], "web-0 is below the partition"
    status = client.of("replace/status", "statefulsets")[0].body["status"]
    assert (status["currentReplicas"], status["updatedReplicas"]) == (1, 2)


def test_below_the_partition_a_recreated_pod_gets_the_current_revision():
    old = statefulset(partition=2)
    old_rev = revision(old)
    new = statefulset(image="nginx:1.27", partition=2)
    new_rev = revision(new, 2)
    new["status"] = {"currentRevision": old_rev["metadata"]["name"]}
    controller, client = setup(new, old_rev, new_rev, claim(new, 0))
    run(controller.reconcile("default/web"))
    body = client.of("create", "pods")[0].body
    assert body["metadata"]["labels"]["controller-revision-hash"] == old_rev["metadata"]["name"]
    assert body["spec"]["containers"][0]["image"] == "nginx:1.25"


def test_on_delete_replaces_nothing_by_itself():
    old = statefulset()
    old_rev = revision(old)
    new = statefulset(image="nginx:1.27")
    new["spec"]["updateStrategy"] = {"type": "OnDelete"}
    new_rev = revision(new, 2)
    controller, client = setup(new, old_rev, new_rev, *(member(old, i, old_rev) for i in range(3)))
    run(controller.reconcile("default/web"))
    assert names(client, "delete", "pods") == []


def test_rolling_back_renumbers_the_old_revision_instead_of_making_a_new_one():
    first = statefulset()
    first_rev = revision(first, 1)
    second_rev = revision(statefulset(image="nginx:1.27"), 2)
    controller, client = setup(first, first_rev, second_rev)
    run(controller.reconcile("default/web"))
    assert client.of("create", "controllerrevisions") == []
    assert [(a.name, a.body["revision"]) for a in client.of("replace", "controllerrevisions")] == [
        (first_rev["metadata"]["name"], 3)]


def test_old_revisions_beyond_the_history_limit_are_deleted():
    sts = statefulset(replicas=1, claims=False)
    sts["spec"]["revisionHistoryLimit"] = 1
    old = [revision(statefulset(image=f"nginx:1.{i}"), i) for i in range(1, 4)]
    rev = revision(sts, 4)
    controller, client = setup(sts, *old, rev, member(sts, 0, rev))
    run(controller.reconcile("default/web"))
    assert names(client, "delete", "controllerrevisions") == [old[0]["metadata"]["name"], old[1]["metadata"]["name"]]


def test_retention_policy_sets_claim_owners_as_upstream():
    sts = statefulset(replicas=1, retention={"whenDeleted": "Delete", "whenScaled": "Delete"})
    rev = revision(sts)
    pods = [member(sts, 0, rev), member(sts, 1, rev)]
    controller, client = setup(sts, rev, *pods, claim(sts, 0), claim(sts, 1))
    run(controller.reconcile("default/web"))
    patches = {a.name: a.body["metadata"]["ownerReferences"] for a in client.of("patch", "persistentvolumeclaims")}
    assert [r["kind"] for r in patches["data-web-0"]] == ["StatefulSet"]
    assert [(r["kind"], r["name"]) for r in patches["data-web-1"]] == [("Pod", "web-1")]
    retained = statefulset(replicas=1)
    owned = claim(sts, 0, owners=[sts])
    controller, client = setup(retained, rev, member(retained, 0, rev), owned)
    run(controller.reconcile("default/web"))
    assert client.of("patch", "persistentvolumeclaims")[0].body["metadata"]["ownerReferences"] is None


def test_claims_created_under_when_deleted_delete_are_owned_by_the_set():
    sts = statefulset(replicas=1, retention={"whenDeleted": "Delete", "whenScaled": "Retain"})
    controller, client = setup(sts, revision(sts))
    run(controller.reconcile("default/web"))
    refs = client.of("create", "persistentvolumeclaims")[0].body["metadata"]["ownerReferences"]
    assert [(r["kind"], r["uid"]) for r in refs] == [("StatefulSet", "uid-web")]


def test_the_update_becomes_current_once_every_member_runs_it():
    old_rev = revision(statefulset())
    sts = statefulset(image="nginx:1.27")
    rev = revision(sts, 2)
    sts["status"] = {"currentRevision": old_rev["metadata"]["name"]}
    controller, client = setup(sts, old_rev, rev, *(member(sts, i, rev) for i in range(3)),
                               *(claim(sts, i) for i in range(3)))
    run(controller.reconcile("default/web"))
    status = client.of("replace/status", "statefulsets")[0].body["status"]
    assert status["currentRevision"] == status["updateRevision"] == rev["metadata"]["name"]
    assert (status["replicas"], status["readyReplicas"], status["currentReplicas"], status["updatedReplicas"],
            status["availableReplicas"]) == (3, 3, 3, 3, 3)


def test_status_is_not_written_when_unchanged_and_a_deleted_set_is_left_alone():
    sts = statefulset(replicas=1, claims=False)
    rev = revision(sts)
    controller, client = setup(sts, rev, member(sts, 0, rev))
    run(controller.reconcile("default/web"))
    written = copy.deepcopy(client.of("replace/status", "statefulsets")[0].body)
    controller, client = setup(written, rev, member(sts, 0, rev))
    run(controller.reconcile("default/web"))
    assert client.of("replace/status", "statefulsets") == []
    run(controller.reconcile("default/gone"))


def test_only_orphans_named_as_members_are_adopted():
    sts = statefulset(replicas=1, claims=False)
    rev = revision(sts)
    named, other = pod("web-0", phase="Running", ready=True), pod("web-abc", phase="Running", ready=True)
    controller, client = setup(sts, rev, named, other)
    run(controller.reconcile("default/web"))
    assert names(client, "patch", "pods")[0] == "web-0" and "web-abc" not in names(client, "patch", "pods")


def test_a_refused_pod_create_is_upstreams_failed_create_event_and_a_retry_after_the_status():
    sts = statefulset(claims=False)
    rev = revision(sts)
    controller, client = setup(sts, rev, member(sts, 0, rev))
    controller.recorder = recorder = Recorder()
    refusal = quota_refusal("web-1")
    client.fail("create", "pods", refusal)
    result = run(controller.reconcile("default/web"))
    assert result.outcome == "retry"
    assert recorder.events == [("web", "Warning", "FailedCreate",
                                f"create Pod web-1 in StatefulSet web failed error: {refusal.message}")]
    assert client.of("replace/status", "statefulsets")[-1].body["status"]["replicas"] == 1


def test_a_refused_claim_create_is_reported_and_no_pod_is_made():
    sts = statefulset()
    rev = revision(sts)
    controller, client = setup(sts, rev)
    controller.recorder = recorder = Recorder()
    refusal = errors.Forbidden('persistentvolumeclaims "data-web-0" is forbidden: exceeded quota: q')
    client.fail("create", "persistentvolumeclaims", refusal)
    assert run(controller.reconcile("default/web")).outcome == "retry"
    assert not client.of("create", "pods")
    assert recorder.events == [("web", "Warning", "FailedCreate", "create Claim data-web-0 for Pod web-0 in "
                                f"StatefulSet web failed error: {refusal.message}")]


def test_a_pod_that_already_exists_is_retried_without_an_event():
    sts = statefulset(claims=False)
    rev = revision(sts)
    controller, client = setup(sts, rev)
    controller.recorder = recorder = Recorder()
    client.fail("create", "pods", errors.AlreadyExists('pods "web-0" already exists'))
    assert run(controller.reconcile("default/web")).outcome == "retry"
    assert recorder.events == []
