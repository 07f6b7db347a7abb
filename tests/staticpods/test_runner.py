"""The control-plane node's kubelet for its static pods, against a scripted hub on fake time:
the files decide what the supervisor runs, mirror pods follow the files and the processes, a
deleted mirror comes back, a file that is not YAML costs one event and nothing else."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import httpx
import pytest

from control.staticpods import manifests as files
from control.staticpods.mirror import MIRROR
from control.staticpods.runner import StaticPodRunner
from control.supervisor import Supervisor
from tests.test_supervisor import FakeProcess, FakeTime


class Hub:
    """Pods and events in memory, answered as the hub answers the node."""

    def __init__(self, node_registered: bool = True):
        self.pods: dict[str, dict] = {}
        self.events: list[dict] = []
        self.node_registered = node_registered
        self.revision = 0

    def handler(self, request: httpx.Request) -> httpx.Response:
        path, method = request.url.path, request.method
        body = json.loads(request.content) if request.content else None
        if path == "/api/v1/nodes/node-1":
            return httpx.Response(200, json={"metadata": {"name": "node-1", "uid": "node-uid"}}) \
                if self.node_registered else httpx.Response(404, json={"kind": "Status", "code": 404})
        if path == "/api/v1/pods":
            return httpx.Response(200, json={"items": list(self.pods.values())})
        if path.endswith("/events"):
            self.events.append(body)
            return httpx.Response(201, json=body)
        parts = path.split("/")  # /api/v1/namespaces/<ns>/pods[/<name>[/status]]
        namespace = parts[4]
        self.revision += 1
        if method == "POST":
            key = f"{namespace}/{body['metadata']['name']}"
            if key in self.pods:
                return httpx.Response(409, json={"kind": "Status", "code": 409})
            body["metadata"].update(uid=f"uid-{self.revision}", resourceVersion=str(self.revision))
            body["status"] = {"phase": "Pending"}
            self.pods[key] = body
            return httpx.Response(201, json=body)
        key = f"{namespace}/{parts[6]}"
        if method == "DELETE":
            return httpx.Response(200, json=self.pods.pop(key))
        if method == "PUT" and path.endswith("/status"):
            self.pods[key]["status"] = body["status"]
            return httpx.Response(200, json=self.pods[key])
        raise AssertionError(f"unexpected {method} {path}")

    def status(self, name: str) -> dict:
        return self.pods[f"kube-system/{name}"]["status"]["containerStatuses"][0]


def popen(args, env=None, **streams):
    return FakeProcess(args, env)


@pytest.fixture
def kitchen(tmp_path):
    clock, hub = FakeTime(), Hub()
    clock.t = 1_700_000_000.0
    files.write_defaults(tmp_path)
    supervisor = Supervisor("http://hub", ["runcomponent"], {"KK_DATA_DIR": str(tmp_path)},
                            {"scheduler": ["scheduler"], "controller-manager": ["controller-manager"]},
                            clock=clock, transport=httpx.MockTransport(lambda r: httpx.Response(500)), popen=popen)
    runner = StaticPodRunner("http://hub", "t", tmp_path, "node-1", supervisor, hub_running=lambda: True,
                             hub_started=clock.t - 5, node_ip=lambda: "127.0.1.1", backoff=(2.0, 8.0), clock=clock,
                             transport=httpx.MockTransport(hub.handler))
    return runner, supervisor, hub, clock, files.folder_of(tmp_path) / "kube-scheduler.yaml"


def rounds(runner, supervisor, clock, seconds: float) -> None:
    for _ in range(int(seconds)):
        supervisor.tick()
        runner.sync()
        clock.t += 1


def edit(path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text().replace(old, new))


def test_the_files_start_the_components_with_their_flags_and_every_component_shows_running(kitchen):
    runner, supervisor, hub, clock, _ = kitchen
    runner.desired()
    supervisor.tick()
    runner.sync()
    assert sorted(hub.pods) == ["kube-system/etcd-node-1", "kube-system/kube-apiserver-node-1",
                                "kube-system/kube-controller-manager-node-1", "kube-system/kube-scheduler-node-1"]
    args = supervisor.processes["scheduler"].args
    assert args[:2] == ["runcomponent", "scheduler"]
    assert "--component-flag=--kubeconfig=/etc/kubernetes/scheduler.conf" in args
    for name in ("etcd-node-1", "kube-apiserver-node-1", "kube-scheduler-node-1"):
        status = hub.status(name)
        assert status["ready"] and "running" in status["state"] and status["restartCount"] == 0, name
    pod = hub.pods["kube-system/kube-scheduler-node-1"]
    assert pod["metadata"]["ownerReferences"][0]["uid"] == "node-uid"
    assert pod["metadata"]["annotations"][MIRROR]


def test_a_crashed_component_is_counted_and_shows_crash_loop_until_it_runs_again(kitchen):
    runner, supervisor, hub, clock, _ = kitchen
    rounds(runner, supervisor, clock, 2)
    supervisor.processes["scheduler"].returncode = 1
    rounds(runner, supervisor, clock, 1)
    status = hub.status("kube-scheduler-node-1")
    assert status["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert status["lastState"]["terminated"]["exitCode"] == 1
    rounds(runner, supervisor, clock, 6)
    status = hub.status("kube-scheduler-node-1")
    assert "running" in status["state"] and status["restartCount"] == 1


def test_a_misspelt_command_holds_the_scheduler_in_crash_loop_and_the_fixed_file_heals_it(kitchen):
    runner, supervisor, hub, clock, path = kitchen
    rounds(runner, supervisor, clock, 2)
    first = supervisor.processes["scheduler"]
    old_uid = hub.pods["kube-system/kube-scheduler-node-1"]["metadata"]["uid"]
    edit(path, "- kube-scheduler\n", "- kube-schedulerr\n")
    rounds(runner, supervisor, clock, 1)
    assert first.signals == ["TERM"] and "scheduler" not in supervisor.processes, "nothing of it runs"
    pod = hub.pods["kube-system/kube-scheduler-node-1"]
    assert pod["metadata"]["uid"] != old_uid, "a changed file is a new pod"
    status = hub.status("kube-scheduler-node-1")
    assert status["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert status["lastState"]["terminated"]["reason"] == "StartError"
    rounds(runner, supervisor, clock, 14)  # tries at 0, 2, 6 and 14 s (back-off 2 s doubling to 8)
    assert hub.status("kube-scheduler-node-1")["restartCount"] == 3
    assert "scheduler" not in supervisor.processes
    edit(path, "- kube-schedulerr\n", "- kube-scheduler\n")
    rounds(runner, supervisor, clock, 1)
    assert supervisor.processes["scheduler"].returncode is None
    status = hub.status("kube-scheduler-node-1")
    assert status["ready"] and status["restartCount"] == 0


def test_a_refused_flag_writes_the_binarys_error_to_the_containers_log(kitchen, tmp_path):
    runner, supervisor, hub, clock, path = kitchen
    rounds(runner, supervisor, clock, 1)
    edit(path, "--leader-elect=true", "--leader-elect=true\n    - --turbo")
    rounds(runner, supervisor, clock, 1)
    status = hub.status("kube-scheduler-node-1")
    assert status["lastState"]["terminated"]["exitCode"] == 1 and status["lastState"]["terminated"]["reason"] == "Error"
    log_file = files.log_path(tmp_path / "kubelet", "kube-system", "kube-scheduler-node-1", "kube-scheduler")
    assert log_file.read_text() == "Error: unknown flag: --turbo\n"


def test_a_misspelt_image_waits_in_image_pull_back_off(kitchen):
    runner, supervisor, hub, clock, path = kitchen
    edit(path, "image: registry.k8s.io/kube-scheduler:", "image: registry.k8s.io/kube-sheduler:")
    rounds(runner, supervisor, clock, 1)
    assert hub.status("kube-scheduler-node-1")["state"]["waiting"]["reason"] == "ErrImagePull"
    rounds(runner, supervisor, clock, 1)
    status = hub.status("kube-scheduler-node-1")
    assert status["state"]["waiting"]["reason"] == "ImagePullBackOff" and status["restartCount"] == 0
    assert "scheduler" not in supervisor.processes


def test_a_deleted_mirror_pod_is_created_again(kitchen):
    runner, supervisor, hub, clock, _ = kitchen
    rounds(runner, supervisor, clock, 3)
    hub.pods["kube-system/kube-scheduler-node-1"]["metadata"]["deletionTimestamp"] = "2023-11-14T22:13:30Z"
    old_uid = hub.pods["kube-system/kube-scheduler-node-1"]["metadata"]["uid"]
    rounds(runner, supervisor, clock, runner.resync)  # nothing of the node's changed: seen at the next resync
    pod = hub.pods["kube-system/kube-scheduler-node-1"]
    assert "deletionTimestamp" not in pod["metadata"] and pod["metadata"]["uid"] != old_uid
    hub.pods.pop("kube-system/etcd-node-1")
    rounds(runner, supervisor, clock, runner.resync)
    assert "kube-system/etcd-node-1" in hub.pods


def test_an_idle_node_asks_the_hub_only_at_each_resync(kitchen):
    runner, supervisor, hub, clock, _ = kitchen
    rounds(runner, supervisor, clock, 3)  # the first passes: mirror pods made, processes started
    asked = []
    handler = runner.http._transport.handler
    runner.http._transport.handler = lambda request: asked.append(request.url.path) or handler(request)
    rounds(runner, supervisor, clock, 2 * runner.resync)
    assert 1 <= asked.count("/api/v1/pods") <= 2  # not once a second
    supervisor.desired["scheduler"] = "stopped"  # a change of the node's own state: told at once
    asked.clear()
    rounds(runner, supervisor, clock, 2)
    assert asked.count("/api/v1/pods") >= 1


def test_a_removed_file_removes_its_mirror_pod(kitchen):
    runner, supervisor, hub, clock, _ = kitchen
    rounds(runner, supervisor, clock, 1)
    (files.folder_of(runner.folder.parent) / "etcd.yaml").unlink()
    rounds(runner, supervisor, clock, 1)
    assert "kube-system/etcd-node-1" not in hub.pods and "kube-system/kube-scheduler-node-1" in hub.pods


def test_a_file_that_is_not_yaml_costs_one_event_and_one_log_line_and_nothing_else(kitchen, caplog):
    runner, supervisor, hub, clock, _ = kitchen
    rounds(runner, supervisor, clock, 1)
    (runner.folder / "broken.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: [oops\n")
    with caplog.at_level(logging.ERROR, logger="control.staticpods.runner"):
        rounds(runner, supervisor, clock, 3)
    assert [r.getMessage().split(" err=")[0] for r in caplog.records] == ['"Could not process manifest file"']
    assert len(hub.events) == 1
    event = hub.events[0]
    assert event["type"] == "Warning" and event["involvedObject"]["kind"] == "Node"
    assert "broken.yaml" in event["message"] and event["source"]["component"] == "kubelet"
    assert len(hub.pods) == 4 and hub.status("kube-scheduler-node-1")["ready"]


def test_a_component_stopped_from_the_dashboard_shows_completed_then_runs_again(kitchen):
    runner, supervisor, hub, clock, _ = kitchen
    rounds(runner, supervisor, clock, 1)
    supervisor.reconcile({"scheduler": "stopped"})
    rounds(runner, supervisor, clock, 1)
    status = hub.status("kube-scheduler-node-1")
    assert status["state"]["terminated"]["reason"] == "Completed" and not status["ready"]
    supervisor.reconcile({"scheduler": "running"})
    rounds(runner, supervisor, clock, 1)
    status = hub.status("kube-scheduler-node-1")
    assert status["ready"] and status["restartCount"] == 1


def test_before_the_node_is_registered_nothing_is_written(kitchen):
    runner, supervisor, hub, clock, _ = kitchen
    hub.node_registered = False
    rounds(runner, supervisor, clock, 2)
    assert hub.pods == {} and hub.events == []
