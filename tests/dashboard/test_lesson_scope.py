"""A lesson moved into the viewer's namespace at run time: checks, actions, manifests and kubectl
commands; "default" always goes to the viewer's namespace, a lesson's own namespace (the quota
lesson's `diner`) stays for the instructor and becomes the attendee's; nodes stay cluster-wide;
another program's `-n` is left alone; the shipped lessons come out with no trace of `default`
for an attendee."""

from __future__ import annotations

import pytest

from dashboard import lessons, manifests
from dashboard.lesson_scope import Scope, scoped_action, scoped_check, scoped_command, scoped_documents
from dashboard.lessons import Action, Check

ATTENDEE = Scope(namespace="alice", own_namespaces=False, kubeconfig_namespace="alice")
INSTRUCTOR = Scope()  # default, as chosen by nobody yet
INSTRUCTOR_ELSEWHERE = Scope(namespace="team-b")


def test_a_check_goes_to_the_viewers_namespace_and_a_cluster_check_stays():
    pods = Check(api_version="v1", kind="Pod", namespace="default", label_selector="app=pasta")
    assert scoped_check(pods, ATTENDEE).namespace == "alice"
    assert scoped_check(pods, INSTRUCTOR).namespace == "default"
    assert scoped_check(pods, INSTRUCTOR_ELSEWHERE).namespace == "team-b"
    quota = Check(api_version="v1", kind="ResourceQuota", namespace="diner", name="tables")
    assert scoped_check(quota, ATTENDEE).namespace == "alice"
    assert scoped_check(quota, INSTRUCTOR_ELSEWHERE).namespace == "diner"  # the lesson's own, kept
    unnamed = Check(api_version="v1", kind="Pod", label_selector="app=pasta")  # lesson files name none
    assert scoped_check(unnamed, ATTENDEE).namespace == "alice"
    assert scoped_check(unnamed, INSTRUCTOR_ELSEWHERE).namespace == "team-b"
    # a Node check gets a namespace too, which run_check ignores for a cluster kind (test_lessons)


def test_an_action_and_its_forms_namespace_move():
    delete = Action(delete=("Pod", "v1", "app=pasta"), namespace="default")
    assert scoped_action(delete, ATTENDEE).namespace == "alice"
    scale = Action(do="scale", form=(("delta", "2"), ("name", "pasta"), ("namespace", "diner")), namespace="default")
    moved = scoped_action(scale, ATTENDEE)
    assert dict(moved.form) == {"delta": "2", "name": "pasta", "namespace": "alice"} and moved.namespace == "alice"
    assert dict(scoped_action(scale, INSTRUCTOR).form)["namespace"] == "diner"
    dns = Action(do="traffic", form=(("namespace", "default"), ("target", "pasta.default.svc.cluster.local")))
    assert dict(scoped_action(dns, INSTRUCTOR_ELSEWHERE).form) == {"namespace": "team-b",
                                                                   "target": "pasta.team-b.svc.cluster.local"}
    assert dict(scoped_action(dns, INSTRUCTOR).form)["target"] == "pasta.default.svc.cluster.local"
    short = Action(do="traffic", form=(("namespace", "default"), ("target", "pasta")))
    assert dict(scoped_action(short, ATTENDEE).form) == {"namespace": "alice", "target": "pasta"}
    spoke = Action(do="spoke", form=(("spoke", "scheduler"), ("state", "stopped")))
    assert dict(scoped_action(spoke, ATTENDEE).form) == {"spoke": "scheduler", "state": "stopped"}


def test_manifests_move_their_objects_and_subjects_and_drop_a_namespace_the_attendee_cannot_create():
    documents = manifests.parse(lessons.manifest_text(Action(apply="diner-quota.yaml")))
    assert [d["kind"] for d in documents] == ["Namespace", "ResourceQuota"]
    for_alice = scoped_documents(documents, ATTENDEE)
    assert [(d["kind"], d["metadata"]["namespace"]) for d in for_alice] == [("ResourceQuota", "alice")]
    assert scoped_documents(documents, INSTRUCTOR) == documents  # the instructor keeps the diner
    assert documents[1]["metadata"]["namespace"] == "diner"  # the input is not changed
    binding = scoped_documents(manifests.parse(lessons.manifest_text(Action(apply="trainee-reader.yaml"))), ATTENDEE)
    assert all("namespace" not in d["metadata"] for d in binding)  # applied in the scope's namespace
    assert [s["namespace"] for d in binding if d["kind"] == "RoleBinding" for s in d["subjects"]] == ["alice"]
    plain = scoped_documents([{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "pasta"}}], ATTENDEE)
    assert "namespace" not in plain[0]["metadata"]  # the action's namespace (the viewer's) applies


@pytest.mark.parametrize("command, scope, expected", [
    ("kubectl apply -f lessons/manifests/pasta.yaml", ATTENDEE, "kubectl apply -f lessons/manifests/pasta.yaml"),
    ("kubectl apply -f lessons/manifests/pasta.yaml", INSTRUCTOR, "kubectl apply -f lessons/manifests/pasta.yaml"),
    ("kubectl apply -f lessons/manifests/pasta.yaml", INSTRUCTOR_ELSEWHERE,
     "kubectl -n team-b apply -f lessons/manifests/pasta.yaml"),
    ("kubectl apply -f x.yaml && kubectl -n diner describe quota tables", ATTENDEE,
     "kubectl apply -f x.yaml && kubectl -n alice describe quota tables"),
    ("kubectl apply -f x.yaml && kubectl -n diner get quota", INSTRUCTOR_ELSEWHERE,
     "kubectl -n team-b apply -f x.yaml && kubectl -n diner get quota"),
    ("kubectl get pods --namespace=default -w", ATTENDEE, "kubectl get pods --namespace=alice -w"),
    ("kubectl get --raw '/api/v1/namespaces/default/pods?watch=1&resourceVersion=1'", ATTENDEE,
     "kubectl get --raw '/api/v1/namespaces/alice/pods?watch=1&resourceVersion=1'"),
    ("kubectl get pods --as=system:serviceaccount:default:trainee", ATTENDEE,
     "kubectl get pods --as=system:serviceaccount:alice:trainee"),
    ("kubectl get pods -A", INSTRUCTOR_ELSEWHERE, "kubectl get pods -A"),
    (".venv/bin/python manage.py traffic pasta --from node-1 -n 20", INSTRUCTOR,
     ".venv/bin/python manage.py traffic pasta --from node-1 -n 20"),
    (".venv/bin/python manage.py traffic pasta --from node-1 -n 20", ATTENDEE,  # its -n is a count: left alone
     ".venv/bin/python manage.py traffic pasta --namespace alice --from node-1 -n 20"),
    (".venv/bin/python manage.py traffic pasta.default.svc.cluster.local --from node-2 -n 10", INSTRUCTOR_ELSEWHERE,
     ".venv/bin/python manage.py traffic pasta.team-b.svc.cluster.local --from node-2 -n 10"),
    (".venv/bin/python manage.py traffic pasta.diner --from node-2", INSTRUCTOR_ELSEWHERE,
     ".venv/bin/python manage.py traffic pasta.diner --from node-2"),
    (".venv/bin/python manage.py traffic 10.96.0.12 --from node-2", ATTENDEE,
     ".venv/bin/python manage.py traffic 10.96.0.12 --from node-2"),
    (".venv/bin/python manage.py traffic pasta --namespace shop --from node-1", ATTENDEE,
     ".venv/bin/python manage.py traffic pasta --namespace shop --from node-1"),
    ("kubectl get pods | grep pasta", INSTRUCTOR_ELSEWHERE, "kubectl -n team-b get pods | grep pasta"),
    ("kubectl delete $(kubectl get pods -l app=pasta -o name | tail -n 1)", INSTRUCTOR_ELSEWHERE,
     "kubectl -n team-b delete $(kubectl -n team-b get pods -l app=pasta -o name | tail -n 1)"),
    ("# stop the scheduler's process (or use the button)", INSTRUCTOR_ELSEWHERE,
     "# stop the scheduler's process (or use the button)"),
    ("", ATTENDEE, ""),
])
def test_kubectl_commands_name_the_viewers_namespace_where_their_kubeconfig_does_not(command, scope, expected):
    assert scoped_command(command, scope) == expected


def test_the_shipped_lessons_leave_no_default_namespace_for_an_attendee():
    for lesson in lessons.load_all().lessons:
        for step in lesson.steps:
            assert "namespaces/default" not in scoped_command(step.kubectl, ATTENDEE), lesson.id
            assert "serviceaccount:default:" not in scoped_command(step.kubectl, ATTENDEE), lesson.id
            assert ".default.svc" not in scoped_command(step.kubectl, ATTENDEE), lesson.id
            if step.check is not None and step.check.namespace:
                assert scoped_check(step.check, ATTENDEE).namespace == "alice", lesson.id
            if step.action is not None:
                moved = scoped_action(step.action, ATTENDEE)
                assert moved.namespace == "alice" and dict(moved.form).get("namespace", "alice") == "alice", lesson.id
                assert ".default" not in dict(moved.form).get("target", ""), lesson.id
                if step.action.apply:
                    docs = scoped_documents(manifests.parse(lessons.manifest_text(step.action)), ATTENDEE)
                    assert {d["metadata"].get("namespace", "alice") for d in docs} == {"alice"}, lesson.id


def test_a_lessons_example_host_is_the_viewers_own_outside_default():
    ingress = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "menu", "namespace": "default"},
               "spec": {"rules": [{"host": "menu.example", "http": {}}, {"host": "shop.kubernetes.io"}, {"http": {}}],
                        "tls": [{"hosts": ["menu.example"], "secretName": "menu-tls"}]}}
    route = {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": {"name": "r"},
             "spec": {"hostnames": ["menu.example", "real.org"]}}
    [moved, moved_route] = scoped_documents([ingress, route], ATTENDEE)
    assert [r.get("host") for r in moved["spec"]["rules"]] == ["menu.alice.example", "shop.kubernetes.io", None]
    assert moved["spec"]["tls"][0]["hosts"] == ["menu.alice.example"]
    assert moved_route["spec"]["hostnames"] == ["menu.alice.example", "real.org"]
    assert ingress["spec"]["rules"][0]["host"] == "menu.example"  # the input is not changed
    assert scoped_documents([ingress], INSTRUCTOR)[0]["spec"]["rules"][0]["host"] == "menu.example"
    door = Action(do="front-door", form=(("host", "menu.example"), ("ingress", "menu"), ("namespace", "default")))
    assert dict(scoped_action(door, ATTENDEE).form)["host"] == "menu.alice.example"
    command = "curl -s -H 'Host: menu.example' http://$(kubectl get ingress menu -o jsonpath='{.x}')/soup"
    assert "Host: menu.alice.example'" in scoped_command(command, ATTENDEE)
    assert scoped_command(command, INSTRUCTOR) == command
