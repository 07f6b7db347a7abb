"""ResourceQuota and LimitRange bodies in Kubernetes protobuf decode to their JSON form."""

from __future__ import annotations

from control.api.protobuf import decode_kubernetes_protobuf
from tests.api.test_protobuf import body


def test_a_resourcequota_body_decodes_with_its_quantities_and_scopes():
    obj = {"metadata": {"name": "q", "namespace": "default"},
           "spec": {"hard": {"pods": "2", "requests.cpu": "500m"}, "scopes": ["NotBestEffort"]},
           "status": {"hard": {"pods": "2"}, "used": {"pods": "1"}}}
    assert decode_kubernetes_protobuf(body("v1", "ResourceQuota", obj)) == \
        {"apiVersion": "v1", "kind": "ResourceQuota", **obj}


def test_a_limitrange_body_decodes_with_its_items():
    obj = {"metadata": {"name": "lr"},
           "spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}, "default": {"memory": "256Mi"},
                                "defaultRequest": {"cpu": "100m"}, "maxLimitRequestRatio": {"cpu": "4"}}]}}
    assert decode_kubernetes_protobuf(body("v1", "LimitRange", obj)) == {"apiVersion": "v1", "kind": "LimitRange", **obj}
