"""OpenAPI schemas of the small core/v1 kinds: Namespace, Service, Endpoints, Event, ConfigMap,
Binding, and the ObjectReference they share.

Guarantees: Service ports merge by port (list keys port+protocol) and Service conditions by type;
Endpoints subsets are replaced whole; ConfigMap binaryData holds base64 strings; Binding and the
kinds carry `x-kubernetes-group-version-kind`.
"""

from __future__ import annotations

from control.kinds.schemas.build import (
    META, Schema, array, boolean, int32, int64, int_or_string, kind_obj, metadata, micro_time, obj,
    ref, string, string_map, strings, time,
)

_PROTOCOLS = ["SCTP", "TCP", "UDP"]
_TRAFFIC = ["Cluster", "Local"]

DEFINITIONS: dict[str, Schema] = {
    "io.k8s.api.core.v1.ObjectReference": obj(
        "Points at any object, optionally at a field inside it.",
        {
            "apiVersion": string("API version of the referent."),
            "fieldPath": string("Part of the object referred to, e.g. spec.containers{web}."),
            "kind": string("Kind of the referent."),
            "name": string("Name of the referent."),
            "namespace": string("Namespace of the referent."),
            "resourceVersion": string("Version of the referent the reference was made against."),
            "uid": string("UID of the referent."),
        },
    ),
    "io.k8s.api.core.v1.Binding": kind_obj(
        "Assigns a pod to a node; posted to the pod's binding subresource by the scheduler.",
        ("", "v1", "Binding"),
        {"metadata": metadata(), "target": ref("ObjectReference", "The node to bind to.")},
        required=["target"],
    ),
    "io.k8s.api.core.v1.Namespace": kind_obj(
        "A scope for names; deleting it deletes everything inside.", ("", "v1", "Namespace"),
        {
            "metadata": metadata(),
            "spec": ref("NamespaceSpec", "Desired behaviour of the namespace."),
            "status": ref("NamespaceStatus", "Observed state of the namespace."),
        },
    ),
    "io.k8s.api.core.v1.NamespaceSpec": obj(
        "Desired behaviour of a namespace.",
        {"finalizers": strings("Clean-up steps that must finish before the namespace is removed.",
                               list_type="atomic")},
    ),
    "io.k8s.api.core.v1.NamespaceStatus": obj(
        "Observed state of a namespace.",
        {
            "conditions": array("NamespaceCondition", "Current conditions of the namespace.",
                                strategy="merge", key="type", list_type="map", map_keys=["type"]),
            "phase": string("Active or Terminating.", enum=["Active", "Terminating"]),
        },
    ),
    "io.k8s.api.core.v1.NamespaceCondition": obj(
        "One aspect of a namespace's state.",
        {
            "lastTransitionTime": time("When the status last changed."),
            "message": string("Human-readable detail."),
            "reason": string("Brief CamelCase reason."),
            "status": string("True, False or Unknown."),
            "type": string("Condition type, e.g. NamespaceDeletionContentFailure."),
        },
        required=["type", "status"],
    ),
    "io.k8s.api.core.v1.ConfigMap": kind_obj(
        "Non-secret configuration data as key/value pairs, for pods to read as environment or "
        "files.", ("", "v1", "ConfigMap"),
        {
            "binaryData": string_map("Binary values, base64 encoded; keys must not repeat those of "
                                     "`data`.", fmt="byte"),
            "data": string_map("UTF-8 values by key."),
            "immutable": boolean("When true the data can no longer be changed, only the object "
                                 "deleted."),
            "metadata": metadata(),
        },
    ),
    "io.k8s.api.core.v1.Event": kind_obj(
        "A report of something that happened to an object, kept for a while for people to read.",
        ("", "v1", "Event"),
        {
            "action": string("What was done (or failed) about the object."),
            "count": int32("How many times this event has occurred."),
            "eventTime": micro_time("When the event was first observed, with microseconds."),
            "firstTimestamp": time("When the event was first recorded."),
            "involvedObject": ref("ObjectReference", "The object the event is about."),
            "lastTimestamp": time("When the most recent occurrence was recorded."),
            "message": string("Human-readable description."),
            "metadata": metadata(),
            "reason": string("Short machine-readable reason, e.g. Scheduled, Pulled, Killing."),
            "related": ref("ObjectReference", "A second object involved, if any.", default=False),
            "reportingComponent": string("Controller that emitted the event, e.g. "
                                         "kubernetes.io/kubelet."),
            "reportingInstance": string("Instance of that controller, e.g. the node name."),
            "series": ref("EventSeries", "Data about a run of repeated events.", default=False),
            "source": ref("EventSource", "Component and host that reported the event."),
            "type": string("Normal or Warning."),
        },
        required=["metadata", "involvedObject"],
    ),
    "io.k8s.api.core.v1.EventSource": obj(
        "Who reported an event.",
        {"component": string("Reporting component."), "host": string("Node the report came from.")},
    ),
    "io.k8s.api.core.v1.EventSeries": obj(
        "A run of events that keep happening.",
        {"count": int32("Occurrences so far."),
         "lastObservedTime": micro_time("When the last occurrence was seen.")},
    ),
    "io.k8s.api.core.v1.Endpoints": kind_obj(
        "The addresses and ports that back a Service, kept up to date by the endpoints "
        "controller.", ("", "v1", "Endpoints"),
        {
            "metadata": metadata(),
            "subsets": array("EndpointSubset", "Groups of addresses sharing the same ports.",
                             list_type="atomic"),
        },
    ),
    "io.k8s.api.core.v1.EndpointSubset": obj(
        "Addresses that all expose the same ports.",
        {
            "addresses": array("EndpointAddress", "Ready addresses.", list_type="atomic"),
            "notReadyAddresses": array("EndpointAddress", "Addresses not ready yet (or failing "
                                       "readiness).", list_type="atomic"),
            "ports": array("EndpointPort", "Ports available on every address.", list_type="atomic"),
        },
    ),
    "io.k8s.api.core.v1.EndpointAddress": obj(
        "One backend address.",
        {
            "hostname": string("Hostname of the backend."),
            "ip": string("IP of the backend."),
            "nodeName": string("Node hosting the backend."),
            "targetRef": ref("ObjectReference", "The object (usually a Pod) behind the address.",
                             default=False),
        },
        required=["ip"],
    ),
    "io.k8s.api.core.v1.EndpointPort": obj(
        "One backend port.",
        {
            "appProtocol": string("Application protocol, e.g. http."),
            "name": string("Name matching the Service port name."),
            "port": int32("Port number."),
            "protocol": string("TCP, UDP or SCTP.", enum=_PROTOCOLS),
        },
        required=["port"],
    ),
    "io.k8s.api.core.v1.Service": kind_obj(
        "A stable name and virtual IP in front of a set of pods chosen by a selector.",
        ("", "v1", "Service"),
        {
            "metadata": metadata(),
            "spec": ref("ServiceSpec", "How the service is exposed."),
            "status": ref("ServiceStatus", "Observed state of the service, e.g. load balancer "
                          "addresses."),
        },
    ),
    "io.k8s.api.core.v1.ServiceSpec": obj(
        "How a service routes traffic.",
        {
            "allocateLoadBalancerNodePorts": boolean("Allocate node ports for a LoadBalancer "
                                                     "service; default true."),
            "clusterIP": string("Virtual IP of the service; \"None\" for a headless service; "
                                "allocated when empty."),
            "clusterIPs": strings("Virtual IPs, one per family, primary first.", list_type="atomic"),
            "externalIPs": strings("Extra IPs that route to the service.", list_type="atomic"),
            "externalName": string("DNS name returned for an ExternalName service."),
            "externalTrafficPolicy": string("Cluster or Local: whether external traffic may go to "
                                            "other nodes.", enum=_TRAFFIC),
            "healthCheckNodePort": int32("Node port for load balancer health checks."),
            "internalTrafficPolicy": string("Cluster or Local, for traffic from inside the "
                                            "cluster.", enum=_TRAFFIC),
            "ipFamilies": strings("IP families of the service, e.g. IPv4.", list_type="atomic"),
            "ipFamilyPolicy": string("SingleStack, PreferDualStack or RequireDualStack."),
            "loadBalancerClass": string("Load balancer implementation to use."),
            "loadBalancerIP": string("Deprecated: requested load balancer IP."),
            "loadBalancerSourceRanges": strings("Client CIDRs allowed through the load balancer.",
                                                list_type="atomic"),
            "ports": array("ServicePort", "Ports the service exposes.", strategy="merge", key="port",
                           list_type="map", map_keys=["port", "protocol"]),
            "publishNotReadyAddresses": boolean("Publish addresses of pods that are not ready."),
            "selector": string_map("Pods with these labels receive the traffic; without a "
                                   "selector, endpoints are managed by hand."),
            "sessionAffinity": string("ClientIP or None (default).", enum=["ClientIP", "None"]),
            "sessionAffinityConfig": ref("SessionAffinityConfig", "Settings of session affinity.",
                                         default=False),
            "trafficDistribution": string("Preference for how traffic is spread, e.g. PreferClose."),
            "type": string("ClusterIP (default), NodePort, LoadBalancer or ExternalName.",
                           enum=["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]),
        },
    ),
    "io.k8s.api.core.v1.ServicePort": obj(
        "One port of a service.",
        {
            "appProtocol": string("Application protocol, e.g. http."),
            "name": string("Name of the port; required when there are several."),
            "nodePort": int32("Port on every node for NodePort and LoadBalancer services."),
            "port": int32("Port the service listens on."),
            "protocol": string("TCP (default), UDP or SCTP.", enum=_PROTOCOLS),
            "targetPort": int_or_string("Port number or named container port on the pods; the same "
                                        "as `port` by default."),
        },
        required=["port"],
    ),
    "io.k8s.api.core.v1.SessionAffinityConfig": obj(
        "Session affinity settings.",
        {"clientIP": ref("ClientIPConfig", "Settings for ClientIP affinity.", default=False)},
    ),
    "io.k8s.api.core.v1.ClientIPConfig": obj(
        "ClientIP affinity settings.",
        {"timeoutSeconds": int32("How long a client sticks to a backend; default 10800.")},
    ),
    "io.k8s.api.core.v1.ServiceStatus": obj(
        "Observed state of a service.",
        {
            "conditions": array(META + "Condition", "Current conditions of the service.",
                                strategy="merge", key="type", list_type="map", map_keys=["type"]),
            "loadBalancer": ref("LoadBalancerStatus", "The load balancer, if there is one."),
        },
    ),
    "io.k8s.api.core.v1.LoadBalancerStatus": obj(
        "State of a load balancer.",
        {"ingress": array("LoadBalancerIngress", "Addresses of the load balancer.", list_type="atomic")},
    ),
    "io.k8s.api.core.v1.LoadBalancerIngress": obj(
        "An entry point of a load balancer.",
        {
            "hostname": string("DNS name, for DNS-based load balancers."),
            "ip": string("IP, for IP-based load balancers."),
            "ipMode": string("VIP or Proxy: how traffic reaches the pods."),
            "ports": array("PortStatus", "Status of each port.", list_type="atomic"),
        },
    ),
    "io.k8s.api.core.v1.PortStatus": obj(
        "Status of one load balancer port.",
        {"error": string("Problem with the port, if any."), "port": int32("Port number."),
         "protocol": string("TCP, UDP or SCTP.", enum=_PROTOCOLS)},
        required=["port", "protocol"],
    ),
    META + "Condition": obj(
        "A generic condition of an object.",
        {
            "lastTransitionTime": time("When the status last changed."),
            "message": string("Human-readable detail."),
            "observedGeneration": int64("metadata.generation the condition reflects."),
            "reason": string("Brief CamelCase reason."),
            "status": string("True, False or Unknown."),
            "type": string("Condition type in CamelCase."),
        },
        required=["type", "status", "lastTransitionTime", "reason", "message"],
    ),
}
