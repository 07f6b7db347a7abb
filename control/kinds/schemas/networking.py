"""OpenAPI schemas of networking.k8s.io/v1 Ingress and IngressClass, as k8s.io/api publishes them.

Guarantees: every field `kubectl explain ingress|ingressclass` and kubectl's client-side validation
look for is declared with upstream's types (a backend's port `number` is an int32, `pathType` one
of Exact, ImplementationSpecific, Prefix); the lists upstream marks atomic are atomic; a rule's
`http` sits beside its `host`, as Go's inlined IngressRuleValue puts it.
"""

from __future__ import annotations

from control.kinds.schemas.build import (
    CORE, Schema, array, int32, kind_obj, metadata, obj, ref, string, strings,
)

NETWORKING = "io.k8s.api.networking.v1."

DEFINITIONS: dict[str, Schema] = {
    NETWORKING + "Ingress": kind_obj(
        "Ingress is a collection of rules that allow inbound connections to reach the endpoints defined by a "
        "backend. An Ingress can be configured to give services externally-reachable urls, load balance traffic, "
        "terminate SSL, offer name based virtual hosting etc.",
        ("networking.k8s.io", "v1", "Ingress"),
        {
            "metadata": metadata(),
            "spec": ref(NETWORKING + "IngressSpec", "spec is the desired state of the Ingress."),
            "status": ref(NETWORKING + "IngressStatus", "status is the current state of the Ingress."),
        },
    ),
    NETWORKING + "IngressSpec": obj(
        "IngressSpec describes the Ingress the user wishes to exist.",
        {
            "defaultBackend": ref(NETWORKING + "IngressBackend", "defaultBackend is the backend that should "
                                  "handle requests that don't match any rule.", default=False),
            "ingressClassName": string("ingressClassName is the name of an IngressClass cluster resource."),
            "rules": array(NETWORKING + "IngressRule", "rules is a list of host rules used to configure the "
                           "Ingress.", list_type="atomic"),
            "tls": array(NETWORKING + "IngressTLS", "tls represents the TLS configuration.", list_type="atomic"),
        },
    ),
    NETWORKING + "IngressBackend": obj(
        "IngressBackend describes all endpoints for a given service and port.",
        {
            "resource": ref(CORE + "TypedLocalObjectReference", "resource is an ObjectRef to another "
                            "Kubernetes resource in the namespace of the Ingress object.", default=False),
            "service": ref(NETWORKING + "IngressServiceBackend", "service references a service as a backend.",
                           default=False),
        },
    ),
    NETWORKING + "IngressServiceBackend": obj(
        "IngressServiceBackend references a Kubernetes Service as a Backend.",
        {
            "name": string("name is the referenced service. The service must exist in the same namespace as "
                           "the Ingress object."),
            "port": ref(NETWORKING + "ServiceBackendPort", "port of the referenced service."),
        },
        required=["name"],
    ),
    NETWORKING + "ServiceBackendPort": obj(
        "ServiceBackendPort is the service port being referenced.",
        {
            "name": string("name is the name of the port on the Service. This is a mutually exclusive setting "
                           "with \"Number\"."),
            "number": int32("number is the numerical port number (e.g. 80) on the Service. This is a mutually "
                            "exclusive setting with \"Name\"."),
        },
    ),
    NETWORKING + "IngressRule": obj(
        "IngressRule represents the rules mapping the paths under a specified host to the related backend "
        "services.",
        {
            "host": string("host is the fully qualified domain name of a network host, as defined by RFC 3986; "
                           "a wildcard host (\"*.foo.com\") matches one DNS label."),
            "http": ref(NETWORKING + "HTTPIngressRuleValue", "HTTP rules of this host.", default=False),
        },
    ),
    NETWORKING + "HTTPIngressRuleValue": obj(
        "HTTPIngressRuleValue is a list of http selectors pointing to backends.",
        {"paths": array(NETWORKING + "HTTPIngressPath", "paths is a collection of paths that map requests to "
                        "backends.", list_type="atomic")},
        required=["paths"],
    ),
    NETWORKING + "HTTPIngressPath": obj(
        "HTTPIngressPath associates a path with a backend.",
        {
            "backend": ref(NETWORKING + "IngressBackend", "backend defines the referenced service endpoint to "
                           "which the traffic will be forwarded to."),
            "path": string("path is matched against the path of an incoming request; it must begin with a '/'."),
            "pathType": string("pathType determines the interpretation of the path matching.",
                               enum=["Exact", "ImplementationSpecific", "Prefix"]),
        },
        required=["pathType", "backend"],
    ),
    NETWORKING + "IngressTLS": obj(
        "IngressTLS describes the transport layer security associated with an ingress.",
        {
            "hosts": strings("hosts is a list of hosts included in the TLS certificate.", list_type="atomic"),
            "secretName": string("secretName is the name of the secret used to terminate TLS traffic on port "
                                 "443."),
        },
    ),
    NETWORKING + "IngressStatus": obj(
        "IngressStatus describe the current state of the Ingress.",
        {"loadBalancer": ref(NETWORKING + "IngressLoadBalancerStatus", "loadBalancer contains the current "
                             "status of the load-balancer.")},
    ),
    NETWORKING + "IngressLoadBalancerStatus": obj(
        "IngressLoadBalancerStatus represents the status of a load-balancer.",
        {"ingress": array(NETWORKING + "IngressLoadBalancerIngress", "ingress is a list containing "
                          "ingress points for the load-balancer.", list_type="atomic")},
    ),
    NETWORKING + "IngressLoadBalancerIngress": obj(
        "IngressLoadBalancerIngress represents the status of a load-balancer ingress point.",
        {
            "hostname": string("hostname is set for load-balancer ingress points that are DNS based."),
            "ip": string("ip is set for load-balancer ingress points that are IP based."),
            "ports": array(NETWORKING + "IngressPortStatus", "ports provides information about the ports "
                           "exposed by this LoadBalancer.", list_type="atomic"),
        },
    ),
    NETWORKING + "IngressPortStatus": obj(
        "IngressPortStatus represents the error condition of a service port",
        {
            "error": string("error is to record the problem with the service port."),
            "port": int32("port is the port number of the ingress port."),
            "protocol": string("protocol is the protocol of the ingress port: TCP, UDP or SCTP.",
                               enum=["SCTP", "TCP", "UDP"]),
        },
        required=["port", "protocol"],
    ),
    NETWORKING + "IngressClass": kind_obj(
        "IngressClass represents the class of the Ingress, referenced by the Ingress Spec. The "
        "`ingressclass.kubernetes.io/is-default-class` annotation can be used to indicate that an IngressClass "
        "should be considered default.",
        ("networking.k8s.io", "v1", "IngressClass"),
        {
            "metadata": metadata(),
            "spec": ref(NETWORKING + "IngressClassSpec", "spec is the desired state of the IngressClass."),
        },
    ),
    NETWORKING + "IngressClassSpec": obj(
        "IngressClassSpec provides information about the class of an Ingress.",
        {
            "controller": string("controller refers to the name of the controller that should handle this "
                                 "class, a domain-prefixed path such as \"acme.io/ingress-controller\". "
                                 "This field is immutable."),
            "parameters": ref(NETWORKING + "IngressClassParametersReference", "parameters is a link to a custom "
                              "resource containing additional configuration for the controller.", default=False),
        },
    ),
    NETWORKING + "IngressClassParametersReference": obj(
        "IngressClassParametersReference identifies an API object, possibly namespace-scoped.",
        {
            "apiGroup": string("apiGroup is the group for the resource being referenced."),
            "kind": string("kind is the type of resource being referenced."),
            "name": string("name is the name of resource being referenced."),
            "namespace": string("namespace is the namespace of the resource being referenced; set when scope "
                                "is \"Namespace\"."),
            "scope": string("scope represents if this refers to a cluster or namespace scoped resource: "
                            "\"Cluster\" (default) or \"Namespace\"."),
        },
        required=["kind", "name"],
    ),
}
