"""OpenAPI schema of discovery.k8s.io/v1 EndpointSlice, as k8s.io/api publishes it.

Guarantees: `addressType` and `endpoints` are required; an endpoint's `addresses` is a required
set of strings, its `conditions` three optional booleans, `targetRef` a core ObjectReference and
`hints` zones and nodes; a port's `port` is an int32, every port field optional (a nil port means
"all ports"); `endpoints` and `ports` are atomic lists, as upstream's.
"""

from __future__ import annotations

from control.kinds.schemas.build import (
    CORE, Schema, array, boolean, int32, kind_obj, metadata, obj, ref, string, string_map, strings,
)

DISCOVERY = "io.k8s.api.discovery.v1."

DEFINITIONS: dict[str, Schema] = {
    DISCOVERY + "EndpointSlice": kind_obj(
        "EndpointSlice represents a subset of the endpoints that implement a service. For a given service "
        "there may be multiple EndpointSlice objects, selected by labels, which must be joined to produce the "
        "full set of endpoints.",
        ("discovery.k8s.io", "v1", "EndpointSlice"),
        {
            "addressType": string("addressType specifies the type of address carried by this EndpointSlice. All "
                                  "addresses in this slice must be the same type. This field is immutable after "
                                  "creation.", enum=["FQDN", "IPv4", "IPv6"]),
            "endpoints": array(DISCOVERY + "Endpoint", "endpoints is a list of unique endpoints in this slice. "
                               "Each slice may include a maximum of 1000 endpoints.", list_type="atomic"),
            "metadata": metadata(),
            "ports": array(DISCOVERY + "EndpointPort", "ports specifies the list of network ports exposed by each "
                           "endpoint in this slice. Each port must have a unique name. Each slice may include a "
                           "maximum of 100 ports.", list_type="atomic"),
        },
        required=["addressType", "endpoints"],
    ),
    DISCOVERY + "Endpoint": obj(
        "Endpoint represents a single logical \"backend\" implementing a service.",
        {
            "addresses": strings("addresses of this endpoint. For EndpointSlices of addressType \"IPv4\" or "
                                 "\"IPv6\", the values are IP addresses in canonical form.", list_type="set"),
            "conditions": ref(DISCOVERY + "EndpointConditions", "conditions contains information about the "
                              "current status of the endpoint."),
            "deprecatedTopology": string_map("deprecatedTopology contains topology information part of the v1beta1 "
                                             "API. This field is deprecated."),
            "hints": ref(DISCOVERY + "EndpointHints", "hints contains information associated with how an endpoint "
                         "should be consumed.", default=False),
            "hostname": string("hostname of this endpoint. This field may be used by consumers of endpoints to "
                               "distinguish endpoints from each other (e.g. in DNS names)."),
            "nodeName": string("nodeName represents the name of the Node hosting this endpoint."),
            "targetRef": ref(CORE + "ObjectReference", "targetRef is a reference to a Kubernetes object that "
                             "represents this endpoint.", default=False),
            "zone": string("zone is the name of the Zone this endpoint exists in."),
        },
        required=["addresses"],
    ),
    DISCOVERY + "EndpointConditions": obj(
        "EndpointConditions represents the current condition of an endpoint.",
        {
            "ready": boolean("ready indicates that this endpoint is ready to receive traffic, according to whatever "
                             "system is managing the endpoint. For compatibility reasons, ready should never be "
                             "\"true\" for terminating endpoints."),
            "serving": boolean("serving indicates that this endpoint is able to receive traffic, according to "
                               "whatever system is managing the endpoint. For endpoints backed by pods, the "
                               "EndpointSlice controller will mark the endpoint as serving if the pod's Ready "
                               "condition is True."),
            "terminating": boolean("terminating indicates that this endpoint is terminating."),
        },
    ),
    DISCOVERY + "EndpointHints": obj(
        "EndpointHints provides hints describing how an endpoint should be consumed.",
        {
            "forNodes": array(DISCOVERY + "ForNode", "forNodes indicates the node(s) this endpoint should be "
                              "consumed by when using topology aware routing.", list_type="atomic"),
            "forZones": array(DISCOVERY + "ForZone", "forZones indicates the zone(s) this endpoint should be "
                              "consumed by when using topology aware routing.", list_type="atomic"),
        },
    ),
    DISCOVERY + "ForNode": obj("ForNode provides information about which nodes should consume this endpoint.",
                               {"name": string("name represents the name of the node.")}, required=["name"]),
    DISCOVERY + "ForZone": obj("ForZone provides information about which zones should consume this endpoint.",
                               {"name": string("name represents the name of the zone.")}, required=["name"]),
    DISCOVERY + "EndpointPort": obj(
        "EndpointPort represents a Port used by an EndpointSlice",
        {
            "appProtocol": string("The application protocol for this port."),
            "name": string("name represents the name of this port. All ports in an EndpointSlice must have a "
                           "unique name."),
            "port": int32("port represents the port number of the endpoint. If the EndpointSlice is derived from a "
                          "Kubernetes service, this must be set to the service's target port."),
            "protocol": string("protocol represents the IP protocol for this port. Must be UDP, TCP, or SCTP. "
                               "Default is TCP.", enum=["SCTP", "TCP", "UDP"]),
        },
    ),
}
