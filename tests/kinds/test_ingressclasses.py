"""IngressClass defaults, validation and printing, and the DefaultIngressClass admission."""

from control.kinds.ingressclasses import (
    INGRESSCLASS, admit_default_class, ingressclass_cells, ingressclass_defaults, kitchen_ingress_class,
    validate_ingressclass, validate_ingressclass_update,
)
from control.kinds.ingresses import INGRESS


def _class(name="nginx", created="2026-01-01T00:00:00Z", default=False, **spec):
    meta = {"name": name, "creationTimestamp": created}
    if default:
        meta["annotations"] = {"ingressclass.kubernetes.io/is-default-class": "true"}
    return {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": meta,
            "spec": {"controller": "k8s.io/ingress-nginx", **spec}}


def _messages(causes):
    return [f"{c['field']}: {c['message']}" for c in causes]


def test_controller_is_required_domain_prefixed_and_immutable():
    assert validate_ingressclass(_class()) == []
    assert _messages(validate_ingressclass(_class(controller=""))) == ["spec.controller: Required value"]
    assert _messages(validate_ingressclass(_class(controller="nginx"))) == [
        'spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")']
    assert _messages(validate_ingressclass_update(_class(controller="example.com/other"), _class())) == [
        'spec.controller: Invalid value: "example.com/other": field is immutable']


def test_parameters_default_to_cluster_scope_and_are_checked():
    ic = _class(parameters={"apiGroup": "k8s.example.net", "kind": "ClusterIngressParameter", "name": "p"})
    ingressclass_defaults(ic)
    assert ic["spec"]["parameters"]["scope"] == "Cluster"
    assert validate_ingressclass(ic) == []
    ic["spec"]["parameters"]["namespace"] = "x"
    assert _messages(validate_ingressclass(ic)) == [
        "spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'"]
    namespaced = _class(parameters={"kind": "P", "name": "p", "scope": "Namespace"})
    assert _messages(validate_ingressclass(namespaced)) == [
        "spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'"]
    odd = _class(parameters={"kind": "P", "name": "p", "scope": "Galaxy"})
    assert _messages(validate_ingressclass(odd)) == [
        'spec.parameters.scope: Unsupported value: "Galaxy": supported values: "Cluster", "Namespace"']


def test_kubectl_columns():
    assert [c.name for c in INGRESSCLASS.columns] == ["Name", "Controller", "Parameters", "Age"]
    assert ingressclass_cells(_class(), 0)[:3] == ["nginx", "k8s.io/ingress-nginx", "<none>"]
    ic = _class(parameters={"apiGroup": "k8s.example.net", "kind": "IngressParameters", "name": "external-lb"})
    assert ingressclass_cells(ic, 0)[2] == "IngressParameters.k8s.example.net/external-lb"


def _ingress(**spec):
    return {"metadata": {"name": "front", "namespace": "default"}, "spec": {"rules": [], **spec}}


def test_the_newest_default_class_is_given_to_an_ingress_naming_none():
    classes = [_class("old", "2026-01-01T00:00:00Z", default=True), _class("new", "2026-01-02T00:00:00Z", default=True),
               _class("plain", "2026-01-03T00:00:00Z")]

    def listed(resource, namespace):
        return classes if resource == INGRESSCLASS.resource else []

    ing = _ingress()
    assert admit_default_class(INGRESS.resource, ing, None, listed) == ""
    assert ing["spec"]["ingressClassName"] == "new"
    named = _ingress(ingressClassName="plain")
    admit_default_class(INGRESS.resource, named, None, listed)
    assert named["spec"]["ingressClassName"] == "plain"
    annotated = _ingress()
    annotated["metadata"]["annotations"] = {"kubernetes.io/ingress.class": "nginx"}
    admit_default_class(INGRESS.resource, annotated, None, listed)
    assert "ingressClassName" not in annotated["spec"]
    updated = _ingress()
    admit_default_class(INGRESS.resource, updated, _ingress(), listed)
    assert "ingressClassName" not in updated["spec"]
    none = _ingress()
    admit_default_class(INGRESS.resource, none, None, lambda r, n: [_class("plain")])
    assert "ingressClassName" not in none["spec"]


def test_the_kitchen_class_is_valid_and_the_default():
    ic = kitchen_ingress_class("uid", "2026-01-01T00:00:00Z")
    assert validate_ingressclass(ic) == [] and ic["spec"]["controller"] == "kubekitchen.dev/ingress"
    assert ic["metadata"]["annotations"]["ingressclass.kubernetes.io/is-default-class"] == "true"
