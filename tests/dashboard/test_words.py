"""The page's words: every term exists twice (Kubernetes and restaurant), and the committed Korean
catalogue translates all of them, so switching to Korean never leaves English on the wall."""

from __future__ import annotations

from django.utils import translation

from dashboard import presenters, words as page_words

# kubectl's STATUS words are printed as they are in every language
SAME_IN_BOTH = {"kubelet", "kubectl", "kube-proxy", "CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull",
                "CreateContainerConfigError", "OOMKilled"}


def test_every_word_is_translated_to_korean():
    with translation.override("en"):
        english = page_words.terms()
    with translation.override("ko"):
        korean = page_words.terms()
    untranslated = []
    for section in ("terms", "status"):
        for key, pair in english[section].items():
            for view in ("k8s", "kitchen"):
                if pair[view] == korean[section][key][view] and pair[view] not in SAME_IN_BOTH:
                    untranslated.append(pair[view])
    untranslated += [text for key, text in english["ui"].items() if korean["ui"][key] == text]
    assert untranslated == []


def test_the_restaurant_words_follow_the_seed_story():
    with translation.override("ko"):
        words = page_words.terms()["terms"]
    assert words["hub"]["kitchen"] == "웨이터"
    assert words["store"]["kitchen"] == "메모장"
    assert words["manifest"]["kitchen"].startswith("주문서")
    assert words["kube-scheduler"]["kitchen"].startswith("요리사")
    assert words["pod"]["kitchen"] == "요리"
    assert words["delete-pod"]["kitchen"] == "파스타를 바닥에 쏟기"
    assert page_words.terms()["status"]["Ready"]["kitchen"] == "Garnished"
    with translation.override("ko"):
        assert page_words.terms()["ui"]["shell"] == "이 파드에서 셸 열기"


def test_pod_view_models_say_what_kubectl_says():
    pod = {"metadata": {"name": "p", "namespace": "default", "ownerReferences": [{"kind": "ReplicaSet", "name": "rs"}]},
           "spec": {"nodeName": "node-1", "containers": [{"name": "app"}, {"name": "sidecar"}]},
           "status": {"phase": "Running", "podIP": "10.0.0.5",
                      "containerStatuses": [{"restartCount": 2, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}}
    vm = presenters.pod_vm(pod)
    assert vm == {"key": "default/p", "ns": "default", "name": "p", "node": "node-1", "phase": "Running",
                  "status": "CrashLoopBackOff", "ready": False, "readySince": "", "restarts": 2, "terminating": False,
                  "ip": "10.0.0.5", "owner": "rs", "ownerKind": "rs", "image": "", "crashing": False,
                  "containers": ["app", "sidecar"], "uses": []}
    pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert presenters.pod_vm(pod)["status"] == "Terminating"


def test_every_narration_sentence_keeps_its_placeholders_in_korean():
    """The narration fills {actor}, {what}, {node}… into the translated templates: a Korean template
    that lost or renamed one would print a blank or a brace on the projector."""
    import re

    with translation.override("en"):
        english = page_words.terms()["ui"]
    with translation.override("ko"):
        korean = page_words.terms()["ui"]
    narration = [key for key in english if key.startswith("n-")]
    assert {"n-created", "n-bound", "n-started", "n-had", "n-first"} <= set(narration)
    for key in narration:
        assert sorted(re.findall(r"\{\w+\}", korean[key])) == sorted(re.findall(r"\{\w+\}", english[key])), key
