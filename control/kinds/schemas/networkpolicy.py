"""OpenAPI schema of networking.k8s.io/v1 NetworkPolicy, as k8s.io/api publishes it.

Guarantees: every field `kubectl explain networkpolicy` and kubectl's client-side validation look
for is declared with upstream's types (a port is an IntOrString, endPort an int32, protocol one of
SCTP, TCP, UDP, policyTypes Ingress or Egress); the lists upstream marks atomic are atomic; the
pod selector is a meta/v1 LabelSelector and is required.
"""

from __future__ import annotations

from control.kinds.schemas.build import (
    META, Schema, array, int32, int_or_string, kind_obj, metadata, obj, ref, string, strings,
)

NETWORKING = "io.k8s.api.networking.v1."

DEFINITIONS: dict[str, Schema] = {
    NETWORKING + "NetworkPolicy": kind_obj(
        "NetworkPolicy describes what network traffic is allowed for a set of Pods",
        ("networking.k8s.io", "v1", "NetworkPolicy"),
        {
            "metadata": metadata(),
            "spec": ref(NETWORKING + "NetworkPolicySpec", "spec represents the specification of the desired "
                        "behavior for this NetworkPolicy."),
        },
    ),
    NETWORKING + "NetworkPolicySpec": obj(
        "NetworkPolicySpec provides the specification of a NetworkPolicy",
        {
            "podSelector": ref(META + "LabelSelector", "podSelector selects the pods to which this NetworkPolicy "
                               "object applies; an empty podSelector selects all pods in the namespace."),
            "ingress": array(NETWORKING + "NetworkPolicyIngressRule", "ingress is a list of ingress rules to be "
                             "applied to the selected pods; traffic is allowed if it matches at least one rule.",
                             list_type="atomic"),
            "egress": array(NETWORKING + "NetworkPolicyEgressRule", "egress is a list of egress rules to be "
                            "applied to the selected pods; traffic is allowed if it matches at least one rule.",
                            list_type="atomic"),
            "policyTypes": strings("policyTypes is a list of rule types that the NetworkPolicy relates to: "
                                   "\"Ingress\", \"Egress\", or both. Without it, Ingress is assumed, and Egress "
                                   "too when the policy has egress rules.", list_type="atomic"),
        },
    ),
    NETWORKING + "NetworkPolicyIngressRule": obj(
        "NetworkPolicyIngressRule describes a particular set of traffic that is allowed to the pods matched by "
        "a NetworkPolicySpec's podSelector. The traffic must match both ports and from.",
        {
            "from": array(NETWORKING + "NetworkPolicyPeer", "from is a list of sources which should be able to "
                          "access the pods selected for this rule; empty or missing matches all sources.",
                          list_type="atomic"),
            "ports": array(NETWORKING + "NetworkPolicyPort", "ports is a list of ports which should be made "
                           "accessible on the pods selected for this rule; empty or missing matches all ports.",
                           list_type="atomic"),
        },
    ),
    NETWORKING + "NetworkPolicyEgressRule": obj(
        "NetworkPolicyEgressRule describes a particular set of traffic that is allowed out of pods matched by "
        "a NetworkPolicySpec's podSelector. The traffic must match both ports and to.",
        {
            "ports": array(NETWORKING + "NetworkPolicyPort", "ports is a list of destination ports for outgoing "
                           "traffic; empty or missing matches all ports.", list_type="atomic"),
            "to": array(NETWORKING + "NetworkPolicyPeer", "to is a list of destinations for outgoing traffic of "
                        "pods selected for this rule; empty or missing matches all destinations.",
                        list_type="atomic"),
        },
    ),
    NETWORKING + "NetworkPolicyPeer": obj(
        "NetworkPolicyPeer describes a peer to allow traffic to/from. Only certain combinations of fields are "
        "allowed",
        {
            "ipBlock": ref(NETWORKING + "IPBlock", "ipBlock defines policy on a particular IPBlock. If this field "
                           "is set then neither of the other fields can be.", default=False),
            "namespaceSelector": ref(META + "LabelSelector", "namespaceSelector selects namespaces using "
                                     "cluster-scoped labels; with podSelector, the pods it selects in the "
                                     "namespaces selected.", default=False),
            "podSelector": ref(META + "LabelSelector", "podSelector is a label selector which selects pods; "
                               "without namespaceSelector, in the policy's own namespace.", default=False),
        },
    ),
    NETWORKING + "IPBlock": obj(
        "IPBlock describes a particular CIDR (Ex. \"192.168.1.0/24\",\"2001:db8::/64\") that is allowed to the "
        "pods matched by a NetworkPolicySpec's podSelector. The except entry describes CIDRs that should not be "
        "included within this rule.",
        {
            "cidr": string("cidr is a string representing the IPBlock Valid examples are \"192.168.1.0/24\" or "
                           "\"2001:db8::/64\""),
            "except": strings("except is a slice of CIDRs that should not be included within an IPBlock; they "
                              "are rejected if they are outside the cidr range", list_type="atomic"),
        },
        required=["cidr"],
    ),
    NETWORKING + "NetworkPolicyPort": obj(
        "NetworkPolicyPort describes a port to allow traffic on",
        {
            "endPort": int32("endPort indicates that the range of ports from port to endPort if set, inclusive, "
                             "should be allowed by the policy. This field cannot be defined if the port field is "
                             "not defined or if the port field is defined as a named (string) port. The endPort "
                             "must be equal or greater than port."),
            "port": int_or_string("port represents the port on the given protocol. This can either be a numerical "
                                  "or named port on a pod. If this field is not provided, this matches all port "
                                  "names and numbers. If present, only traffic on the specified protocol AND port "
                                  "will be matched."),
            "protocol": string("protocol represents the protocol (TCP, UDP, or SCTP) which traffic must match. If "
                               "not specified, this field defaults to TCP.", enum=["SCTP", "TCP", "UDP"]),
        },
    ),
}
