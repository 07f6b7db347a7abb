"""The pod worker with its runtime, on a fake hub and a FakeClock: CreateContainerConfigError until
the ConfigMap appears, env fixed at the start while mounted files follow the ConfigMap (subPath
does not), a claim that is missing or unbound keeps the pod ContainerCreating, and the
ServiceAccount token is requested, bound to the pod and renewed."""

from __future__ import annotations

import asyncio
import base64
import copy

from control import errors
from control.client.informer import Cache
from control.client.resources import PERSISTENTVOLUMECLAIMS, PODS
from control.client.runner import DONE, requeue_after
from control.clock import FakeClock
from control.kubelet.config import BackoffPolicy, KubeletConfig
from control.kubelet.containers import container_id
from control.kubelet.logs import LogRequest, render_log
from control.kubelet.node import IpPool
from control.kubelet.pods import PodWorker
from control.kubelet.runtime import Runtime
from tests.kubelet.fakes import FakeEvents, FakeHub

KEY = "default/web"
SYNC = 2.0


def manifest(**container):
    app = {"name": "app", "image": "nginx:1.25", **container}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
            "spec": {"nodeName": "node-1", "restartPolicy": "Always", "serviceAccountName": "default",
                     "containers": [app], "volumes": [
                         {"name": "config", "configMap": {"name": "app", "optional": True}},
                         {"name": "kube-api-access-abcde", "projected": {"defaultMode": 420, "sources": [
                             {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                             {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                             {"downwardAPI": {"items": [{"path": "namespace",
                                                         "fieldRef": {"fieldPath": "metadata.namespace"}}]}}]}}]},
            "status": {"phase": "Pending"}}


MOUNTS = [{"name": "config", "mountPath": "/etc/config"},
          {"name": "config", "mountPath": "/etc/motd", "subPath": "motd"},
          {"name": "kube-api-access-abcde", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": True}]


class Node:
    def __init__(self, tmp_path=None):
        self.hub, self.cache, self.clock, self.events = FakeHub(), Cache(), FakeClock(), FakeEvents()
        self.configmaps, self.secrets = Cache(), Cache()
        config = KubeletConfig(start_delay=(0.0, 0.0), backoff=BackoffPolicy(2, 8, 600), sync_seconds=SYNC,
                               data_dir=tmp_path)
        self.runtime = Runtime(self.hub, clock=self.clock, configmaps=self.configmaps, secrets=self.secrets,
                               data_dir=tmp_path)
        self.worker = PodWorker(self.hub, self.cache, node="node-1", host_ip="127.0.1.1", pool=IpPool("10.244.1.0/24"),
                                config=config, clock=self.clock, events=self.events, runtime=self.runtime)

    def submit(self, pod):
        stored = self.hub.put(PODS, pod)
        self.cache.put(copy.deepcopy(stored))

    def configmap(self, name, **data):
        self.configmaps.put({"metadata": {"name": name, "namespace": "default"}, "data": data})

    async def reconcile(self):
        result = await self.worker.reconcile(KEY)
        self.cache.put(self.hub.stored(PODS, "web", "default"))
        return result

    def status(self):
        return self.hub.stored(PODS, "web", "default")["status"]["containerStatuses"][0]

    def run_id(self):
        return self.status()["containerID"].removeprefix("kitchen://")

    def files(self):
        return self.runtime.files(self.cache.get(KEY), "app", self.run_id(), "10.244.1.2")

    def env(self):
        return self.runtime.config(self.cache.get(KEY), "app", self.run_id()).env


def run(scenario):
    asyncio.run(scenario())


def test_a_missing_config_map_is_create_container_config_error_until_it_appears():
    node = Node()

    async def scenario():
        node.submit(manifest(env=[{"name": "COLOR", "valueFrom": {"configMapKeyRef": {"name": "app", "key": "color"}}}],
                             volumeMounts=MOUNTS))
        assert await node.reconcile() == requeue_after(SYNC)
        assert node.status()["state"] == {"waiting": {"reason": "CreateContainerConfigError",
                                                      "message": 'configmap "app" not found'}}
        assert node.hub.stored(PODS, "web", "default")["status"]["phase"] == "Pending"
        assert ("web", "Warning", "Failed", 'Error: configmap "app" not found') in node.events.told
        writes, told = node.hub.verbs("pods").count("replace_status"), len(node.events.told)
        await node.clock.advance(SYNC)
        assert await node.reconcile() == requeue_after(SYNC)
        assert node.hub.verbs("pods").count("replace_status") == writes and len(node.events.told) == told
        node.configmap("app", other="x")
        await node.reconcile()
        assert node.status()["state"]["waiting"]["message"] == "couldn't find key color in ConfigMap default/app"
        node.configmap("app", color="blue", motd="hello")
        await node.clock.advance(1)
        assert await node.reconcile() != requeue_after(SYNC)
        assert "running" in node.status()["state"] and node.env()["COLOR"] == "blue"
        assert node.events.reasons()[-3:] == ["Pulled", "Created", "Started"]

    run(scenario)


def test_mounted_files_follow_the_config_map_but_env_and_sub_path_do_not():
    node = Node()

    async def scenario():
        node.configmap("app", color="blue", motd="hello")
        node.submit(manifest(env=[{"name": "COLOR", "valueFrom": {"configMapKeyRef": {"name": "app", "key": "color"}}}],
                             volumeMounts=MOUNTS))
        await node.reconcile()
        fs = node.files()
        assert fs.read("/etc/config/color") == b"blue" and fs.read("/etc/motd") == b"hello"
        node.configmap("app", color="green", motd="bye")
        await node.clock.advance(5)
        await node.reconcile()  # the kubelet's watch of the ConfigMap enqueues the pod
        assert fs.read("/etc/config/color") == b"green" and fs.list_dir("/etc/config") == ["color", "motd"]
        assert fs.read("/etc/motd") == b"hello", "subPath keeps the old value"
        assert node.env()["COLOR"] == "blue", "env keeps the old value"

    run(scenario)


def test_the_service_account_token_is_requested_bound_to_the_pod_and_renewed():
    node = Node()

    async def scenario():
        node.configmap("kube-root-ca.crt", **{"ca.crt": "PEM"})
        node.submit(manifest(volumeMounts=MOUNTS))
        result = await node.reconcile()
        assert result.outcome == "requeue_after" and abs(result.after - 0.8 * 3607) < 1e-3
        fs = node.files()
        folder = "/var/run/secrets/kubernetes.io/serviceaccount"
        assert fs.list_dir(folder) == ["ca.crt", "namespace", "token"]
        assert fs.read(f"{folder}/token") == b"token-1" and fs.read(f"{folder}/namespace") == b"default"
        assert fs.read(f"{folder}/ca.crt") == b"PEM"
        await node.clock.advance(0.8 * 3607)
        await node.reconcile()
        assert fs.read(f"{folder}/token") == b"token-2"
        assert [a for a in node.hub.actions if a[1] == "token"] == [
            ("post", "token", "/api/v1/namespaces/default/serviceaccounts/default/token")] * 2

    run(scenario)


def test_a_token_that_cannot_be_had_is_retried_without_holding_the_pod():
    node = Node()

    async def scenario():
        node.hub.fail("token", errors.NotFound('serviceaccounts "default" not found'))
        node.submit(manifest(volumeMounts=MOUNTS))
        assert await node.reconcile() == requeue_after(SYNC)
        assert "running" in node.status()["state"] and not node.files().exists(
            "/var/run/secrets/kubernetes.io/serviceaccount/token")
        node.hub.fail("token", errors.NotFound('serviceaccounts "default" not found'))
        await node.clock.advance(SYNC)  # 2 s: past the first back-off (1 s), the second request fails too
        await node.reconcile()
        await node.clock.advance(1)  # inside the second back-off (2 s): no request
        await node.reconcile()
        assert len([a for a in node.hub.actions if a[1] == "token"]) == 2
        await node.clock.advance(SYNC)
        await node.reconcile()
        assert node.files().read("/var/run/secrets/kubernetes.io/serviceaccount/token") == b"token-1"

    run(scenario)


def test_a_claim_missing_or_unbound_keeps_the_pod_creating_then_its_disk_is_mounted(tmp_path):
    node = Node(tmp_path)

    async def scenario():
        pod = manifest(volumeMounts=[{"name": "data", "mountPath": "/data"}])
        pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "store"}}]
        node.submit(pod)
        assert await node.reconcile() == requeue_after(SYNC)
        assert node.status()["state"] == {"waiting": {"reason": "ContainerCreating"}}
        assert node.events.told[-1][2:] == ("FailedMount", "Unable to attach or mount volumes: unmounted volumes=[data]: "
                                            "error processing PVC default/store: failed to fetch PVC from API server: "
                                            'persistentvolumeclaims "store" not found')
        claim = {"metadata": {"name": "store", "namespace": "default"}, "spec": {}, "status": {"phase": "Pending"}}
        node.hub.put(PERSISTENTVOLUMECLAIMS, claim)
        await node.clock.advance(SYNC)
        assert await node.reconcile() == requeue_after(SYNC)
        assert node.events.told[-1][3].endswith("error processing PVC default/store: PVC is not bound")
        node.hub.put(PERSISTENTVOLUMECLAIMS, {**claim, "spec": {"volumeName": "pv-store"}, "status": {"phase": "Bound"}})
        await node.clock.advance(SYNC)
        await node.reconcile()
        assert "running" in node.status()["state"]
        node.files().write("/data/kept", b"yes")
        assert (tmp_path / "volumes" / "pv-store" / "kept").read_bytes() == b"yes"

    run(scenario)


def test_a_forgotten_pod_drops_its_runs_files_and_configs():
    node = Node()

    async def scenario():
        node.configmap("app", color="blue")
        node.submit(manifest(volumeMounts=MOUNTS))
        await node.reconcile()
        run_id = node.run_id()
        assert run_id in node.runtime.sandboxes and run_id in node.runtime.configs
        uid = node.hub.stored(PODS, "web", "default")["metadata"]["uid"]
        assert run_id == container_id(f"{uid}/app", 0)
        node.hub.objects.clear()
        node.cache.pop(KEY)
        assert await node.worker.reconcile(KEY) == DONE
        assert run_id not in node.runtime.sandboxes and run_id not in node.runtime.configs
        assert uid not in node.runtime.volumes.pods

    run(scenario)


def test_secret_env_is_decoded():
    node = Node()

    async def scenario():
        node.secrets.put({"metadata": {"name": "db", "namespace": "default"},
                          "data": {"password": base64.b64encode(b"s3cret").decode()}})
        node.submit(manifest(envFrom=[{"secretRef": {"name": "db"}, "prefix": "DB_"}]))
        await node.reconcile()
        assert node.env() == {"DB_password": "s3cret"}

    run(scenario)


def log_of(node, container="app", **options):
    target = node.worker.log_target("default", "web", container)
    return render_log(target, LogRequest("default", "web", container, **options), node.clock.now(), 2)


def test_logs_are_what_the_expanded_command_printed():
    node = Node()

    async def scenario():
        node.submit(manifest(image="busybox", command=["sh", "-c", "echo $(GREETING) to $NAME; sleep infinity"],
                             env=[{"name": "NAME", "value": "you"}, {"name": "GREETING", "value": "hi $(NAME)"}]))
        await node.reconcile()
        assert log_of(node) == "hi you to you\n"

    run(scenario)


def test_the_counter_pod_of_kubernetes_io_logs_a_line_a_second():
    """kubernetes.io's debug-running-pod counter: `i=0; while true; do echo "$i: $(date)"; ...`."""
    node = Node()

    async def scenario():
        loop = 'i=0; while true; do echo "$i: $(date)"; i=$((i+1)); sleep 1; done'
        node.submit(manifest(image="busybox:1.28", args=["/bin/sh", "-c", loop]))
        await node.reconcile()
        started = node.clock.now()
        await node.clock.advance(3.5)
        lines = log_of(node).splitlines()
        assert [line.split(":")[0] for line in lines] == ["0", "1", "2", "3"]
        assert lines[0].endswith(" UTC " + __import__("time").strftime("%Y", __import__("time").gmtime(started)))
        assert "kitchen" not in log_of(node)

    run(scenario)


def test_the_define_a_command_example_logs_what_printenv_prints():
    """kubernetes.io's define-command-argument-container: `printenv HOSTNAME KUBERNETES_PORT`."""
    node = Node()

    async def scenario():
        node.submit(manifest(image="debian", command=["printenv"], args=["HOSTNAME", "KUBERNETES_PORT"]))
        await node.reconcile()
        await node.clock.advance(2)
        text = log_of(node)
        assert text.splitlines()[0] == "web", text

    run(scenario)


def test_a_failing_renewal_waits_out_its_back_off_instead_of_spinning():
    node = Node()

    async def scenario():
        node.submit(manifest(volumeMounts=MOUNTS))
        await node.reconcile()
        await node.clock.advance(0.8 * 3607)
        node.hub.fail("token", errors.ServiceUnavailable("the hub is away"))
        result = await node.reconcile()
        assert result.outcome == "requeue_after" and result.after >= 1.0
        fs = node.files()
        assert fs.read("/var/run/secrets/kubernetes.io/serviceaccount/token") == b"token-1", "the old token stays"
        await node.clock.advance(result.after)
        await node.reconcile()
        assert fs.read("/var/run/secrets/kubernetes.io/serviceaccount/token") == b"token-2"

    run(scenario)


def test_a_restart_starts_from_fresh_files_with_its_own_config():
    node = Node()

    async def scenario():
        node.configmap("app", color="blue")
        pod = manifest(env=[{"name": "COLOR", "valueFrom": {"configMapKeyRef": {"name": "app", "key": "color"}}}],
                       volumeMounts=MOUNTS)
        pod["metadata"]["annotations"] = {"kubekitchen.dev/crash-after": "5"}
        node.submit(pod)
        await node.reconcile()
        first = node.run_id()
        node.files().write("/tmp/mine", b"x")
        node.configmap("app", color="green")
        await node.clock.advance(5 + 2)  # the crash, then the 2 s back-off
        await node.reconcile()
        await node.reconcile()
        assert node.status()["restartCount"] == 1 and node.run_id() != first
        assert first not in node.runtime.sandboxes and not node.files().exists("/tmp/mine")
        assert node.env()["COLOR"] == "green", "a new run makes its env anew"

    run(scenario)


def test_a_downward_api_file_follows_the_pods_labels():
    node = Node()

    async def scenario():
        pod = manifest(volumeMounts=[{"name": "info", "mountPath": "/etc/podinfo"}])
        pod["spec"]["volumes"] = [{"name": "info", "downwardAPI": {"items": [
            {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}}]
        node.submit(pod)
        await node.reconcile()
        fs = node.files()
        assert fs.read("/etc/podinfo/labels") == b'app="web"'
        stored = node.hub.stored(PODS, "web", "default")
        stored["metadata"]["labels"]["tier"] = "front"
        node.submit(stored)  # `kubectl label pod web tier=front`: the pod informer enqueues it
        await node.reconcile()
        assert fs.read("/etc/podinfo/labels") == b'app="web"\ntier="front"'

    run(scenario)


def test_the_hostaliases_example_logs_the_hosts_file_the_kubelet_wrote():
    """kubernetes.io's hostaliases-pod: `cat /etc/hosts` logs the managed file with the aliases."""
    node = Node()

    async def scenario():
        pod = manifest(image="busybox:1.28", command=["cat"], args=["/etc/hosts"])
        pod["spec"]["hostAliases"] = [{"ip": "127.0.0.1", "hostnames": ["foo.local", "bar.local"]}]
        node.submit(pod)
        await node.reconcile()
        await node.clock.advance(0.5)
        text = log_of(node)
        assert text.startswith("# Kubernetes-managed hosts file.\n") and "127.0.0.1\tfoo.local\tbar.local\n" in text, text
        assert "\tweb\n" in text

    run(scenario)


def test_an_image_run_with_its_own_command_logs_what_that_prints_at_start():
    """nginx without a command: its entrypoint's lines (the catalogue's `log`), stamped with the start."""
    node = Node()

    async def scenario():
        node.submit(manifest(image="nginx:1.25"))
        await node.reconcile()
        lines = log_of(node).splitlines()
        assert lines[0] == "/docker-entrypoint.sh: /docker-entrypoint.d/ is not empty, will attempt to perform configuration"
        started = __import__("datetime").datetime.fromtimestamp(node.clock.now(), __import__("datetime").timezone.utc)
        assert lines[-1] == started.strftime("%Y/%m/%d %H:%M:%S") + " [notice] 1#1: start worker process 29"

    run(scenario)


def test_a_long_history_is_replayed_in_turns_before_a_log_request_reads_it():
    """The first `kubectl logs` of a counter pod that ran an hour: the replay lets other work in."""
    node = Node()

    async def scenario():
        loop = 'i=0; while true; do echo "$i"; i=$((i+1)); sleep 1; done'
        node.submit(manifest(image="busybox", command=["sh", "-c", loop]))
        await node.reconcile()
        await node.clock.advance(3600)
        target = node.worker.log_target("default", "web", "app")
        turns = 0

        async def other_work():
            nonlocal turns
            while True:
                turns += 1
                await asyncio.sleep(0)

        beside = asyncio.ensure_future(other_work())
        await target.catch_up(target.container.current, node.clock.now())
        beside.cancel()
        assert turns >= 10, "heartbeats and other requests ran between the turns"
        assert log_of(node).splitlines()[-1] == "3600"

    run(scenario)


# --- a container's own command on the network, decided by NetworkPolicies --------------------

from control.clock import settle  # noqa: E402
from control.kubelet.network import NetworkHandle  # noqa: E402
from control.proxy.policy import PolicyView, line_fields  # noqa: E402

KITCHEN_IP = "10.244.2.9"
WGET_LOOP = "while true; do wget -qO- --timeout=2 http://kitchen; sleep 5; done"
DENY_EGRESS = {"metadata": {"name": "default-deny-egress", "namespace": "default"},
               "spec": {"podSelector": {}, "policyTypes": ["Egress"]}}


class TrafficHub(FakeHub):
    """The hub's traffic path as kube-proxy answers it: Service `kitchen` with one pod on node-2,
    decided by a real `PolicyView` (the policies and pods put in by the test)."""

    def __init__(self):
        super().__init__()
        self.view, self.sent = PolicyView("127.0.1.1"), []
        self.view.namespace_changed({"metadata": {"name": "default",
                                                  "labels": {"kubernetes.io/metadata.name": "default"}}})
        self.view.pod_changed({"metadata": {"name": "kitchen-1", "namespace": "default", "labels": {"app": "kitchen"}},
                               "spec": {}, "status": {"phase": "Running", "podIP": KITCHEN_IP, "hostIP": "127.0.2.1"}})

    async def stream_lines(self, method, path, *, params=None, read_timeout=None):
        self.sent.append(dict(params))
        source = params.get("source", "")
        verdict = self.view.decide(source, KITCHEN_IP, 80)
        line = {"seq": 0, "code": 200, "service": "default/kitchen", "endpoint": f"{KITCHEN_IP}:80",
                "pod": "kitchen-1", "podNamespace": "default", "podNode": "node-2"}
        line.update(line_fields(verdict, source=source, target=KITCHEN_IP, port=80, protocol="TCP",
                                shown=self.view.shown))
        yield line
        yield {"done": True}


def networked_node() -> Node:
    node = Node()
    node.hub = hub = TrafficHub()
    node.runtime = Runtime(hub, clock=node.clock, network=lambda ns, source: NetworkHandle(hub, "node-1", ns, source))
    config = KubeletConfig(start_delay=(0.0, 0.0), backoff=BackoffPolicy(2, 8, 600), sync_seconds=SYNC)
    node.worker = PodWorker(hub, node.cache, node="node-1", host_ip="127.0.1.1", pool=IpPool("10.244.1.0/24"),
                            config=config, clock=node.clock, events=node.events, runtime=node.runtime)
    return node


def test_a_containers_own_wget_loop_logs_the_answer_then_times_out_under_a_default_deny_egress():
    node = networked_node()

    async def scenario():
        node.submit(manifest(image="busybox", command=["sh", "-c", WGET_LOOP]))
        await node.reconcile()
        pod = node.hub.stored(PODS, "web", "default")
        node.hub.view.pod_changed(pod)  # kube-proxy knows the client pod by its IP
        await settle()
        await node.clock.advance(1.0)
        sent = node.hub.sent
        assert len(sent) == 1 and sent[0]["source"] == pod["status"]["podIP"] and sent[0]["node"] == "node-1"
        assert log_of(node).splitlines() == ['{"pod":"kitchen-1","namespace":"default","node":"node-2",'
                                             f'"podIP":"{KITCHEN_IP}","port":80}}']
        node.hub.view.policy_changed(DENY_EGRESS)
        await node.clock.advance(5.0)  # the next turn of the loop is dropped: it hangs for --timeout=2
        assert len(sent) == 2 and log_of(node).splitlines()[-1].startswith('{"pod":"kitchen-1"')
        await node.clock.advance(2.0)
        assert log_of(node).splitlines()[-1] == "wget: download timed out"
        await node.clock.advance(14.2)  # two more turns, each 5 s + 2 s: the shell's clock paces the calls
        assert len(sent) == 4 and log_of(node).splitlines()[-3:] == ["wget: download timed out"] * 3
        node.worker.forget(KEY)
        node.runtime.forget_runs({node.run_id()})
        await node.clock.advance(60.0)
        assert len(sent) == 4, "a forgotten run makes no more calls"

    run(scenario)


def test_a_container_that_never_reaches_the_network_costs_no_call_and_no_timer():
    node = networked_node()

    async def scenario():
        node.submit(manifest(image="busybox:1.28",
                             args=["/bin/sh", "-c", 'i=0; while true; do echo "$i: $(date)"; i=$((i+1)); sleep 1; done']))
        await node.reconcile()
        await settle()
        assert node.clock.pending() == 0 and not node.runtime.processes, "replayed only when read"
        await node.clock.advance(3.5)
        assert len(log_of(node).splitlines()) == 4
        assert node.clock.pending() == 0 and node.hub.sent == []

    run(scenario)


def test_a_crash_looping_wget_makes_one_call_per_run_paced_by_the_back_off():
    """kubernetes.io's `wget -O- nginx` as a pod's command: it answers, exits, and restarts after
    the back-off (2 s doubling to 8 s here): one call per run, none in between."""
    node = networked_node()

    async def scenario():
        node.submit(manifest(image="busybox", command=["wget", "-O-", "kitchen"]))
        await node.reconcile()
        await settle()
        assert len(node.hub.sent) == 1
        for _ in range(60):  # a minute of the kubelet waking at every second
            await node.clock.advance(1.0)
            await node.reconcile()
            await settle()
        restarts = node.status()["restartCount"]
        assert 4 <= restarts <= 8 and len(node.hub.sent) == restarts + 1

    run(scenario)
