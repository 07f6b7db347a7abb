"""Every shipped lesson as a trainee meets it: each step has a button and a check, the kubectl
command beside the button does what the button does (verb, kind, name, selector, replicas, file),
texts are plain (no markdown shown raw), files are namespace-agnostic, and what a step acts on was
set up by an earlier step of the same lesson (no hidden prerequisite)."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

import pytest
import yaml

from dashboard import lessons
from dashboard.lessons import Action, Lesson, Step

CATALOGUE = lessons.load_all()
STEPS = [pytest.param(lesson, number, step, id=f"{lesson.id}-{number}")
         for lesson in CATALOGUE.lessons for number, step in enumerate(lesson.steps, 1)]
READ_ONLY = ("get", "describe", "logs", "wait", "rollout status", "auth can-i", "exec")
# what a lesson may name outside the viewer's namespace: the quota lesson's own namespace and the
# spokes' ConfigMap in kube-system
OWN_NAMESPACES = {"diner", "kube-system"}


def commands(kubectl: str) -> list[list[str]]:
    """The `&&`-joined commands, each as argv; a `$(...)` is kept as one word."""
    substituted = re.findall(r"\$\([^)]*\)", " ".join(kubectl.split()))
    text = " ".join(kubectl.split())
    for index, inner in enumerate(substituted):
        text = text.replace(inner, f"SUBSTITUTION{index}", 1)
    return [[substituted[int(w[12:])] if re.fullmatch(r"SUBSTITUTION\d+", w) else w for w in shlex.split(part)]
            for part in re.split(r"\s&&\s", text)]


def _flag(argv: list[str], *names: str) -> str:
    for index, word in enumerate(argv):
        for name in names:
            if word == name and index + 1 < len(argv):
                return argv[index + 1]
            if word.startswith(name + "="):
                return word.split("=", 1)[1]
    return ""


def _without_namespace(argv: list[str]) -> tuple[list[str], str]:
    """A kubectl argv without its `-n NS` (and without what is piped after it), and NS."""
    if argv[0] != "kubectl":
        return argv, ""
    argv = argv[:argv.index("|")] if "|" in argv else argv
    namespace = _flag(argv, "-n", "--namespace")
    if namespace:
        at = argv.index("-n") if "-n" in argv else argv.index("--namespace")
        argv = argv[:at] + argv[at + 2:]
    return argv, namespace


def _reads_only(argv: list[str]) -> bool:
    rest = " ".join(argv[1:])
    return argv[0] == "kubectl" and any(re.sub(r"^(-n \S+ )", "", rest).startswith(verb) for verb in READ_ONLY)


def _newest_of(argv: list[str]) -> tuple[str, str] | None:
    """(kind, selector) of `kubectl delete $(kubectl get KIND -l SEL --sort-by=.metadata.creationTimestamp
    -o name | tail -n 1)`: exactly one object, the newest, as the delete button picks it; None otherwise."""
    inner = next((word for word in argv if word.startswith("$(")), "")
    match = re.fullmatch(r"\$\(kubectl get (\S+) -l (\S+) --sort-by=\.metadata\.creationTimestamp -o name \| tail -n 1\)", inner)
    return (match.group(1), match.group(2)) if match else None


PLURALS = {"Pod": "pods", "Dish": "dishes"}


def expected_problems(action: Action, kubectl: str) -> list[str]:
    """How the command differs from the button (empty: they do the same)."""
    first, *after = commands(kubectl)
    problems = [f"{' '.join(extra)} is not a read" for extra in after
                if not (_reads_only(extra) or (action.do == "stale-write") or (action.do == "old-watch")
                        or (action.do == "fetch-badge" and extra[:3] == ["kubectl", "config", "set-credentials"]))]
    form: dict[str, str] = dict(action.form)
    argv, namespace = _without_namespace(first)
    if action.apply:
        if argv[:3] != ["kubectl", "apply", "-f"] or argv[3] != f"lessons/manifests/{action.apply}":
            problems.append(f"the button applies {action.apply}")
    elif action.delete is not None:
        kind, _, selector = action.delete
        if argv[:2] != ["kubectl", "delete"] or _newest_of(argv) != (PLURALS.get(kind, kind.lower()), selector):
            problems.append(f"the button deletes the newest {kind} matching {selector}")
    elif action.do == "scale":
        if argv[:4] != ["kubectl", "scale", "deployment", form["name"]]:
            problems.append("the button scales a deployment")
        if "--replicas=" + form.get("replicas", "?") not in argv or "delta" in form:
            problems.append(f"the button sets replicas={form.get('replicas')} (a delta has no kubectl twin)")
        if form["name"] not in argv:
            problems.append(f"the button scales {form['name']}")
    elif action.do in ("uncordon", "cordon", "drain"):
        if argv[:3] != ["kubectl", action.do, form["name"]]:
            problems.append(f"the button does {action.do} {form['name']}")
        if action.do == "drain" and not {"--ignore-daemonsets", "--delete-emptydir-data", "--force"} <= set(argv):
            problems.append("the drain button ignores DaemonSets, deletes emptyDir data and forces")
    elif action.do == "delete-pod":
        if argv[:4] != ["kubectl", "delete", "pod", form["name"]]:
            problems.append(f"the button deletes pod {form['name']}")
    elif action.do == "spoke":
        key = form["spoke"].replace("/", ".")
        if argv[:4] != ["kubectl", "patch", "configmap", "kubekitchen-spokes"] or namespace != "kube-system" or \
                json.loads(_flag(argv, "-p")) != {"data": {key: form["state"]}}:
            problems.append(f"the button writes {key}={form['state']} into kube-system/kubekitchen-spokes")
    elif action.do == "stale-write":
        verbs = [" ".join(c[:3]) for c in commands(kubectl)]
        if verbs != ["kubectl get deployment", "kubectl annotate deployment", "kubectl replace -f"]:
            problems.append("the button reads, lets a second writer annotate, then replaces with the old copy")
    elif action.do == "rollout-undo":
        if argv != ["kubectl", "rollout", "undo", f"deployment/{form['name']}"]:
            problems.append(f"the button undoes deployment/{form['name']}")
    elif action.do == "as-user":
        if argv[:3] != ["kubectl", "get", "pods"] or \
                _flag(argv, "--as") != f"system:serviceaccount:{form['namespace']}:{form['serviceAccount']}":
            problems.append(f"the button lists pods as {form['serviceAccount']}")
    elif action.do == "approve-csr":
        if argv != ["kubectl", "certificate", "approve", form["name"]]:
            problems.append(f"the button approves {form['name']}")
    elif action.do == "fetch-badge":
        if argv[:4] != ["kubectl", "get", "csr", form["name"]] or _flag(argv, "-o") != "jsonpath={.status.certificate}":
            problems.append(f"the button reads the certificate of {form['name']}")
    elif action.do == "as-badge":
        if argv[:3] != ["kubectl", "get", "pods"] or _flag(argv, "--user") != form["name"]:
            problems.append(f"the button lists pods with the badge of {form['name']}")
    elif action.do == "old-watch":
        if argv[:3] != ["kubectl", "get", "--raw"] or "watch=1&resourceVersion=1" not in argv[3]:
            problems.append("the button watches from resourceVersion 1")
    elif action.do == "static-pod":  # an edit of the control-plane node's manifest file, as with kubeadm
        if argv[:2] != ["sed", "-i"] or not argv[-1].endswith(f"manifests/{form['component']}.yaml") or \
                not argv[2].endswith(f"$/- {form['command']}/"):
            problems.append(f"the button writes command {form['command']} into {form['component']}'s manifest")
    elif action.do == "exec":
        container = ["-c", form["container"]] if form.get("container") else []
        if argv != ["kubectl", "exec", form["pod"], *container, "--", *shlex.split(form["command"])]:
            problems.append(f"the button runs {form['command']!r} in pod {form['pod']}")
    elif action.do == "traffic":
        if argv[1:4] != ["manage.py", "traffic", form["target"]] or _flag(argv, "--from") != form["node"] \
                or _flag(argv, "-n") != form["count"]:
            problems.append(f"the button sends {form['count']} requests from {form['node']} to {form['target']}")
    elif action.do == "front-door":  # curl from this machine to the Ingress's address, with the Host header
        address = "$(kubectl get ingress {} -o jsonpath='{{.status.loadBalancer.ingress[0].ip}}:" \
                  "{{.status.loadBalancer.ingress[0].ports[0].port}}')".format(form["ingress"])
        if argv[:2] != ["curl", "-s"] or _flag(argv, "-H") != f"Host: {form['host']}" or \
                not " ".join(kubectl.split()).endswith(f"http://{address}{form['path']}"):
            problems.append(f"the button asks {form['host']}{form['path']} at the address of ingress {form['ingress']}")
    elif action.do == "gateway-traffic":  # curl's URL globbing sends the count, to the listener kubectl names
        words = " ".join(kubectl.split())  # the $(...) inside the quoted URL, as written
        if argv[:2] != ["curl", "-s"] or f"$(kubectl get gateway {form['gateway']} " not in words \
                or f"[1-{form['count']}]" not in words:
            problems.append(f"the button sends {form['count']} requests through gateway {form['gateway']}")
    else:
        problems.append(f"no kubectl twin known for the button {action.do}")
    if namespace and namespace not in OWN_NAMESPACES:
        problems.append(f"the command runs in {namespace}")
    if namespace != (form.get("namespace", "") if form.get("namespace") in OWN_NAMESPACES else namespace):
        problems.append(f"the button acts in {form.get('namespace')}, the command in {namespace or 'the current one'}")
    return problems


def test_every_lesson_file_loads():
    assert CATALOGUE.errors == []
    assert len(CATALOGUE.lessons) >= 19


@pytest.mark.parametrize("lesson, number, step", STEPS)
def test_every_step_has_a_button_a_check_and_the_command_that_does_the_same(lesson: Lesson, number: int, step: Step):
    assert step.action is not None, "no Do it"
    assert step.check is not None or step.answer is not None, "nothing turns it green"
    assert step.kubectl, "no command beside the button"
    assert expected_problems(step.action, step.kubectl) == []


@pytest.mark.parametrize("lesson, number, step", STEPS)
def test_texts_are_plain_and_namespace_agnostic(lesson: Lesson, number: int, step: Step):
    for texts in (step.title, step.explain, lesson.title):
        for language in ("en", "ko"):
            assert language in texts
            assert not re.search(r"`|\*\*|\]\(", texts[language]), f"raw markdown in {language}: {texts[language]}"
    assert "-n default" not in step.kubectl and "--namespace default" not in step.kubectl
    if step.check is not None:
        assert step.check.namespace in ("",) + tuple(OWN_NAMESPACES), step.check.namespace
    if step.action is not None and step.action.apply:
        for doc in yaml.safe_load_all(lessons.manifest_text(step.action)):
            assert (doc.get("metadata") or {}).get("namespace") in (None, *OWN_NAMESPACES), doc["metadata"]


def _defined(action: Action) -> set[tuple[str, str]]:
    return {(doc["kind"], doc["metadata"]["name"]) for doc in yaml.safe_load_all(lessons.manifest_text(action)) if doc}


NAMED = {"scale": "Deployment", "stale-write": "Deployment", "rollout-undo": "Deployment", "delete-pod": "Pod"}


@pytest.mark.parametrize("lesson", CATALOGUE.lessons, ids=lambda lesson: lesson.id)
def test_what_a_step_acts_on_is_set_up_by_an_earlier_step(lesson: Lesson):
    defined: set[tuple[str, str]] = set()
    for number, step in enumerate(lesson.steps, 1):
        action = step.action
        if action is not None and action.do in NAMED:
            name = dict(action.form)["name"]
            kind = NAMED[action.do]
            owned_pod = kind == "Pod" and any(k in ("StatefulSet", "Pod") for k, _ in defined)
            assert (kind, name) in defined or owned_pod, f"step {number} acts on {kind} {name} that no step sets up"
        if action is not None and action.apply:
            defined |= _defined(action)


def _labels(action: Action) -> Any:
    return [((doc.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels") or doc["metadata"].get("labels")
            for doc in yaml.safe_load_all(lessons.manifest_text(action)) if doc]


@pytest.mark.parametrize("lesson", CATALOGUE.lessons, ids=lambda lesson: lesson.id)
def test_a_delete_button_finds_what_an_earlier_step_made(lesson: Lesson):
    made: list[Any] = []
    for number, step in enumerate(lesson.steps, 1):
        if step.action is not None and step.action.delete is not None:
            key, _, value = step.action.delete[2].partition("=")
            kind = step.action.delete[0]
            assert kind != "Pod" or any(labels and labels.get(key) == value for labels in made), \
                f"step {number} deletes a {kind} with {key}={value} that no earlier step makes"
        if step.action is not None and step.action.apply:
            made += _labels(step.action)


def test_a_lesson_that_waits_on_the_clusters_pace_says_how_long_and_names_the_workshop_pace():
    waits = {"04-node-down", "03-crash-loop"}
    for lesson in CATALOGUE.lessons:
        if lesson.id in waits:
            words = " ".join(lesson.steps[0].explain["en"].split())
            assert "PACE=workshop" in words and re.search(r"\d+ (s|minutes)", words), lesson.id


@pytest.mark.parametrize("action, kubectl", [
    (Action(delete=("Pod", "v1", "app=pasta")), "kubectl delete pod -l app=pasta --wait=false"),  # deletes all
    (Action(do="scale", form=(("delta", "2"), ("name", "pasta"), ("namespace", "default"))),
     "kubectl scale deployment pasta --replicas=5"),
    (Action(do="scale", form=(("name", "pasta"), ("namespace", "default"), ("replicas", "5"))),
     "kubectl scale deployment soup --replicas=5"),
    (Action(apply="pasta-v2.yaml"), "kubectl set image deployment/pasta pasta=nginx:1.28"),
    (Action(apply="pasta.yaml"), "kubectl apply -f lessons/manifests/pasta.yaml && kubectl delete pod x"),
    (Action(do="traffic", form=(("count", "1000"), ("namespace", "default"), ("node", "node-1"), ("target", "soup"))),
     ".venv/bin/python manage.py traffic soup --from node-1 -n 3000"),
    (Action(do="scale", form=(("name", "guests"), ("namespace", "diner"), ("replicas", "11"))),
     "kubectl scale deployment guests --replicas=11"),
])
def test_a_command_that_does_not_do_what_the_button_does_is_caught(action, kubectl):
    assert expected_problems(action, kubectl) != []


# What the lesson box shows in two lines at 1280x720 (measured: a third line pushes the command and
# the Do it button out of view).
LONGEST = {"en": 290, "ko": 180}


@pytest.mark.parametrize("lesson, number, step", STEPS)
def test_an_explanation_fits_the_lesson_box_on_a_projector(lesson: Lesson, number: int, step: Step):
    for language, longest in LONGEST.items():
        assert len(" ".join(step.explain[language].split())) <= longest, language
