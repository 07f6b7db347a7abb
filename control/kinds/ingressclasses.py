"""networking.k8s.io/v1 IngressClass and the DefaultIngressClass admission plugin, as kube-apiserver
has them (pkg/apis/networking/validation, plugin/pkg/admission/network/defaultingressclass).

Guarantees:
- Defaults: a `parameters` reference without a scope gets scope Cluster (SetDefaults_IngressClass).
- Validation is upstream's ValidateIngressClass with its messages: `spec.controller` is required,
  at most 250 bytes, a domain-prefixed path ("must be a domain-prefixed path (such as
  \"acme.io/foo\")") and immutable ("field is immutable"); parameters name a kind and a name
  (path segments), an apiGroup that is a DNS subdomain, a scope Cluster or Namespace, a namespace
  exactly when the scope is Namespace.
- `kubectl get ingressclasses` shows NAME, CONTROLLER, PARAMETERS (`Kind.group/name` or
  `<none>`), AGE.
- The DefaultIngressClass admission (`DEFAULT_INGRESS_CLASS`): an Ingress created without
  `spec.ingressClassName` and without the `kubernetes.io/ingress.class` annotation gets the name of
  the class annotated `ingressclass.kubernetes.io/is-default-class: "true"`; with several such
  classes the newest wins (ties: the name first in order), as upstream's getDefaultClass.
- `kitchen_ingress_class()` is the class bootstrap creates: `kitchen`, controller
  `kubekitchen.dev/ingress`, the default.
"""

from __future__ import annotations

import re
from typing import Any

from control.errors import go_text, go_value
from control.kinds.apiservices import path_segment_name
from control.kinds.base import AGE_COLUMN, NAME_COLUMN, Cause, Column, Kind, Obj, cause, name_causes, required
from control.kinds.ingresses import CLASS_ANNOTATION, GROUP, VERSION, INGRESS, subdomain_causes
from control.kinds.meta import age, parse_time
from control.kinds.strategy import Lister, Policy

RESOURCE = f"{GROUP}/ingressclasses"
DEFAULT_CLASS_ANNOTATION = "ingressclass.kubernetes.io/is-default-class"
KITCHEN_CLASS, KITCHEN_CONTROLLER = "kitchen", "kubekitchen.dev/ingress"
MAX_CONTROLLER_LENGTH = 250
SCOPES = ("Cluster", "Namespace")
HTTP_PATH = re.compile(r"^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def ingressclass_defaults(ic: Obj) -> None:
    parameters = _dict(ic.get("spec")).get("parameters")
    if isinstance(parameters, dict) and parameters.get("scope") is None:
        parameters["scope"] = "Cluster"


def domain_prefixed_path_causes(value: str, path: str) -> list[Cause]:
    """IsDomainPrefixedPath: `<DNS subdomain>/<HTTP path>`."""
    host, slash, rest = value.partition("/")
    if not slash or not host or not rest:
        return [cause(path, f'Invalid value: {go_value(value)}: must be a domain-prefixed path (such as "acme.io/foo")')]
    out = subdomain_causes(host, path)
    if not HTTP_PATH.match(rest):
        out.append(cause(path, f"Invalid value: {go_value(rest)}: Invalid path (regex used for validation is "
                         f"'{HTTP_PATH.pattern[1:-1]}')"))
    return out


def _parameters_causes(parameters: dict[str, Any], path: str) -> list[Cause]:
    """validateIngressClassParametersReference."""
    out: list[Cause] = []
    if parameters.get("apiGroup") is not None:
        out += subdomain_causes(parameters["apiGroup"], f"{path}.apiGroup")
    for key in ("kind", "name"):
        value = parameters.get(key)
        out += [required(f"{path}.{key}")] if not value else \
            [{**c, "field": f"{path}.{key}"} for c in path_segment_name(value)]
    scope = parameters.get("scope")
    if scope is None:
        return out + [required(f"{path}.scope")]
    namespace = parameters.get("namespace")
    if scope not in SCOPES:
        supported = ", ".join(f'"{s}"' for s in SCOPES)
        out.append(cause(f"{path}.scope", f"Unsupported value: {go_value(scope)}: supported values: {supported}",
                         "FieldValueNotSupported"))
    elif scope == "Namespace" and namespace is None:
        out.append(cause(f"{path}.namespace", "Required value: `parameters.scope` is set to 'Namespace'",
                         "FieldValueRequired"))
    elif scope == "Namespace":
        out += name_causes(namespace, f"{path}.namespace", label=True)
    elif namespace is not None:
        out.append(cause(f"{path}.namespace", "Forbidden: `parameters.scope` is set to 'Cluster'",
                         "FieldValueForbidden"))
    return out


def validate_ingressclass(ic: Obj) -> list[Cause]:
    spec = _dict(ic.get("spec"))
    controller = spec.get("controller") or ""
    out: list[Cause] = []
    if not controller:
        out.append(required("spec.controller"))
    else:
        if len(str(controller).encode()) > MAX_CONTROLLER_LENGTH:
            out.append(cause("spec.controller", f"Too long: may not be more than {MAX_CONTROLLER_LENGTH} bytes",
                             "FieldValueTooLong"))
        out += domain_prefixed_path_causes(str(controller), "spec.controller")
    if spec.get("parameters") is not None:
        out += _parameters_causes(_dict(spec["parameters"]), "spec.parameters")
    return out


def validate_ingressclass_update(new: Obj, old: Obj) -> list[Cause]:
    controller = _dict(new.get("spec")).get("controller")
    if controller != _dict(old.get("spec")).get("controller"):
        return [cause("spec.controller", f"Invalid value: {go_value(controller)}: field is immutable")]
    return []


def ingressclass_cells(ic: Obj, now: float) -> list[Any]:
    spec = _dict(ic.get("spec"))
    parameters = spec.get("parameters")
    shown = "<none>"
    if isinstance(parameters, dict):
        group = parameters.get("apiGroup")
        shown = f"{go_text(parameters.get('kind'))}{'.' + go_text(group) if group is not None else ''}/" \
                f"{go_text(parameters.get('name'))}"
    return [ic["metadata"]["name"], spec.get("controller") or "", shown, age(ic, now)]


def is_default(ic: Obj) -> bool:
    return _dict(_dict(ic.get("metadata")).get("annotations")).get(DEFAULT_CLASS_ANNOTATION) == "true"


def default_class(listed: Lister) -> Obj | None:
    """getDefaultClass: the newest default class (by creationTimestamp, then name)."""
    defaults = [ic for ic in listed(RESOURCE, "") if is_default(ic)]
    if not defaults:
        return None

    def created(ic: Obj) -> float:
        return parse_time(ic["metadata"].get("creationTimestamp")) or 0.0

    newest = max(created(ic) for ic in defaults)
    return min((ic for ic in defaults if created(ic) == newest), key=lambda ic: ic["metadata"]["name"])


def admit_default_class(resource: str, ing: Obj, old: Obj | None, listed: Lister) -> str:
    """DefaultIngressClass on create: name the default class when the Ingress names none."""
    spec = ing.get("spec")
    if resource != INGRESS.resource or old is not None or not isinstance(spec, dict):
        return ""
    if spec.get("ingressClassName") is not None or CLASS_ANNOTATION in _dict(ing["metadata"].get("annotations")):
        return ""
    found = default_class(listed)
    if found is not None:
        spec["ingressClassName"] = found["metadata"]["name"]
    return ""


DEFAULT_INGRESS_CLASS = Policy(name="DefaultIngressClass", mutate=admit_default_class)


def kitchen_ingress_class(uid: str, created: str) -> Obj:
    """The class a fresh kitchen has: the maître d' at the front door, the default."""
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "IngressClass",
            "metadata": {"name": KITCHEN_CLASS, "uid": uid, "creationTimestamp": created,
                         "annotations": {DEFAULT_CLASS_ANNOTATION: "true"}},
            "spec": {"controller": KITCHEN_CONTROLLER}}


INGRESSCLASS = Kind(
    group=GROUP, version=VERSION, kind="IngressClass", plural="ingressclasses", namespaced=False,
    definition="io.k8s.api.networking.v1.IngressClass", defaults=ingressclass_defaults,
    validate=validate_ingressclass, validate_update=validate_ingressclass_update, has_spec=True,
    policy=DEFAULT_INGRESS_CLASS,
    columns=(NAME_COLUMN,
             Column("Controller", description="Controller that is responsible for handling this class"),
             Column("Parameters", description="A reference to a resource with additional parameters"),
             AGE_COLUMN),
    cells=ingressclass_cells,
)
