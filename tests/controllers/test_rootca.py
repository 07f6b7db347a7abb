"""The root CA publisher's reconcile against a fake hub: `kube-root-ca.crt` made, put back when
changed, made again when deleted, never in a terminating namespace."""

from __future__ import annotations

from control import errors
from control.clock import FakeClock
from control.client.resources import CONFIGMAPS, NAMESPACES
from control.controllers.rootca import CONFIGMAP_NAME, DESCRIPTION, DESCRIPTION_ANNOTATION, RootCAPublisher, build

from .fakes import START, FakeClient, fill, informers, metadata, run, vanish

CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def namespace(name: str, *, deleting: bool = False) -> dict:
    extra = {"deletionTimestamp": "2027-01-15T08:00:00Z"} if deleting else {}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata(name, None, **extra)}


def configmap(ns: str, data: dict, annotations: dict | None = None) -> dict:
    meta = metadata(CONFIGMAP_NAME, ns)
    meta["annotations"] = annotations if annotations is not None else {DESCRIPTION_ANNOTATION: DESCRIPTION}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


def setup(*objs):
    client, shared = FakeClient(), informers(FakeClock(START))
    namespaces, configmaps = shared.get(NAMESPACES), shared.get(CONFIGMAPS)
    controller = RootCAPublisher(client, namespaces, configmaps, clock=FakeClock(START), ca_pem=CA)
    for obj in objs:
        fill(namespaces if obj["kind"] == "Namespace" else configmaps, obj)
    return controller, client


def test_a_namespace_gets_the_ca_configmap():
    controller, client = setup(namespace("team"))
    run(controller.reconcile("team"))
    [made] = client.of("create", "configmaps")
    assert made.body["metadata"] == {"name": "kube-root-ca.crt", "namespace": "team",
                                     "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION}}
    assert made.body["data"] == {"ca.crt": CA}


def test_a_current_configmap_is_left_alone():
    controller, client = setup(namespace("team"), configmap("team", {"ca.crt": CA}))
    run(controller.reconcile("team"))
    assert client.summary() == []


def test_a_changed_configmap_is_put_back_with_its_resource_version():
    changed = configmap("team", {"ca.crt": "forged", "extra": "x"}, annotations={"mine": "kept"})
    controller, client = setup(namespace("team"), changed)
    run(controller.reconcile("team"))
    [put] = client.of("replace", "configmaps")
    assert put.body["data"] == {"ca.crt": CA}
    assert put.body["metadata"]["annotations"] == {"mine": "kept", DESCRIPTION_ANNOTATION: DESCRIPTION}
    assert put.body["metadata"]["resourceVersion"] == changed["metadata"]["resourceVersion"]
    assert changed["data"] == {"ca.crt": "forged", "extra": "x"}, "the cached object was not touched"


def test_a_deleted_configmap_queues_its_namespace():
    cm = configmap("team", {"ca.crt": CA})
    controller, client = setup(namespace("team"), cm)
    vanish(controller.configmaps, cm)
    assert len(controller.queue) == 1
    run(controller.reconcile("team"))
    assert len(client.of("create", "configmaps")) == 1


def test_nothing_in_a_terminating_namespace_and_a_namespace_going_ends_it():
    controller, client = setup(namespace("going", deleting=True), namespace("team"))
    run(controller.reconcile("going"))
    assert client.summary() == []
    client.fail("create", "configmaps", errors.not_found("/namespaces", "team"))
    assert run(controller.reconcile("team")).outcome == "done"


def test_build_publishes_the_data_folders_ca(tmp_path, monkeypatch):
    monkeypatch.setenv("KK_DATA_DIR", str(tmp_path))
    runner = build(client=FakeClient(), informers=informers(FakeClock(START)), clock=FakeClock(START),
                   timings=None, recorder=None)
    assert runner.name == "root-ca-cert-publisher"
    published = (tmp_path / "keys" / "ca.crt").read_text()
    assert published.startswith("-----BEGIN CERTIFICATE-----")
    assert runner.reconcile.__self__.ca_pem == published
