"""Who is on the instructor's board: the workshop's attendees, for a user RBAC lets list pods everywhere."""

from __future__ import annotations

import asyncio

import pytest

from control import errors, roster
from dashboard import attendees


class Reviews:
    """A hub that answers SelfSubjectAccessReviews (or refuses them), recording what it was asked."""

    def __init__(self, allowed: bool | None):
        self.allowed, self.asked = allowed, []

    async def request(self, method, path, *, body=None, **kwargs):
        self.asked.append((method, path, body))
        if self.allowed is None:
            raise errors.ServiceUnavailable("cannot reach the hub")
        return {"kind": "SelfSubjectAccessReview", "status": {"allowed": self.allowed}}


@pytest.fixture
def room(settings, tmp_path):
    settings.DATA_DIR = tmp_path
    for name in ("bob", "alice"):
        roster.join_code(tmp_path, name)
    return tmp_path


def test_who_may_list_pods_everywhere_sees_the_attendees_in_provisioning_order(room):
    hub = Reviews(True)
    assert asyncio.run(attendees.board_names(hub)) == ["bob", "alice"]
    (method, path, body), = hub.asked
    assert (method, path) == ("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
    assert body["spec"]["resourceAttributes"] == {"verb": "list", "resource": "pods", "namespace": ""}


@pytest.mark.parametrize("allowed", [False, None], ids=["forbidden", "hub-unreachable"])
def test_anyone_else_or_a_hub_that_cannot_answer_gets_no_board(room, allowed):
    assert asyncio.run(attendees.board_names(Reviews(allowed))) == []


def test_without_a_workshop_the_hub_is_not_asked(settings, tmp_path):
    settings.DATA_DIR = tmp_path
    hub = Reviews(True)
    assert asyncio.run(attendees.board_names(hub)) == [] and hub.asked == []
