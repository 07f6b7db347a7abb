"""`reconcile(key)` against a fake hub and a FakeClock: what the kubelet writes, when it asks to
be woken, how it handles a stale cache, a crash loop, a graceful deletion and a vanished pod."""

from __future__ import annotations

import asyncio
import copy

from control import errors
from control.clock import FakeClock
from control.client.informer import Cache
from control.client.resources import PODS
from control.client.runner import DONE, Runner, requeue_after
from control.client.workqueue import WorkQueue
from control.kubelet.config import BackoffPolicy, KubeletConfig
from control.kubelet.node import IpPool
from control.kubelet.pods import PodWorker
from control.kinds.meta import format_time
from tests.kubelet.fakes import FakeEvents, FakeHub

KEY = "default/web"


def manifest(annotations=None, name="web", **spec):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "annotations": annotations or {}},
            "spec": {"nodeName": "node-1", "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
                     "containers": [{"name": "app", "image": "nginx:1.25"}], **spec},
            "status": {"phase": "Pending"}}


class Node:
    """One kubelet pod worker with its fake hub, cache, clock and events."""

    def __init__(self, start_delay=0.0, termination_seconds=1.0):
        self.hub, self.cache, self.clock, self.events = FakeHub(), Cache(), FakeClock(), FakeEvents()
        self.pool = IpPool("10.244.1.0/24")
        config = KubeletConfig(start_delay=(start_delay, start_delay), backoff=BackoffPolicy(2, 8, 600),
                               termination_seconds=termination_seconds)
        self.worker = PodWorker(self.hub, self.cache, node="node-1", host_ip="127.0.1.1", pool=self.pool,
                                config=config, clock=self.clock, events=self.events)

    def submit(self, pod):
        stored = self.hub.put(PODS, pod)
        self.cache.put(copy.deepcopy(stored))
        return stored

    def sync(self):
        """The informer catches up with the hub."""
        current = {f"{o['metadata']['namespace']}/{o['metadata']['name']}": o
                   for (plural, _, _), o in self.hub.objects.items() if plural == "pods"}
        for key in list(self.cache.items):
            if key not in current:
                self.cache.pop(key)
        for obj in current.values():
            self.cache.put(copy.deepcopy(obj))

    async def reconcile(self, key=KEY):
        result = await self.worker.reconcile(key)
        self.sync()
        return result

    def pod(self, name="web"):
        return self.hub.stored(PODS, name, "default")

    def state(self, name="web"):
        return self.pod(name)["status"]["containerStatuses"][0]["state"]


def run(scenario):
    return asyncio.run(scenario())


def test_a_new_pod_runs_with_an_ip_and_a_second_look_changes_nothing():
    node = Node()

    async def scenario():
        node.submit(manifest())
        assert await node.reconcile() == DONE
        status = node.pod()["status"]
        assert status["phase"] == "Running" and status["podIP"] == "10.244.1.2" and status["hostIP"] == "127.0.1.1"
        assert node.events.reasons() == ["Pulling", "Pulled", "Created", "Started"]
        before = list(node.hub.actions)
        assert await node.reconcile() == DONE
        assert node.hub.actions == before, "level-triggered: nothing to do the second time"

    run(scenario)


def test_container_creating_first_then_running_when_woken():
    node = Node(start_delay=0.5)

    async def scenario():
        node.submit(manifest())
        assert await node.reconcile() == requeue_after(0.5)
        assert node.state() == {"waiting": {"reason": "ContainerCreating"}} and "podIP" not in node.pod()["status"]
        await node.clock.advance(0.5)
        assert await node.reconcile() == DONE
        assert "running" in node.state() and node.pod()["status"]["podIP"] == "10.244.1.2"

    run(scenario)


def test_a_stale_cache_meets_409_and_replays_the_same_transitions_later():
    node = Node()

    async def scenario():
        node.submit(manifest())
        node.hub.put(PODS, {**node.pod(), "metadata": {**node.pod()["metadata"], "labels": {"x": "y"}}})
        try:
            await node.worker.reconcile(KEY)
        except errors.Conflict:
            pass
        else:
            raise AssertionError("a write with a stale resourceVersion must fail")
        assert node.events.told == [], "nothing is told before the status is written"
        queue = WorkQueue(clock=node.clock)
        runner = Runner("kubelet", node.worker.reconcile, queue, [])
        assert (await runner.process(KEY)).outcome == "retry", "the runner retries a conflict with back-off"
        node.sync()
        assert await node.reconcile() == DONE
        assert node.events.reasons() == ["Pulling", "Pulled", "Created", "Started"]
        assert node.pod()["metadata"]["labels"] == {"x": "y"}

    run(scenario)


def test_crash_loop_backoff_doubles_to_the_cap_and_restarts_count_up():
    node = Node()

    async def scenario():
        node.submit(manifest({"kubekitchen.dev/crash-after": "1"}))
        waits, messages = [], []
        for _ in range(6):
            result = await node.reconcile()
            if result.outcome == "requeue_after":
                waits.append(result.after)
                state = node.state()
                if "waiting" in state:
                    messages.append(state["waiting"]["message"].split(" restarting")[0])
                await node.clock.advance(result.after)
        assert waits == [1, 2, 1, 4, 1, 8]
        assert messages == ["back-off 2s", "back-off 4s", "back-off 8s"]
        await node.reconcile()
        await node.clock.advance(1)
        await node.reconcile()
        assert node.state()["waiting"]["message"].startswith("back-off 8s"), "capped"
        status = node.pod()["status"]["containerStatuses"][0]
        assert status["restartCount"] == 3 and status["lastState"]["terminated"]["exitCode"] == 1
        assert node.events.reasons().count("BackOff") == 4

    run(scenario)


def test_graceful_deletion_stops_then_deletes_with_grace_0_and_the_uid():
    node = Node(termination_seconds=1.0)

    async def scenario():
        node.submit(manifest())
        await node.reconcile()
        assert node.pool.by_uid
        pod = node.pod()
        pod["metadata"].update(deletionTimestamp=format_time(node.clock.now() + 30), deletionGracePeriodSeconds=30)
        node.submit(pod)
        writes, statuses, replace_status = len(node.hub.verbs("pods")), [], node.hub.replace_status

        async def keeping(resource, obj):
            statuses.append(copy.deepcopy(obj["status"]))
            return await replace_status(resource, obj)

        node.hub.replace_status = keeping
        assert await node.reconcile() == requeue_after(1.0), "simulated stop: min(grace 30, 1 s)"
        assert node.events.reasons()[-1] == "Killing"  # told to stop: SIGTERM ...
        assert "running" in node.pod()["status"]["containerStatuses"][0]["state"]  # ... which takes it a while
        assert len(node.hub.verbs("pods")) == writes  # nothing changed to write yet
        assert node.worker.current("default", "web")[2][0].state == "running"  # exec and logs still reach it
        await node.clock.advance(0.5)
        assert await node.reconcile() == requeue_after(0.5)
        await node.clock.advance(0.5)
        assert await node.reconcile() == DONE
        assert node.hub.verbs("pods")[-2:] == ["replace_status", "delete"]
        cs = statuses[-1]["containerStatuses"][0]
        assert cs["state"]["terminated"]["reason"] == "Completed" and not cs["ready"]
        assert node.events.reasons().count("Killing") == 1
        assert node.hub.deleted_with == {"grace_period": 0, "preconditions": {"uid": pod["metadata"]["uid"]}}
        assert node.pod() is None and KEY not in node.worker.records and not node.pool.by_uid

    run(scenario)


ENDS_AT_3S = {"name": "app", "image": "busybox", "command": ["sh", "-c", "sleep 3; exit 3"]}


def deleting(node, grace=30):
    pod = node.pod()
    pod["metadata"].update(deletionTimestamp=format_time(node.clock.now() + grace), deletionGracePeriodSeconds=grace)
    node.submit(pod)


def test_a_container_that_ends_by_itself_while_stopping_lets_the_pod_go_then():
    node = Node(termination_seconds=5.0)

    async def scenario():
        node.submit(manifest(containers=[ENDS_AT_3S]))
        await node.reconcile()
        await node.clock.advance(1.0)
        deleting(node)
        assert await node.reconcile() == requeue_after(2.0)  # its own end comes before SIGTERM's 5 s
        await node.clock.advance(2.0)
        assert await node.reconcile() == DONE
        assert node.hub.verbs("pods")[-1] == "delete" and node.events.reasons().count("BackOff") == 0

    run(scenario)


def test_a_container_that_ended_before_the_deletion_was_seen_is_not_told_to_stop():
    node = Node(termination_seconds=5.0)

    async def scenario():
        node.submit(manifest(containers=[ENDS_AT_3S]))
        await node.reconcile()
        await node.clock.advance(4.0)  # it ended at 3 s; the kubelet looks again only now
        deleting(node)
        assert await node.reconcile() == DONE
        assert node.hub.verbs("pods")[-1] == "delete" and "Killing" not in node.events.reasons()

    run(scenario)


def test_a_container_waiting_to_restart_never_starts_again_once_the_pod_is_deleted():
    node = Node(termination_seconds=5.0)

    async def scenario():
        node.submit(manifest({"kubekitchen.dev/crash-after": "1"}))
        await node.clock.advance((await node.reconcile()).after)
        await node.reconcile()
        assert "waiting" in node.state()  # CrashLoopBackOff: nothing runs
        started = node.events.reasons().count("Started")
        deleting(node)
        assert await node.reconcile() == DONE  # nothing to stop: the final delete at once
        assert node.hub.verbs("pods")[-1] == "delete"
        assert node.events.reasons().count("Started") == started and "Killing" not in node.events.reasons()

    run(scenario)


def test_a_short_grace_period_deletes_in_one_look():
    node = Node(termination_seconds=1.0)

    async def scenario():
        node.submit(manifest())
        await node.reconcile()
        pod = node.pod()
        pod["metadata"].update(deletionTimestamp=format_time(node.clock.now()), deletionGracePeriodSeconds=0)
        node.submit(pod)
        assert await node.reconcile() == DONE
        assert node.hub.verbs("pods")[-2:] == ["replace_status", "delete"]

    run(scenario)


def test_a_deleted_pod_this_kubelet_never_ran_goes_at_once():
    node = Node()

    async def scenario():
        pod = manifest()
        pod["metadata"].update(deletionTimestamp="2027-01-01T00:00:00Z", deletionGracePeriodSeconds=30)
        node.submit(pod)
        assert await node.reconcile() == DONE
        assert node.hub.verbs("pods") == ["delete"]

    run(scenario)


def test_a_pod_that_vanished_is_forgotten_and_its_ip_freed():
    node = Node()

    async def scenario():
        node.submit(manifest())
        await node.reconcile()
        del node.hub.objects[("pods", "default", "web")]
        node.sync()
        actions = len(node.hub.actions)
        assert await node.reconcile() == DONE
        assert len(node.hub.actions) == actions and node.worker.records == {} and node.pool.by_uid == {}
        assert node.worker.log_target("default", "web", "app") is None

    run(scenario)


def test_a_pod_recreated_under_the_same_name_starts_over():
    node = Node()

    async def scenario():
        node.submit(manifest({"kubekitchen.dev/crash-after": "1"}))
        await node.reconcile()
        await node.clock.advance(1)
        await node.reconcile()
        old_uid = node.pod()["metadata"]["uid"]
        del node.hub.objects[("pods", "default", "web")]
        node.submit(manifest())
        await node.reconcile()
        cs = node.pod()["status"]["containerStatuses"][0]
        assert node.pod()["metadata"]["uid"] != old_uid
        assert cs["restartCount"] == 0 and "running" in cs["state"] and cs["lastState"] == {}
        assert list(node.pool.by_uid) == [node.pod()["metadata"]["uid"]]

    run(scenario)


def test_finished_pods_from_an_earlier_life_are_left_alone_and_running_ones_adopted():
    node = Node()

    async def scenario():
        node.submit(manifest())
        await node.reconcile()
        done = manifest(name="job")
        done["status"] = {"phase": "Succeeded"}
        node.submit(done)
        restarted = Node()
        restarted.hub, restarted.cache = node.hub, node.cache
        restarted.worker.client, restarted.worker.pods = node.hub, node.cache
        actions = len(node.hub.actions)
        assert await restarted.worker.reconcile("default/job") == DONE
        assert await restarted.worker.reconcile(KEY) == DONE
        assert len(node.hub.actions) == actions, "the adopted pod's status is already right: no write"
        assert restarted.worker.records[KEY].pod_ip == "10.244.1.2"

    run(scenario)


def test_pods_of_other_nodes_and_host_network_pods():
    node = Node()

    async def scenario():
        node.submit(manifest(name="elsewhere", nodeName="node-2"))
        assert await node.reconcile("default/elsewhere") == DONE and node.hub.actions == []
        node.submit(manifest(name="host", hostNetwork=True))
        await node.reconcile("default/host")
        assert node.pod("host")["status"]["podIP"] == "127.0.1.1" and node.pool.by_uid == {}

    run(scenario)


def test_mirror_pods_and_the_nodes_own_processes_are_not_run_here():
    """A static pod's mirror and a kube-proxy DaemonSet pod are reported by control.staticpods."""
    node = Node()

    async def scenario():
        node.submit(manifest(annotations={"kubernetes.io/config.mirror": "abc"}, name="mirror"))
        node.submit(manifest(annotations={"kubekitchen.dev/host-process": "kube-proxy"}, name="proxy"))
        assert await node.reconcile("default/mirror") == DONE and await node.reconcile("default/proxy") == DONE
        assert node.hub.actions == [] and node.events.reasons() == []
        assert node.pod("mirror")["status"] == {"phase": "Pending"}

    run(scenario)


def test_never_ready_records_unhealthy_and_log_target_is_current():
    node = Node()

    async def scenario():
        node.submit(manifest({"kubekitchen.dev/never-ready": "true", "kubekitchen.dev/crash-after": "5"}))
        await node.reconcile()
        assert "Unhealthy" in node.events.reasons()
        assert node.pod()["status"]["containerStatuses"][0]["ready"] is False
        await node.clock.advance(6)  # no reconcile yet: the log target still sees the crash
        target = node.worker.log_target("default", "web", "app")
        assert target.container.state == "backoff" and target.image == "nginx:1.25"
        assert node.worker.log_target("default", "web", "nope") is None

    run(scenario)


def ready_condition(pod):
    return next(c["status"] for c in pod["status"]["conditions"] if c["type"] == "Ready")


def test_the_unready_knob_flips_a_running_pod_both_ways():
    node = Node()

    async def annotate(value):
        pod = node.pod()
        pod["metadata"]["annotations"] = {} if value is None else {"kubekitchen.dev/unready": value}
        await node.hub.replace(PODS, pod)  # a user's write: the informer delivers it
        node.sync()

    async def scenario():
        node.submit(manifest())
        await node.reconcile()
        assert ready_condition(node.pod()) == "True"
        await annotate("true")
        assert await node.reconcile() == DONE, "nothing to wake up for: the annotation decides"
        assert ready_condition(node.pod()) == "False"
        assert node.pod()["status"]["containerStatuses"][0]["ready"] is False
        assert node.state()["running"], "the container keeps running; only readiness fails"
        assert any("kubekitchen.dev/unready" in message for *_, message in node.events.told)
        await annotate("false")
        await node.reconcile()
        assert ready_condition(node.pod()) == "True"
        await annotate("true")
        await node.reconcile()
        await annotate(None)
        await node.reconcile()
        assert ready_condition(node.pod()) == "True"
        assert sum("kubekitchen.dev/unready" in message for *_, message in node.events.told) == 2

    run(scenario)


def test_current_advances_containers_without_writing():
    node = Node(start_delay=0.5)

    async def scenario():
        node.submit(manifest())
        await node.reconcile()
        assert node.worker.current("default", "web")[2][0].state == "creating"
        writes = len(node.hub.actions)
        await node.clock.advance(1)
        pod, record, containers = node.worker.current("default", "web")
        assert containers[0].state == "running" and record.pod_ip.startswith("10.244.1.")
        assert len(node.hub.actions) == writes and node.worker.current("default", "nope") is None
        assert [found[0]["metadata"]["name"] for found in node.worker.all_current()] == ["web"]

    run(scenario)
