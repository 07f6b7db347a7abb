"""The lesson-only buttons' pure part: which template `rollout undo` brings back."""

from __future__ import annotations

import pytest

from dashboard.actions import ActionError
from dashboard.lesson_buttons import previous_template


def _rs(name: str, revision: str, image: str, owner: str = "d-uid") -> dict:
    return {"metadata": {"name": name, "annotations": {"deployment.kubernetes.io/revision": revision},
                         "ownerReferences": [{"uid": owner, "controller": True}]},
            "spec": {"template": {"metadata": {"labels": {"app": "pasta", "pod-template-hash": name}},
                                  "spec": {"containers": [{"name": "pasta", "image": image}]}}}}


DEPLOYMENT = {"metadata": {"name": "pasta", "uid": "d-uid"}}


def test_undo_brings_back_the_template_of_the_previous_revision_without_its_hash():
    sets = [_rs("a", "1", "nginx:1.27"), _rs("c", "3", "nginx:1.29"), _rs("b", "2", "nginx:1.28"),
            _rs("other", "9", "busybox", owner="someone-else")]
    template = previous_template(DEPLOYMENT, sets)
    assert template["spec"]["containers"][0]["image"] == "nginx:1.28"
    assert template["metadata"]["labels"] == {"app": "pasta"}
    assert sets[2]["spec"]["template"]["metadata"]["labels"]["pod-template-hash"] == "b"  # the listed object is untouched


def test_undo_without_history_says_so_as_kubectl_does():
    with pytest.raises(ActionError, match='no rollout history found for deployment "pasta"'):
        previous_template(DEPLOYMENT, [_rs("a", "1", "nginx:1.27")])


def test_a_request_as_another_user_reuses_its_tls_context():
    import ssl

    from dashboard import lesson_buttons

    default = lesson_buttons._tls_context(None)  # httpx's own default: the CA bundle, read once
    assert lesson_buttons._tls_context(None) is default and default.verify_mode == ssl.CERT_REQUIRED
