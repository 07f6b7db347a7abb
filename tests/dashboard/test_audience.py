"""Traffic records per viewer: their own, those of namespaces and kinds they may list, all for a
cluster admin; the rules asked of the hub once per namespace, again after an RBAC write that can
concern the viewer (at once when it may take rules away, within GRANT_RECHECK when it can only
grant) or when old."""

from __future__ import annotations

import asyncio

from control.clock import FakeClock
from dashboard.audience import GRANT_RECHECK, LOST_RECHECK, MAX_AGE, RECHECK_AFTER, Audience

READ = ["get", "list", "watch"]
NODES_VIEW = {"verbs": READ, "apiGroups": [""], "resources": ["nodes"]}
BASIC = {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectrulesreviews"]}
ADMIN_IN_NS = {"verbs": ["*"], "apiGroups": ["", "apps"], "resources": ["*"]}
EVERYTHING = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}


class Hub:
    """The rules a SelfSubjectRulesReview answers, per namespace; counts the reviews."""

    def __init__(self, cluster: list, namespaces: dict[str, list] | None = None):
        self.cluster, self.namespaces = cluster, namespaces or {}
        self.asked: list[str] = []
        self.failing = False

    async def review(self, namespace: str) -> list:
        self.asked.append(namespace)
        if self.failing:
            raise OSError("hub gone")
        return self.cluster + (self.namespaces.get(namespace, []) if namespace else [])


def request(user: str, namespace: str | None, resource: str = "pods", group: str = "", verb: str = "list",
            code: int = 200) -> dict:
    record = {"type": "request", "who": f"kubectl · {user}", "verb": verb, "resource": resource, "code": code,
              "user": user}
    if namespace is not None:
        record["scope"] = {"namespace": namespace, "group": group, "resource": resource.split("/")[0]}
    return record


def visible(audience: Audience, records: list[dict]) -> list[dict]:
    return asyncio.run(audience.visible(records))


def alice_hub() -> Hub:
    return Hub([NODES_VIEW, BASIC], {"alice": [ADMIN_IN_NS]})


def test_an_attendee_receives_their_own_their_namespace_and_what_they_may_list_cluster_wide():
    hub = alice_hub()
    audience = Audience("alice", hub.review, FakeClock())
    records = [request("bob", "bob"), request("bob", "alice", "deployments", "apps"), request("alice", "bob"),
               request("bob", ""), request("bob", "", "nodes"), request("bob", None, "/version"),
               request("kube-scheduler", "alice", "pods/binding"), request("bob", "bob", "configmaps"),
               {"type": "watch", "who": "kube-scheduler", "user": "system:kube-scheduler", "count": 3,
                "scope": {"namespace": "", "group": "", "resource": "pods"}}]
    shown = visible(audience, records)
    assert shown == [records[1], records[2], records[4], records[6]]
    assert sorted(hub.asked) == ["", "alice", "bob"]  # the cluster scope, then each namespace met once


def test_a_cluster_admin_receives_everything_without_a_decision_per_namespace():
    hub = Hub([EVERYTHING])
    audience = Audience("kubernetes-admin", hub.review, FakeClock())
    records = [request("bob", "bob"), request("alice", None, "/version"), request("bob", "", "secrets")]
    assert visible(audience, records) == records
    assert visible(audience, [request("carol", "carol")]) != []
    assert hub.asked == [""]


def test_without_a_viewer_everything_passes_and_nothing_is_asked():
    hub = alice_hub()
    records = [request("bob", "bob")]
    assert visible(Audience(None, hub.review), records) == records
    assert hub.asked == []


def rbac_write(user: str, namespace: str, resource: str = "rolebindings", verb: str = "create",
               code: int = 201) -> dict:
    return request(user, namespace, resource, "rbac.authorization.k8s.io", verb=verb, code=code)


def test_decisions_are_kept_until_an_rbac_write_that_may_take_rules_away():
    hub = alice_hub()
    audience = Audience("alice", hub.review, FakeClock())
    assert visible(audience, [request("bob", "bob")]) == []
    assert visible(audience, [request("bob", "bob"), request("bob", "alice")]) == [request("bob", "alice")]
    assert sorted(hub.asked) == ["", "alice", "bob"]
    # the admin takes alice's rules in her namespace away: held rules of her own there, read at once
    hub.namespaces["alice"] = []
    shown = visible(audience, [rbac_write("kubernetes-admin", "alice", verb="delete", code=200),
                               request("bob", "alice")])
    assert shown == []
    assert sorted(hub.asked) == ["", "alice", "alice", "bob"]
    # a refused write or a read of RBAC objects changes nothing
    visible(audience, [rbac_write("bob", "alice", code=403), rbac_write("bob", "alice", verb="list", code=200),
                       request("bob", "alice")])
    assert len(hub.asked) == 4


def test_a_write_where_the_viewer_holds_nothing_of_its_own_is_read_within_grant_recheck():
    hub, clock = alice_hub(), FakeClock()
    audience = Audience("alice", hub.review, clock)
    visible(audience, [request("bob", "bob")])
    assert sorted(hub.asked) == ["", "bob"]
    # bob binds alice to view his namespace: it can only grant, so it is not asked at once...
    hub.namespaces["bob"] = [{"verbs": READ, "apiGroups": [""], "resources": ["pods"]}]
    assert visible(audience, [rbac_write("bob", "bob"), request("bob", "bob")]) == []
    clock.t += GRANT_RECHECK / 2
    visible(audience, [rbac_write("bob", "bob", "roles"), request("bob", "bob")])  # nor later, nor twice
    assert len(hub.asked) == 2
    clock.t += GRANT_RECHECK / 2  # ...but within GRANT_RECHECK of the first write
    assert visible(audience, [request("bob", "bob")]) == [request("bob", "bob")]
    assert sorted(hub.asked) == ["", "bob", "bob"]
    clock.t += GRANT_RECHECK  # bob's rules are alice's own now: his next write is read at once
    visible(audience, [rbac_write("bob", "bob", verb="delete", code=200), request("bob", "bob")])
    assert sorted(hub.asked) == ["", "bob", "bob", "bob"]


def test_a_room_writing_rbac_in_their_own_namespaces_costs_a_page_one_review_per_namespace_per_period():
    """Ten attendees each applying a Role and a RoleBinding every 10 s for a minute (t = 0..60):
    alice's page asks each of their namespaces again once per GRANT_RECHECK (t = 30, 60), not once
    or twice per write (140 to 280)."""
    hub, clock = alice_hub(), FakeClock()
    audience = Audience("alice", hub.review, clock)
    names = [f"attendee-{i}" for i in range(10)]
    visible(audience, [request(name, name) for name in names])
    assert len(hub.asked) == 11
    for _ in range(7):
        visible(audience, [record for name in names for record in
                           (rbac_write(name, name, "roles"), rbac_write(name, name), request(name, name))])
        clock.t += 10
    assert len(hub.asked) == 11 + 10 * 2


def test_a_cluster_admin_asks_nothing_for_namespaced_rbac_writes_and_the_cluster_scope_for_cluster_ones():
    hub = Hub([EVERYTHING])
    audience = Audience("kubernetes-admin", hub.review, FakeClock())
    visible(audience, [request("bob", "bob")])
    visible(audience, [rbac_write(f"attendee-{i}", f"attendee-{i}") for i in range(5)] + [request("bob", "bob")])
    assert hub.asked == [""]
    visible(audience, [rbac_write("kubernetes-admin", "", "clusterrolebindings", verb="delete", code=200)])
    assert hub.asked == ["", ""]  # a ClusterRoleBinding may be what made them an admin


def test_a_cluster_wide_rbac_write_drops_every_namespace():
    hub = alice_hub()
    audience = Audience("alice", hub.review, FakeClock())
    visible(audience, [request("bob", "bob"), request("bob", "alice")])
    hub.cluster = hub.cluster + [{"verbs": READ, "apiGroups": [""], "resources": ["pods"]}]
    write = request("kubernetes-admin", "", "clusterrolebindings", "rbac.authorization.k8s.io", verb="create",
                    code=201)
    assert visible(audience, [write, request("bob", "bob")]) == [request("bob", "bob")]
    assert sorted(hub.asked) == ["", "", "alice", "bob", "bob"]


def test_rules_are_asked_again_when_old_and_soon_after_a_failure():
    hub, clock = alice_hub(), FakeClock()
    audience = Audience("alice", hub.review, clock)
    hub.failing = True
    assert visible(audience, [request("bob", "alice"), request("alice", "bob")]) == [request("alice", "bob")]
    hub.failing = False
    assert visible(audience, [request("bob", "alice")]) == []  # not asked again at once
    clock.t += 3
    assert visible(audience, [request("bob", "alice")]) == [request("bob", "alice")]
    asked = len(hub.asked)
    clock.t += MAX_AGE + 1
    visible(audience, [request("bob", "alice")])
    assert len(hub.asked) == asked + 2  # the cluster scope and alice's namespace, read again


def test_a_namespace_read_again_changes_a_decision_already_made():
    hub, clock = alice_hub(), FakeClock()
    audience = Audience("alice", hub.review, clock)
    hub.namespaces["bob"] = [{"verbs": READ, "apiGroups": [""], "resources": ["pods"]}]
    failing = hub.review

    async def bob_fails(namespace: str) -> list:
        if namespace == "bob":
            raise OSError("hub busy")
        return await failing(namespace)

    audience.review = bob_fails
    assert visible(audience, [request("bob", "bob")]) == []  # hidden while unknown
    audience.review = failing
    clock.t += 3  # bob's namespace is asked again, the cluster scope is still fresh
    assert visible(audience, [request("bob", "bob")]) == [request("bob", "bob")]


def numbered(records: list[dict], first: int) -> list[dict]:
    """The records as one hub numbers them (`seq`), from `first`."""
    return [{**record, "seq": first + i} for i, record in enumerate(records)]


def test_a_room_of_steady_traffic_asks_once_per_namespace_not_once_per_period():
    """A page meeting ten attendees' namespaces for ten minutes asks eleven reviews at first and
    eleven at the backstop (`MAX_AGE`), not eleven every 30 s (220)."""
    hub, clock = alice_hub(), FakeClock()
    audience = Audience("alice", hub.review, clock)
    room = [request(f"attendee-{i}", f"attendee-{i}") for i in range(10)]
    seq = 1
    for _ in range(200):  # one batch every 3 s
        asyncio.run(audience.visible(numbered(room, seq), "hub-a"))
        seq += len(room)
        clock.t += 3
    assert len(hub.asked) == 22 and MAX_AGE >= 300


def test_an_rbac_write_is_read_at_once_and_once_more_after_other_hubs_caught_up():
    hub, clock = alice_hub(), FakeClock()
    audience = Audience("alice", hub.review, clock)
    visible(audience, [request("bob", "alice")])
    write = rbac_write("kubernetes-admin", "alice", verb="delete", code=200)
    visible(audience, [write, request("bob", "alice")])
    assert sorted(hub.asked) == ["", "alice", "alice"]
    asked = len(hub.asked)
    # the hub that answered had not seen the deletion yet (its RBAC snapshot lags): still shown
    assert visible(audience, [request("bob", "alice")]) == [request("bob", "alice")]
    hub.namespaces["alice"] = []
    clock.t += RECHECK_AFTER + 0.1
    assert visible(audience, [request("bob", "alice")]) == []
    assert hub.asked[asked:] == ["alice"]
    clock.t += RECHECK_AFTER + 0.1  # read outside the doubt: kept until the backstop
    visible(audience, [request("bob", "alice")])
    assert hub.asked[asked:] == ["alice"]


def test_records_that_never_arrived_have_every_rule_read_again_soon():
    hub, clock = alice_hub(), FakeClock()
    audience = Audience("alice", hub.review, clock)
    asyncio.run(audience.visible(numbered([request("bob", "bob"), request("carol", "carol")], 1), "hub-a"))
    asyncio.run(audience.visible(numbered([request("bob", "bob")], 3), "hub-a"))  # no gap: nothing asked
    assert sorted(hub.asked) == ["", "bob", "carol"]
    # records 4 and 5 were dropped on the way (one may have been an RBAC write): read again soon
    hub.namespaces["bob"] = [{"verbs": READ, "apiGroups": [""], "resources": ["pods"]}]
    bob = request("bob", "bob")
    assert asyncio.run(audience.visible(numbered([bob], 6), "hub-a")) == []
    clock.t += 10
    assert asyncio.run(audience.visible(numbered([bob], 8), "hub-a")) == []  # 7 lost too: not sooner
    assert len(hub.asked) == 3
    clock.t += LOST_RECHECK - 10
    assert asyncio.run(audience.visible(numbered([bob], 9), "hub-a")) == [{**bob, "seq": 9}]
    assert sorted(hub.asked) == ["", "", "bob", "bob", "carol"]
    # a hub not heard from before (started, or restarted) may have been written to meanwhile: the same
    asyncio.run(audience.visible(numbered([bob], 1), "hub-b"))
    assert len(hub.asked) == 5
    clock.t += LOST_RECHECK
    asyncio.run(audience.visible(numbered([bob, request("carol", "carol")], 2), "hub-b"))
    assert sorted(hub.asked) == ["", "", "", "bob", "bob", "bob", "carol", "carol"]


def test_recheck_waits_longer_than_a_hubs_rbac_snapshot_may_lag():
    from control.auth import policystore

    assert RECHECK_AFTER > policystore.MAX_AGE


def test_one_batch_is_looked_over_once_for_every_page_and_each_page_gets_exactly_its_records():
    import random

    from control.auth.rbac import User
    from control.auth.visibility import Visibility
    from dashboard import audience as audience_module

    rng = random.Random(7)
    users = ["alice", "bob", "carol", "system:kube-scheduler"]
    batch = []
    for seq in range(1, 301):
        namespace = rng.choice(["alice", "bob", "carol", "", None])
        resource, group = rng.choice([("pods", ""), ("deployments", "apps"), ("nodes", ""), ("events", "")])
        record = request(rng.choice(users), namespace, resource, group)
        record["seq"] = seq
        batch.append(record)
    pages = {name: (Audience(name, alice_hub().review, FakeClock()) if name == "alice" else
                    Audience(name, Hub([BASIC], {name: [ADMIN_IN_NS]}).review, FakeClock()))
             for name in ("alice", "bob", "carol")}
    made = []
    real_digest = audience_module.Digest
    audience_module.Digest = lambda records: made.append(1) or real_digest(records)  # type: ignore[misc]
    try:
        shown = {name: visible(page, batch) for name, page in pages.items()}
    finally:
        audience_module.Digest = real_digest  # type: ignore[misc]
    assert made == [1]  # three pages, one look at the batch

    for name, page in pages.items():
        rules = page._rules
        seen = Visibility(rules, User(name), "list")  # type: ignore[arg-type]

        def passes(record: dict) -> bool:
            if record["user"] == name:
                return True
            scope = record.get("scope")
            if scope is None:
                return False
            kind = f"{scope['group']}/{scope['resource']}" if scope["group"] else scope["resource"]
            return seen.allows(kind, scope["namespace"])
        assert shown[name] == [r for r in batch if passes(r)], name
        assert shown[name] and len(shown[name]) < len(batch)


def test_a_page_with_nothing_to_see_in_a_batch_gets_nothing_and_a_gap_inside_a_batch_is_noticed():
    hub, clock = Hub([BASIC], {"carol": [ADMIN_IN_NS]}), FakeClock()
    audience = Audience("carol", hub.review, clock)
    first = numbered([request("bob", "bob"), request("alice", "alice", "deployments", "apps")], 1)
    assert asyncio.run(audience.visible(first, "hub-a")) == []
    assert sorted(hub.asked) == ["", "alice", "bob"]
    gapped = [{**request("bob", "bob"), "seq": 3}, {**request("bob", "bob"), "seq": 5}]  # 4 never came
    assert asyncio.run(audience.visible(gapped, "hub-a")) == []
    assert len(hub.asked) == 3
    clock.t += LOST_RECHECK
    asyncio.run(audience.visible(numbered([request("bob", "bob")], 6), "hub-a"))
    assert sorted(hub.asked) == ["", "", "alice", "bob", "bob"]
