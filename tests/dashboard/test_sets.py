"""View models of DaemonSets, StatefulSets, claims, volumes and budgets (dashboard.sets), and a
CronJob's next run: read as `kubectl get` reads them, zeros for what is missing."""

from __future__ import annotations

from dashboard import presenters, sets


def test_a_daemonset_counts_as_kubectl_get_ds():
    vm = sets.daemonset_vm({"metadata": {"name": "bread", "namespace": "default"}, "status": {
        "desiredNumberScheduled": 3, "currentNumberScheduled": 2, "numberReady": 1, "updatedNumberScheduled": 2,
        "numberAvailable": 1}})
    assert vm == {"key": "default/bread", "ns": "default", "name": "bread", "desired": 3, "current": 2, "ready": 1,
                  "updated": 2, "available": 1, "misscheduled": 0}
    assert sets.daemonset_vm({"metadata": {"name": "x"}})["desired"] == 0


def test_a_statefulset_names_its_claim_templates_and_defaults_to_one_replica():
    vm = sets.statefulset_vm({"metadata": {"name": "tables", "namespace": "default"}, "spec": {
        "serviceName": "tables", "volumeClaimTemplates": [{"metadata": {"name": "data"}}, {"metadata": {}}]},
        "status": {"readyReplicas": 1, "currentReplicas": 1}})
    assert vm["replicas"] == 1 and vm["ready"] == 1 and vm["claims"] == ["data"]
    assert vm["service"] == "tables" and vm["policy"] == "OrderedReady"


def test_a_claim_shows_its_volume_once_bound_and_its_request_while_pending():
    pending = {"metadata": {"name": "data-tables-0", "namespace": "default"},
               "spec": {"resources": {"requests": {"storage": "1Gi"}}}}
    assert sets.pvc_vm(pending) | {} == {"key": "default/data-tables-0", "ns": "default", "name": "data-tables-0",
                                         "phase": "Pending", "volume": "", "capacity": "1Gi", "storageClass": ""}
    bound = {**pending, "spec": {**pending["spec"], "volumeName": "pvc-1", "storageClassName": "standard"},
             "status": {"phase": "Bound", "capacity": {"storage": "2Gi"}}}
    vm = sets.pvc_vm(bound)
    assert (vm["phase"], vm["volume"], vm["capacity"], vm["storageClass"]) == ("Bound", "pvc-1", "2Gi", "standard")


def test_a_volume_names_its_claim():
    vm = sets.pv_vm({"metadata": {"name": "pvc-1"}, "spec": {"capacity": {"storage": "1Gi"},
                     "claimRef": {"namespace": "default", "name": "data-tables-0"},
                     "persistentVolumeReclaimPolicy": "Delete"}, "status": {"phase": "Bound"}})
    assert vm == {"key": "pvc-1", "ns": "", "name": "pvc-1", "phase": "Bound", "claim": "default/data-tables-0",
                  "capacity": "1Gi", "reclaim": "Delete"}


def test_a_budget_prints_na_for_the_bound_it_does_not_set():
    vm = sets.pdb_vm({"metadata": {"name": "tables-pdb", "namespace": "default"},
                      "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "tables"}}},
                      "status": {"disruptionsAllowed": 1, "currentHealthy": 3, "desiredHealthy": 2, "expectedPods": 3}})
    assert (vm["minAvailable"], vm["maxUnavailable"], vm["allowed"]) == ("50%", "N/A", 1)
    assert (vm["currentHealthy"], vm["desiredHealthy"], vm["expected"], vm["selector"]) == (3, 2, 3, "app=tables")


def test_the_next_run_follows_the_last_scheduled_one_in_its_zone():
    cronjob = {"metadata": {"name": "special", "creationTimestamp": "2026-11-28T02:00:30Z"},
               "spec": {"schedule": "*/5 * * * *"}, "status": {"lastScheduleTime": "2026-11-28T03:05:00Z"}}
    assert sets.next_run(cronjob) == "2026-11-28T03:10:00Z"
    assert presenters.cronjob_vm(cronjob)["next"] == "2026-11-28T03:10:00Z"
    never_run = {**cronjob, "status": {}}
    assert sets.next_run(never_run) == "2026-11-28T02:05:00Z"
    seoul = {**cronjob, "spec": {"schedule": "0 9 * * *", "timeZone": "Asia/Seoul"}}
    assert sets.next_run(seoul) == "2026-11-29T00:00:00Z"


def test_no_next_run_when_suspended_or_unreadable():
    base = {"metadata": {"name": "x", "creationTimestamp": "2026-11-28T02:00:00Z"}}
    assert sets.next_run({**base, "spec": {"schedule": "* * * * *", "suspend": True}}) == ""
    assert sets.next_run({**base, "spec": {"schedule": "not a schedule"}}) == ""
    assert sets.next_run({**base, "spec": {"schedule": "* * * * *", "timeZone": "Mars/Olympus"}}) == ""
    assert sets.next_run({"metadata": {"name": "x"}, "spec": {"schedule": "* * * * *"}}) == ""


def test_the_snapshot_draws_the_new_kinds():
    body = {"revision": 4, "objects": {"events": [], "daemonsets": [{"metadata": {"name": "bread", "namespace": "d"}}],
                                       "poddisruptionbudgets": [{"metadata": {"name": "b", "namespace": "d"}}]}}
    drawn = presenters.snapshot(body)["objects"]
    assert drawn["daemonsets"][0]["key"] == "d/bread" and drawn["poddisruptionbudgets"][0]["allowed"] == 0
    assert drawn["statefulsets"] == [] and drawn["persistentvolumes"] == []
    item = presenters.change_item({"revision": 9, "type": "ADDED", "resource": "persistentvolumeclaims",
                                   "namespace": "d", "name": "c", "object": {"metadata": {"name": "c", "namespace": "d"}}})
    assert item["kind"] == "PersistentVolumeClaim" and item["vm"]["phase"] == "Pending"
