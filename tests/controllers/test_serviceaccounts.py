"""The ServiceAccounts controller's reconcile against a fake hub: `default` made where missing,
made again when deleted, never in a terminating namespace, refusals that end it."""

from __future__ import annotations

from control import errors
from control.clock import FakeClock
from control.client.resources import NAMESPACES
from control.controllers.serviceaccounts import SERVICEACCOUNTS, ServiceAccountsController

from .fakes import START, FakeClient, fill, informers, metadata, observe, run, vanish


def namespace(name: str, *, deleting: bool = False) -> dict:
    extra = {"deletionTimestamp": "2027-01-15T08:00:00Z"} if deleting else {}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata(name, None, **extra),
            "status": {"phase": "Terminating" if deleting else "Active"}}


def account(name: str, ns: str) -> dict:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": metadata(name, ns)}


def setup(*objs):
    client, shared = FakeClient(), informers(FakeClock(START))
    namespaces, accounts = shared.get(NAMESPACES), shared.get(SERVICEACCOUNTS)
    controller = ServiceAccountsController(client, namespaces, accounts, clock=FakeClock(START))
    for obj in objs:
        fill(namespaces if obj["kind"] == "Namespace" else accounts, obj)
    return controller, client


def test_a_namespace_without_default_gets_one():
    controller, client = setup(namespace("team"))
    run(controller.reconcile("team"))
    [made] = client.of("create", "serviceaccounts")
    assert made.namespace == "team"
    assert made.body == {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": "team"}}


def test_a_namespace_with_default_is_left_alone_and_twice_changes_nothing():
    controller, client = setup(namespace("team"), account("default", "team"), account("other", "team"))
    run(controller.reconcile("team"))
    run(controller.reconcile("team"))
    assert client.summary() == []


def test_nothing_is_made_in_a_terminating_or_missing_namespace():
    controller, client = setup(namespace("going", deleting=True))
    run(controller.reconcile("going"))
    run(controller.reconcile("never-was"))
    assert client.summary() == []


def test_a_deleted_default_queues_its_namespace_and_is_made_again():
    sa = account("default", "team")
    controller, client = setup(namespace("team"), sa)
    vanish(controller.accounts, sa)
    assert len(controller.queue) == 1
    run(controller.reconcile("team"))
    assert [a.namespace for a in client.of("create", "serviceaccounts")] == ["team"]


def test_other_accounts_going_do_not_wake_it():
    sa = account("build", "team")
    controller, client = setup(namespace("team"), sa)
    vanish(controller.accounts, sa)
    assert len(controller.queue) == 0


def test_a_new_namespace_is_queued_by_its_event():
    controller, _ = setup()
    observe(controller.namespaces, namespace("fresh"))
    assert len(controller.queue) == 1


def test_refusals_for_a_lagging_cache_or_a_namespace_going_end_it_others_retry():
    controller, client = setup(namespace("team"))
    client.fail("create", "serviceaccounts", errors.already_exists("/serviceaccounts", "default"))
    assert run(controller.reconcile("team")).outcome == "done"
    client.fail("create", "serviceaccounts", errors.Forbidden("unable to create new content in namespace team "
                                                              "because it is being terminated"))
    assert run(controller.reconcile("team")).outcome == "done"
    client.fail("create", "serviceaccounts", errors.InternalError("boom"))
    try:
        run(controller.reconcile("team"))
    except errors.InternalError:
        pass  # the runner turns it into a retry with back-off
    else:
        raise AssertionError("a hub failure must not be swallowed")
