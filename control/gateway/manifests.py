"""The Gateway API's kinds as CustomResourceDefinitions (`gateway.networking.k8s.io`, the standard
channel): GatewayClass, Gateway and HTTPRoute at `v1`, ReferenceGrant at `v1beta1`.

Guarantees: each definition follows upstream's v1 schema (kubernetes-sigs/gateway-api
`config/crd/standard`), trimmed to the fields this cluster serves, keeping the validation the hub
enforces: types, `required`, `enum` (path and header match types, methods, `allowedRoutes.from`),
`minimum`/`maximum` (a backendRef `weight` of 0..1000000, ports 1..65535), `pattern` (hostnames,
names, reasons), `minLength`/`maxLength`, `maxItems` (16 hostnames, 32 parentRefs, 16 rules, 64
matches, 16 backendRefs, 64 listeners) and `default`s (a parentRef's group and kind, a backendRef's
kind and weight, a rule's `PathPrefix /` match, a listener's `allowedRoutes.namespaces.from: Same`,
the Pending conditions of a fresh status). Upstream's CEL rules (`x-kubernetes-validations`) are
left out: the hub does not evaluate CEL. The printer columns are upstream's, so `kubectl get
gateway,httproute` prints what it prints against any cluster. `GATEWAYCLASSES`, `GATEWAYS`,
`HTTPROUTES` and `REFERENCEGRANTS` are the toolkit's `Resource`s for them.
"""

from __future__ import annotations

from typing import Any

from control.client.resources import Resource

GROUP = "gateway.networking.k8s.io"
GATEWAYCLASSES = Resource(GROUP, "v1", "gatewayclasses", "GatewayClass", namespaced=False)
GATEWAYS = Resource(GROUP, "v1", "gateways", "Gateway")
HTTPROUTES = Resource(GROUP, "v1", "httproutes", "HTTPRoute")
REFERENCEGRANTS = Resource(GROUP, "v1beta1", "referencegrants", "ReferenceGrant")
BUNDLE_VERSION = "v1.2.1"  # the upstream release whose standard channel these follow
APPROVED = "https://github.com/kubernetes-sigs/gateway-api/pull/3328"

Schema = dict[str, Any]
AGE = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
GROUP_PATTERN = r"^$|" + DNS_SUBDOMAIN
KIND_PATTERN = r"^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$"
HOSTNAME_PATTERN = r"^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
CONTROLLER_PATTERN = (r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
                     r"\/[A-Za-z0-9\/\-._~%!$&'()*+,;=:]+$")
HEADER_NAME_PATTERN = r"^[A-Za-z0-9!#$%&'*+\-.^_\x60|~]+$"
DURATION_PATTERN = r"^([0-9]{1,5}(h|m|s|ms)){1,4}$"
PATH_TYPES = ["Exact", "PathPrefix", "RegularExpression"]
MATCH_TYPES = ["Exact", "RegularExpression"]
METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"]
FILTER_TYPES = ["RequestHeaderModifier", "ResponseHeaderModifier", "RequestMirror", "RequestRedirect",
                "URLRewrite", "ExtensionRef"]


def _s(min_length: int | None = None, max_length: int | None = None, pattern: str | None = None,
       **extra: Any) -> Schema:
    out: Schema = {"type": "string", **extra}
    if min_length is not None:
        out["minLength"] = min_length
    if max_length is not None:
        out["maxLength"] = max_length
    if pattern is not None:
        out["pattern"] = pattern
    return out


def _obj(properties: Schema, required: list[str] | None = None, **extra: Any) -> Schema:
    out: Schema = {"type": "object", "properties": properties, **extra}
    if required:
        out["required"] = required
    return out


def _list(items: Schema, max_items: int, **extra: Any) -> Schema:
    return {"type": "array", "items": items, "maxItems": max_items, **extra}


PORT = {"type": "integer", "format": "int32", "minimum": 1, "maximum": 65535}
GROUP_FIELD = _s(max_length=253, pattern=GROUP_PATTERN)
KIND_FIELD = _s(1, 63, KIND_PATTERN)
NAME_FIELD = _s(1, 253)
NAMESPACE_FIELD = _s(1, 63, DNS_LABEL)
SECTION_NAME = _s(1, 253, DNS_SUBDOMAIN)
HOSTNAME = _s(1, 253, HOSTNAME_PATTERN)
CONTROLLER_NAME = _s(1, 253, CONTROLLER_PATTERN)
LABELS = {"type": "object", "additionalProperties": {"type": "string"}}

CONDITION = _obj({
    "lastTransitionTime": {"type": "string", "format": "date-time"},
    "message": _s(max_length=32768),
    "observedGeneration": {"type": "integer", "format": "int64", "minimum": 0},
    "reason": _s(1, 1024, r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"),
    "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
    "type": _s(max_length=316, pattern=r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                                       r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"),
}, ["lastTransitionTime", "message", "reason", "status", "type"])
CONDITIONS = _list(CONDITION, 8, **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"]})


def _pending(*types: str) -> list[Schema]:
    """The conditions a fresh object's status starts with (upstream's status defaults)."""
    return [{"type": t, "status": "Unknown", "reason": "Pending", "message": "Waiting for controller",
             "lastTransitionTime": "1970-01-01T00:00:00Z"} for t in types]


def _crd(kind: str, plural: str, singular: str, short: list[str], version: str, scope: str, spec: Schema,
         status: Schema | None, columns: list[Schema], description: str) -> Schema:
    properties: Schema = {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                          "metadata": {"type": "object"}, "spec": spec}
    served: Schema = {"name": version, "served": True, "storage": True,
                      "schema": {"openAPIV3Schema": _obj(properties, ["spec"], description=description)},
                      "additionalPrinterColumns": columns}
    if status is not None:
        properties["status"] = status
        served["subresources"] = {"status": {}}
    names: Schema = {"kind": kind, "listKind": f"{kind}List", "plural": plural, "singular": singular,
                     "categories": ["gateway-api"]}
    if short:
        names["shortNames"] = short
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{GROUP}",
                         "annotations": {"api-approved.kubernetes.io": APPROVED,
                                         "gateway.networking.k8s.io/bundle-version": BUNDLE_VERSION,
                                         "gateway.networking.k8s.io/channel": "standard"}},
            "spec": {"group": GROUP, "scope": scope, "names": names, "versions": [served]}}


GATEWAYCLASS_CRD = _crd(
    "GatewayClass", "gatewayclasses", "gatewayclass", ["gc"], "v1", "Cluster",
    spec=_obj({
        "controllerName": {**CONTROLLER_NAME, "description": "The controller that handles Gateways of this class."},
        "description": _s(max_length=64),
        "parametersRef": _obj({"group": GROUP_FIELD, "kind": KIND_FIELD, "name": NAME_FIELD,
                               "namespace": NAMESPACE_FIELD}, ["group", "kind", "name"]),
    }, ["controllerName"]),
    status=_obj({"conditions": CONDITIONS,
                 "supportedFeatures": _list(_obj({"name": _s()}, ["name"]), 64)},
                default={"conditions": _pending("Accepted")}),
    columns=[{"name": "Controller", "type": "string", "jsonPath": ".spec.controllerName"},
             {"name": "Accepted", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Accepted")].status'},
             AGE,
             {"name": "Description", "type": "string", "jsonPath": ".spec.description", "priority": 1}],
    description="GatewayClass describes a class of Gateways available to the user for creating Gateway resources.",
)

ROUTE_GROUP_KIND = _obj({"group": GROUP_FIELD, "kind": KIND_FIELD}, ["kind"])
LISTENER = _obj({
    "name": SECTION_NAME,
    "hostname": HOSTNAME,
    "port": PORT,
    "protocol": _s(1, 255, r"^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$|" + DNS_SUBDOMAIN[:-1] + r"\/[A-Za-z0-9]+$"),
    "tls": _obj({"mode": {"type": "string", "enum": ["Terminate", "Passthrough"], "default": "Terminate"},
                 "certificateRefs": _list(_obj({"group": GROUP_FIELD, "kind": KIND_FIELD, "name": NAME_FIELD,
                                                "namespace": NAMESPACE_FIELD}, ["name"]), 64),
                 "options": {"type": "object", "maxProperties": 16,
                             "additionalProperties": _s(0, 4096)}}),
    "allowedRoutes": _obj({
        "namespaces": _obj({"from": {"type": "string", "enum": ["All", "Selector", "Same"], "default": "Same"},
                            "selector": _obj({"matchLabels": LABELS,
                                              "matchExpressions": {"type": "array", "items": _obj(
                                                  {"key": _s(), "operator": _s(),
                                                   "values": {"type": "array", "items": _s()}},
                                                  ["key", "operator"])}})},
                           default={"from": "Same"}),
        "kinds": _list(ROUTE_GROUP_KIND, 8),
    }, default={"namespaces": {"from": "Same"}}),
}, ["name", "port", "protocol"])
LISTENER_STATUS = _obj({"name": SECTION_NAME, "attachedRoutes": {"type": "integer", "format": "int32"},
                        "supportedKinds": _list(ROUTE_GROUP_KIND, 8), "conditions": CONDITIONS},
                       ["attachedRoutes", "conditions", "name", "supportedKinds"])
ADDRESS = _obj({"type": _s(1, 253, r"^Hostname|IPAddress|NamedAddress|" + DNS_SUBDOMAIN[1:-1]
                           + r"\/[A-Za-z0-9\/\-._~%!$&'()*+,;=:]+$", default="IPAddress"),
                "value": _s(1, 253)}, ["value"])

GATEWAY_CRD = _crd(
    "Gateway", "gateways", "gateway", ["gtw"], "v1", "Namespaced",
    spec=_obj({
        "gatewayClassName": _s(1, 253, description="The GatewayClass (and so the controller) of this Gateway."),
        "listeners": _list(LISTENER, 64, minItems=1,
                           **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}),
        "addresses": _list(ADDRESS, 16),
        "infrastructure": _obj({"labels": {**LABELS, "maxProperties": 8},
                                "annotations": {**LABELS, "maxProperties": 8}}),
    }, ["gatewayClassName", "listeners"]),
    status=_obj({"addresses": _list(_obj({"type": ADDRESS["properties"]["type"], "value": _s(1, 253)}, ["value"]), 16),
                 "conditions": CONDITIONS,
                 "listeners": _list(LISTENER_STATUS, 64)},
                default={"conditions": _pending("Accepted", "Programmed")}),
    columns=[{"name": "Class", "type": "string", "jsonPath": ".spec.gatewayClassName"},
             {"name": "Address", "type": "string", "jsonPath": ".status.addresses[*].value"},
             {"name": "Programmed", "type": "string",
              "jsonPath": '.status.conditions[?(@.type=="Programmed")].status'},
             AGE],
    description="Gateway represents an instance of a service-traffic handling infrastructure by binding "
                "Listeners to a set of IP addresses.",
)

PARENT_REF = _obj({"group": {**GROUP_FIELD, "default": GROUP}, "kind": {**KIND_FIELD, "default": "Gateway"},
                   "name": NAME_FIELD, "namespace": NAMESPACE_FIELD, "sectionName": SECTION_NAME,
                   "port": PORT}, ["name"])
HEADER_MATCH = _obj({"name": _s(1, 256, HEADER_NAME_PATTERN),
                     "type": {"type": "string", "enum": MATCH_TYPES, "default": "Exact"},
                     "value": _s(1, 4096)}, ["name", "value"])
QUERY_MATCH = _obj({"name": _s(1, 256, HEADER_NAME_PATTERN),
                    "type": {"type": "string", "enum": MATCH_TYPES, "default": "Exact"},
                    "value": _s(1, 1024)}, ["name", "value"])
MATCH = _obj({
    "path": _obj({"type": {"type": "string", "enum": PATH_TYPES, "default": "PathPrefix",
                           "description": "Exact, PathPrefix (whole path elements) or RegularExpression."},
                  "value": _s(max_length=1024, default="/", description="The path to match, starting with /.")},
                 default={"type": "PathPrefix", "value": "/"}, description="How the request's path must match."),
    "headers": _list(HEADER_MATCH, 16, **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}),
    "queryParams": _list(QUERY_MATCH, 16, **{"x-kubernetes-list-type": "map",
                                             "x-kubernetes-list-map-keys": ["name"]}),
    "method": {"type": "string", "enum": METHODS},
})
FILTER = _obj({"type": {"type": "string", "enum": FILTER_TYPES}}, ["type"],
              **{"x-kubernetes-preserve-unknown-fields": True})
BACKEND_REF = _obj({
    "group": {**GROUP_FIELD, "default": ""},
    "kind": {**KIND_FIELD, "default": "Service"},
    "name": NAME_FIELD,
    "namespace": NAMESPACE_FIELD,
    "port": PORT,
    "weight": {"type": "integer", "format": "int32", "default": 1, "minimum": 0, "maximum": 1000000,
               "description": "This backend's share of the rule's requests: weight / sum of the rule's weights "
                              "(0: none). Default 1."},
    "filters": _list(FILTER, 16),
}, ["name"])
RULE = _obj({
    "name": SECTION_NAME,
    "matches": _list(MATCH, 64, default=[{"path": {"type": "PathPrefix", "value": "/"}}]),
    "filters": _list(FILTER, 16),
    "backendRefs": _list(BACKEND_REF, 16, description="Services (name, port, weight) that answer the rule's requests; "
                                                      "one of another namespace needs a ReferenceGrant there."),
    "timeouts": _obj({"request": _s(pattern=DURATION_PATTERN), "backendRequest": _s(pattern=DURATION_PATTERN)}),
})
PARENT_STATUS = _obj({"parentRef": PARENT_REF, "controllerName": CONTROLLER_NAME, "conditions": CONDITIONS},
                     ["controllerName", "parentRef"])

HTTPROUTE_CRD = _crd(
    "HTTPRoute", "httproutes", "httproute", [], "v1", "Namespaced",
    spec=_obj({
        "parentRefs": _list(PARENT_REF, 32, description="The Gateways (and their listeners, by sectionName) "
                                                       "this route attaches to."),
        "hostnames": _list(HOSTNAME, 16, description="Host headers this route answers (exact names, or *.suffix); "
                                                     "none: every host its listener takes."),
        "rules": _list(RULE, 16, default=[{"matches": [{"path": {"type": "PathPrefix", "value": "/"}}]}],
                       description="Matches and the weighted backends their requests go to."),
    }),
    status=_obj({"parents": _list(PARENT_STATUS, 32)}, ["parents"]),
    columns=[{"name": "Hostnames", "type": "string", "jsonPath": ".spec.hostnames"}, AGE],
    description="HTTPRoute provides a way to route HTTP requests: by hostname, path, header, query parameter "
                "or method, to weighted backends.",
)

REFERENCEGRANT_CRD = _crd(
    "ReferenceGrant", "referencegrants", "referencegrant", ["refgrant"], "v1beta1", "Namespaced",
    spec=_obj({
        "from": _list(_obj({"group": _s(max_length=253, pattern=GROUP_PATTERN), "kind": KIND_FIELD,
                            "namespace": NAMESPACE_FIELD}, ["group", "kind", "namespace"]), 16, minItems=1),
        "to": _list(_obj({"group": _s(max_length=253, pattern=GROUP_PATTERN), "kind": KIND_FIELD,
                          "name": NAME_FIELD}, ["group", "kind"]), 16, minItems=1),
    }, ["from", "to"]),
    status=None,
    columns=[AGE],
    description="ReferenceGrant lets objects of other namespaces refer to objects of this one (a Route's "
                "backendRef to a Service here).",
)

CRDS = (GATEWAYCLASS_CRD, GATEWAY_CRD, HTTPROUTE_CRD, REFERENCEGRANT_CRD)

# --- what a fresh cluster gets besides the definitions -------------------------------------------

CLASS_NAME = "kube-kitchen"  # the bootstrap GatewayClass, handled by our controller
CONTROLLER = "kubekitchen.dev/gateway-controller"  # the controllerName of our GatewayClasses
GATEWAY_CLASS = {"apiVersion": f"{GROUP}/v1", "kind": "GatewayClass", "metadata": {"name": CLASS_NAME},
                 "spec": {"controllerName": CONTROLLER,
                          "description": "Kube Kitchen's front door: HTTP listeners on this machine"}}
SERVED = ["gatewayclasses", "gateways", "httproutes", "referencegrants"]


def _aggregate(name: str, to: list[str], resources: list[str], verbs: list[str]) -> Schema:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": f"{GROUP}:aggregate-to-{name}",
                         "labels": {f"rbac.authorization.k8s.io/aggregate-to-{role}": "true" for role in to}},
            "rules": [{"apiGroups": [GROUP], "resources": resources, "verbs": verbs}]}


# upstream's rbac_aggregation: the built-in view, edit and admin roles cover the Gateway API
AGGREGATION_ROLES = (
    _aggregate("view", ["view", "edit", "admin"], SERVED + [f"{r}/status" for r in SERVED if r != "referencegrants"],
               ["get", "list", "watch"]),
    _aggregate("edit", ["edit", "admin"], SERVED, ["create", "delete", "deletecollection", "patch", "update"]),
)
