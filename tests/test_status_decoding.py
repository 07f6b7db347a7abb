"""The one Status decoder (control.errors.from_status): a failed answer becomes the error class of
its reason, else of its HTTP code, with the hub's message and details."""

from __future__ import annotations

import json

import pytest

from control import errors


def test_a_status_body_becomes_its_reason():
    status = errors.conflict("apps/deployments", "web").status()
    error = errors.from_status(json.dumps(status).encode(), 409)
    assert type(error) is errors.Conflict and error.message == status["message"]
    assert error.details == {"name": "web", "kind": "deployments", "group": "apps"}


def test_reason_wins_over_code_and_decoded_bodies_are_read_too():
    assert type(errors.from_status({"reason": "AlreadyExists", "message": "m"}, 409)) is errors.AlreadyExists
    assert type(errors.from_status({"reason": "Expired", "message": "old"}, 410)) is errors.Gone
    assert type(errors.from_status('{"reason": "Invalid", "message": "bad"}', 400)) is errors.Invalid


@pytest.mark.parametrize("code, cls", [
    (400, errors.BadRequest), (403, errors.Forbidden), (404, errors.NotFound), (409, errors.Conflict),
    (410, errors.Gone), (422, errors.Invalid), (429, errors.TooManyRequests), (503, errors.ServiceUnavailable),
    (504, errors.Timeout), (418, errors.InternalError),
])
def test_without_a_known_reason_the_code_decides(code, cls):
    assert type(errors.from_status(b'{"reason": "SomethingNew"}', code)) is cls


def test_bodies_that_are_not_a_status_still_give_an_error_with_a_message():
    text = errors.from_status(b"<html>bad gateway</html>", 502)
    assert type(text) is errors.InternalError and text.message == "<html>bad gateway</html>"
    assert errors.from_status(b"", 404).message == "the hub answered 404"
    assert errors.from_status(b"x" * 2000, 500).message == "x" * 500
    listed = errors.from_status(b'["not", "a", "status"]', 400)
    assert type(listed) is errors.BadRequest and "not" in listed.message
    assert errors.from_status({"message": "m", "details": "junk"}, 400).details is None
