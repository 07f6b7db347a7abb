"""OpenAPI schema of apiregistration.k8s.io/v1 APIService, as kube-aggregator publishes it.

Guarantees: `spec.service` is a ServiceReference (namespace, name, port) or absent (a Local
APIService); `caBundle` is bytes (base64 in JSON); conditions merge by `type`.
"""

from __future__ import annotations

from control.kinds.schemas.build import (Schema, array, boolean, int32, kind_obj, metadata, obj, ref, string,
                                         time)

APIREGISTRATION = "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1."

DEFINITIONS: dict[str, Schema] = {
    APIREGISTRATION + "APIService": kind_obj(
        "APIService represents a server for a particular GroupVersion. Name must be \"version.group\".",
        ("apiregistration.k8s.io", "v1", "APIService"),
        {
            "metadata": metadata(),
            "spec": ref(APIREGISTRATION + "APIServiceSpec", "Spec contains information for locating and "
                        "communicating with a server"),
            "status": ref(APIREGISTRATION + "APIServiceStatus", "Status contains derived information about an "
                          "API server"),
        },
    ),
    APIREGISTRATION + "APIServiceSpec": obj(
        "APIServiceSpec contains information for locating and communicating with a server. Only https is "
        "supported, though you are able to disable certificate verification.",
        {
            "caBundle": {"type": "string", "format": "byte", "x-kubernetes-list-type": "atomic",
                         "description": "CABundle is a PEM encoded CA bundle which will be used to validate an "
                         "API server's serving certificate. If unspecified, system trust roots on the apiserver "
                         "are used."},
            "group": string("Group is the API group name this server hosts"),
            "groupPriorityMinimum": int32("GroupPriorityMinimum is the priority this group should have at least. "
                                          "Higher priority means that the group is preferred by clients over "
                                          "lower priority ones."),
            "insecureSkipTLSVerify": boolean("InsecureSkipTLSVerify disables TLS certificate verification when "
                                             "communicating with this server. This is strongly discouraged."),
            "service": ref(APIREGISTRATION + "ServiceReference", "Service is a reference to the service for this "
                           "API server. If the Service is nil, the API is handled locally on this server.",
                           default=False),
            "version": string("Version is the API version this server hosts.  For example, \"v1\""),
            "versionPriority": int32("VersionPriority controls the ordering of this API version inside of its "
                                     "group. Must be greater than zero."),
        },
        required=["groupPriorityMinimum", "versionPriority"],
    ),
    APIREGISTRATION + "ServiceReference": obj(
        "ServiceReference holds a reference to Service.legacy.k8s.io",
        {
            "name": string("Name is the name of the service"),
            "namespace": string("Namespace is the namespace of the service"),
            "port": int32("If specified, the port on the service that hosting webhook. Default to 443 for backward "
                          "compatibility. `port` should be a valid port number (1-65535, inclusive)."),
        },
    ),
    APIREGISTRATION + "APIServiceStatus": obj(
        "APIServiceStatus contains derived information about an API server",
        {"conditions": array(APIREGISTRATION + "APIServiceCondition", "Current service state of apiService.",
                             strategy="merge", key="type", list_type="map", map_keys=["type"])},
    ),
    APIREGISTRATION + "APIServiceCondition": obj(
        "APIServiceCondition describes the state of an APIService at a particular point",
        {
            "lastTransitionTime": time("Last time the condition transitioned from one status to another."),
            "message": string("Human-readable message indicating details about last transition."),
            "reason": string("Unique, one-word, CamelCase reason for the condition's last transition."),
            "status": string("Status is the status of the condition. Can be True, False, Unknown."),
            "type": string("Type is the type of the condition."),
        },
        required=["type", "status"],
    ),
}
