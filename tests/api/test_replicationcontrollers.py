"""ReplicationControllers through the in-process hub with odd bodies: every answer is a Kubernetes
Status (4xx) or the object, never a 5xx, and a refused write leaves the stored RC unchanged."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.api.test_verbs import send

pytestmark = pytest.mark.django_db(transaction=True)

RCS = "/api/v1/namespaces/default/replicationcontrollers"
KEYS = ["replicas", "selector", "template", "metadata", "labels", "spec", "containers", "name", "image",
        "restartPolicy", "activeDeadlineSeconds", "minReadySeconds", "app"]
JSONISH = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.text(max_size=4)),
                       lambda inner: st.one_of(st.lists(inner, max_size=3),
                                               st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=3), inner,
                                                               max_size=4)), max_leaves=20)
GOOD = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "nginx"},
        "spec": {"replicas": 1, "template": {"metadata": {"labels": {"app": "nginx"}},
                                             "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}}}


@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(spec=JSONISH, scale=JSONISH, patch=JSONISH)
def test_odd_specs_scales_and_patches_are_4xx_statuses_and_change_nothing(api, spec, scale, patch):
    code, _ = send(api, "delete", f"{RCS}/nginx")
    assert code in (200, 404)
    code, answer = send(api, "post", RCS, {**GOOD, "metadata": {"name": "odd"}, "spec": spec})
    assert code in (201, 400, 422), answer
    if code != 201:
        assert answer["kind"] == "Status" and answer["status"] == "Failure"
    send(api, "delete", f"{RCS}/odd")
    code, stored = send(api, "post", RCS, GOOD)
    assert code == 201
    for path, body, content_type in [(f"{RCS}/nginx/scale", scale, "application/merge-patch+json"),
                                     (f"{RCS}/nginx", {"spec": patch}, "application/merge-patch+json"),
                                     (f"{RCS}/nginx", {"spec": patch}, "application/strategic-merge-patch+json")]:
        code, answer = send(api, "patch", path, json.dumps(body), content_type=content_type)
        assert code < 500, answer
        if code >= 400:
            assert answer["kind"] == "Status"
            assert send(api, "get", f"{RCS}/nginx")[1]["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]
        else:
            stored = send(api, "get", f"{RCS}/nginx")[1]
