"""Impersonation as kube-apiserver's filter: what each header asks, the authorization of each
item (resource, API group, namespace, name), upstream's messages, and the user acted as."""

from __future__ import annotations

import pytest

from control import errors
from control.auth.impersonation import act_as, requests, service_account
from control.auth.rbac import Attributes, User

ALICE = User("alice", "a-1", ("devs", "system:authenticated"), {"scopes": ["x"]})


def headers(*pairs: tuple[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode(), v.encode()) for k, v in pairs]


class Recorder:
    """An authorizer that allows all but `refuse` and remembers what it was asked."""

    def __init__(self, refuse: tuple[str, ...] = ()):
        self.asked: list[Attributes] = []
        self.refuse = refuse

    def __call__(self, user: User, attrs: Attributes) -> bool:
        self.asked.append(attrs)
        return attrs.resource not in self.refuse


def test_no_impersonation_headers_leave_the_user_as_authenticated():
    allowed = Recorder()
    assert act_as(ALICE, headers(("Authorization", "Bearer x")), allowed) is ALICE
    assert allowed.asked == []


def test_each_item_is_authorized_with_upstreams_resource_group_and_name():
    allowed = Recorder()
    acted = act_as(ALICE, headers(("Impersonate-User", "bob"), ("Impersonate-Group", "g1"),
                                  ("Impersonate-Group", "g2"), ("Impersonate-Extra-Scopes", "view"),
                                  ("Impersonate-Extra-Acme.com%2Fteam", "red"), ("Impersonate-Uid", "u-7")), allowed)
    assert allowed.asked == [
        Attributes("impersonate", True, "", "users", name="bob"),
        Attributes("impersonate", True, "", "groups", name="g1"),
        Attributes("impersonate", True, "", "groups", name="g2"),
        Attributes("impersonate", True, "authentication.k8s.io", "userextras", subresource="scopes", name="view"),
        Attributes("impersonate", True, "authentication.k8s.io", "userextras", subresource="acme.com/team",
                   name="red"),
        Attributes("impersonate", True, "authentication.k8s.io", "uids", name="u-7"),
    ]
    assert acted == User("bob", "u-7", ("g1", "g2", "system:authenticated"))
    assert acted.extra == {"scopes": ["view"], "acme.com/team": ["red"]}


def test_nothing_of_the_original_user_is_kept():
    acted = act_as(ALICE, headers(("Impersonate-User", "bob")), Recorder())
    assert (acted.name, acted.uid, acted.groups, acted.extra) == ("bob", "", ("system:authenticated",), {})


def test_a_service_account_is_authorized_in_its_namespace_and_gets_its_groups():
    allowed = Recorder()
    acted = act_as(ALICE, headers(("Impersonate-User", "system:serviceaccount:team-a:builder")), allowed)
    assert allowed.asked == [Attributes("impersonate", True, "", "serviceaccounts", namespace="team-a",
                                        name="builder")]
    assert acted == User("system:serviceaccount:team-a:builder", "",
                         ("system:serviceaccounts", "system:serviceaccounts:team-a", "system:authenticated"))


def test_groups_asked_for_a_service_account_replace_its_groups():
    acted = act_as(ALICE, headers(("Impersonate-User", "system:serviceaccount:team-a:builder"),
                                  ("Impersonate-Group", "ops")), Recorder())
    assert acted.groups == ("ops", "system:authenticated")


@pytest.mark.parametrize("name", ["system:serviceaccount:a:b:c", "system:serviceaccount::b",
                                  "system:serviceaccount:Upper:b", "system:serviceaccount:a"])
def test_a_malformed_service_account_name_is_a_plain_user(name):
    assert service_account(name) is None
    allowed = Recorder()
    assert act_as(ALICE, headers(("Impersonate-User", name)), allowed).name == name
    assert allowed.asked[0].resource == "users"


def test_system_authenticated_is_added_once_and_not_beside_unauthenticated():
    asked = act_as(ALICE, headers(("Impersonate-User", "bob"), ("Impersonate-Group", "system:authenticated")),
                   Recorder())
    assert asked.groups == ("system:authenticated",)
    asked = act_as(ALICE, headers(("Impersonate-User", "bob"), ("Impersonate-Group", "system:unauthenticated")),
                   Recorder())
    assert asked.groups == ("system:unauthenticated",)
    anonymous = act_as(ALICE, headers(("Impersonate-User", "system:anonymous")), Recorder())
    assert anonymous.groups == ("system:unauthenticated",)


def test_a_refusal_is_a_403_with_the_apiservers_message_and_stops_at_the_first():
    allowed = Recorder(refuse=("groups",))
    with pytest.raises(errors.Forbidden) as refused:
        act_as(ALICE, headers(("Impersonate-User", "bob"), ("Impersonate-Group", "admins"),
                              ("Impersonate-Uid", "u-7")), allowed)
    assert refused.value.message == ('groups "admins" is forbidden: User "alice" cannot impersonate resource '
                                     '"groups" in API group "" at the cluster scope')
    assert [a.resource for a in allowed.asked] == ["users", "groups"]


@pytest.mark.parametrize("pairs, message", [
    ((("Impersonate-User", "system:serviceaccount:ns:sa"),),
     'serviceaccounts "sa" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" '
     'in the namespace "ns"'),
    ((("Impersonate-User", "bob"), ("Impersonate-Uid", "u-7")),
     'uids.authentication.k8s.io "u-7" is forbidden: User "alice" cannot impersonate resource "uids" in API group '
     '"authentication.k8s.io" at the cluster scope'),
    ((("Impersonate-User", "bob"), ("Impersonate-Extra-Scopes", "view")),
     'userextras.authentication.k8s.io "view" is forbidden: User "alice" cannot impersonate resource '
     '"userextras/scopes" in API group "authentication.k8s.io" at the cluster scope'),
])
def test_refusal_messages_name_the_resource_as_upstream(pairs, message):
    with pytest.raises(errors.Forbidden) as refused:
        act_as(ALICE, headers(*pairs), Recorder(refuse=("serviceaccounts", "uids", "userextras")))
    assert refused.value.message == message


@pytest.mark.parametrize("pairs, listed", [
    ((("Impersonate-Group", "devs"),), "[{Group  devs    }]"),
    ((("Impersonate-Uid", "u-7"),), "[{UID  u-7  authentication.k8s.io/v1  }]"),
    ((("Impersonate-Extra-Scopes", "view"),), "[{UserExtra  view  authentication.k8s.io/v1  scopes}]"),
])
def test_groups_extras_or_a_uid_without_a_user_is_upstreams_400(pairs, listed):
    with pytest.raises(errors.BadRequest) as refused:
        requests(headers(*pairs))
    assert refused.value.message == f"requested {listed} without impersonating a user"
