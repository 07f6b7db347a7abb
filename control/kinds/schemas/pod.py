"""OpenAPI schemas of the Pod kind's spec side: Pod, PodSpec, PodTemplateSpec and the scheduling,
security and DNS settings a pod carries.

Guarantees: containers, initContainers and ephemeralContainers merge by name, volumes by name (with
retainKeys), imagePullSecrets by name; tolerations have no merge strategy (a patch replaces them);
affinity is modelled down to its leaves so kubectl's three-way merge can walk it.
"""

from __future__ import annotations

from control.kinds.schemas.build import (
    META, Schema, array, boolean, int32, int64, integers, kind_obj, metadata, obj, quantity_map, ref, string,
    string_map, strings,
)

_SPEC_TEXT = "Desired behaviour of the pod."
_STATUS_TEXT = "Most recently observed state of the pod; written by the system, read-only to users."
_TERMS = "NodeSelectorTerm"


def _affinity(what: str, avoid: bool) -> Schema:
    verb = "away from" if avoid else "together with"
    return obj(
        f"Rules that place the pod {verb} other pods, by their labels and a topology key.",
        {
            "preferredDuringSchedulingIgnoredDuringExecution": array(
                "WeightedPodAffinityTerm", f"Soft {what} terms; the scheduler favours nodes with the "
                "highest summed weight.", list_type="atomic"),
            "requiredDuringSchedulingIgnoredDuringExecution": array(
                "PodAffinityTerm", f"Hard {what} terms; all must hold at scheduling time.",
                list_type="atomic"),
        },
    )


DEFINITIONS: dict[str, Schema] = {
    "io.k8s.api.core.v1.Pod": kind_obj(
        "A group of containers that share network and storage and are scheduled together onto one "
        "node.", ("", "v1", "Pod"),
        {"metadata": metadata(), "spec": ref("PodSpec", _SPEC_TEXT), "status": ref("PodStatus", _STATUS_TEXT)},
    ),
    "io.k8s.api.core.v1.PodTemplateSpec": obj(
        "The pod a controller creates: its metadata and spec.",
        {"metadata": metadata("Metadata given to every pod made from this template."),
         "spec": ref("PodSpec", "Spec of every pod made from this template.")},
    ),
    "io.k8s.api.core.v1.PodSpec": obj(
        "What a pod should run and how.",
        {
            "activeDeadlineSeconds": int64("Seconds the pod may be active on a node before the "
                                           "system kills it."),
            "affinity": ref("Affinity", "Node and pod affinity rules for scheduling.", default=False),
            "automountServiceAccountToken": boolean("Whether a service account token is mounted "
                                                    "automatically."),
            "containers": array("Container", "The application containers; at least one. Cannot be "
                                "added or removed later.", strategy="merge", key="name"),
            "dnsConfig": ref("PodDNSConfig", "Extra DNS settings merged into the generated "
                             "resolv.conf.", default=False),
            "dnsPolicy": string("How the pod's DNS is set up: ClusterFirst (default), "
                                "ClusterFirstWithHostNet, Default or None.",
                                enum=["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"]),
            "enableServiceLinks": boolean("Inject environment variables describing Services; default "
                                          "true."),
            "ephemeralContainers": array("EphemeralContainer", "Debugging containers added to a "
                                         "running pod through its ephemeralcontainers subresource.",
                                         strategy="merge", key="name"),
            "evictionResponders": array("EvictionResponder", "Components to consult before the pod "
                                        "is evicted.", list_type="atomic"),
            "hostAliases": array("HostAlias", "Extra entries for the pod's /etc/hosts.",
                                 strategy="merge", key="ip"),
            "hostIPC": boolean("Use the host's IPC namespace; default false."),
            "hostNetwork": boolean("Use the host's network namespace; default false."),
            "hostPID": boolean("Use the host's process namespace; default false."),
            "hostUsers": boolean("Use the host's user namespace; default true."),
            "hostname": string("Hostname of the pod; the pod's name by default."),
            "hostnameOverride": string("Hostname to set inside the pod instead of the derived one."),
            "imagePullSecrets": array("LocalObjectReference", "Secrets in the namespace used to pull "
                                      "the images.", strategy="merge", key="name"),
            "initContainers": array("Container", "Containers run one after another, each to "
                                    "completion, before the app containers start.",
                                    strategy="merge", key="name"),
            "nodeName": string("Node the pod is bound to; set by the scheduler (through the binding "
                               "subresource) or directly to skip scheduling."),
            "nodeSelector": string_map("Labels a node must have for the pod to be placed on it."),
            "os": ref("PodOS", "Operating system the containers need.", default=False),
            "overhead": quantity_map("Resources the pod's sandbox uses on top of its containers; "
                                     "set from the RuntimeClass."),
            "preemptionPolicy": string("Whether this pod may preempt lower-priority pods: "
                                       "PreemptLowerPriority (default) or Never.",
                                       enum=["Never", "PreemptLowerPriority"]),
            "priority": int32("Priority value, filled in from priorityClassName."),
            "priorityClassName": string("Name of the PriorityClass giving the pod's priority."),
            "readinessGates": array("PodReadinessGate", "Extra conditions that must be True for the "
                                    "pod to be ready.", list_type="atomic"),
            "resourceClaims": array("PodResourceClaim", "Dynamic resource claims the pod needs.",
                                    strategy="merge,retainKeys", key="name", list_type="map",
                                    map_keys=["name"]),
            "resources": ref("ResourceRequirements", "Pod-level resource requests and limits.",
                             default=False),
            "restartPolicy": string("Restart policy for the containers: Always (default), "
                                    "OnFailure or Never.", enum=["Always", "Never", "OnFailure"]),
            "runtimeClassName": string("RuntimeClass used to run the pod."),
            "schedulerName": string("Scheduler that places the pod; default-scheduler by default."),
            "schedulingGates": array("PodSchedulingGate", "While any gate remains, the pod is not "
                                     "scheduled.", strategy="merge", key="name", list_type="map",
                                     map_keys=["name"]),
            "schedulingGroup": ref("PodSchedulingGroup", "Group the pod is scheduled with.",
                                   default=False),
            "securityContext": ref("PodSecurityContext", "Security options for all containers of "
                                   "the pod.", default=False),
            "serviceAccount": string("Deprecated alias of serviceAccountName."),
            "serviceAccountName": string("ServiceAccount the pod runs as."),
            "setHostnameAsFQDN": boolean("Set the hostname to the fully qualified domain name."),
            "shareProcessNamespace": boolean("Share one process namespace between all containers."),
            "subdomain": string("Subdomain; with hostname gives the FQDN "
                                "<hostname>.<subdomain>.<namespace>.svc.<cluster-domain>."),
            "terminationGracePeriodSeconds": int64("Seconds between the stop signal and a forced "
                                                   "kill; default 30."),
            "tolerations": array("Toleration", "Taints the pod tolerates.", list_type="atomic"),
            "topologySpreadConstraints": array(
                "TopologySpreadConstraint", "How the pod's replicas spread over topology domains.",
                strategy="merge", key="topologyKey", list_type="map",
                map_keys=["topologyKey", "whenUnsatisfiable"]),
            "volumes": array("Volume", "Volumes the containers can mount.", strategy="merge,retainKeys",
                             key="name"),
        },
        required=["containers"],
    ),
    "io.k8s.api.core.v1.LocalObjectReference": obj(
        "Names an object in the same namespace.", {"name": string("Name of the referent.")},
    ),
    "io.k8s.api.core.v1.PodOS": obj(
        "Operating system of a pod.", {"name": string("linux or windows.")}, required=["name"],
    ),
    "io.k8s.api.core.v1.PodReadinessGate": obj(
        "An extra readiness condition.",
        {"conditionType": string("Type of a pod condition that must be True.")},
        required=["conditionType"],
    ),
    "io.k8s.api.core.v1.PodSchedulingGate": obj(
        "A gate that holds the pod back from scheduling.", {"name": string("Name of the gate.")},
        required=["name"],
    ),
    "io.k8s.api.core.v1.PodSchedulingGroup": obj(
        "Group a pod is scheduled together with.", {"podGroupName": string("Name of the group.")},
    ),
    "io.k8s.api.core.v1.EvictionResponder": obj(
        "A component asked before the pod is evicted.",
        {"name": string("Name of the responder."), "priority": int32("Order in which responders are "
                                                                       "asked.")},
    ),
    "io.k8s.api.core.v1.PodResourceClaim": obj(
        "A resource claim used by the pod.",
        {"name": string("Name of the claim within the pod."),
         "resourceClaimName": string("Existing ResourceClaim to use."),
         "resourceClaimTemplateName": string("ResourceClaimTemplate to create a claim from.")},
        required=["name"],
    ),
    "io.k8s.api.core.v1.HostAlias": obj(
        "An /etc/hosts entry.",
        {"hostnames": strings("Host names for the IP.", list_type="atomic"),
         "ip": string("IP address of the entry.")},
        required=["ip"],
    ),
    "io.k8s.api.core.v1.PodDNSConfig": obj(
        "DNS settings added to those produced by dnsPolicy.",
        {
            "nameservers": strings("Name server IPs.", list_type="atomic"),
            "options": array("PodDNSConfigOption", "resolv.conf options.", list_type="atomic"),
            "searches": strings("Search domains.", list_type="atomic"),
        },
    ),
    "io.k8s.api.core.v1.PodDNSConfigOption": obj(
        "One resolver option.", {"name": string("Option name, e.g. ndots."), "value": string("Option value.")},
    ),
    "io.k8s.api.core.v1.PodSecurityContext": obj(
        "Security options applying to all containers of a pod.",
        {
            "appArmorProfile": ref("AppArmorProfile", "AppArmor profile for all containers.",
                                   default=False),
            "fsGroup": int64("Supplementary group that owns mounted volumes."),
            "fsGroupChangePolicy": string("When volume ownership is changed: OnRootMismatch or "
                                          "Always."),
            "runAsGroup": int64("GID for the container processes."),
            "runAsNonRoot": boolean("Refuse to start containers running as UID 0."),
            "runAsUser": int64("UID for the container processes."),
            "seLinuxChangePolicy": string("How SELinux labels are applied to volumes."),
            "seLinuxOptions": ref("SELinuxOptions", "SELinux context for all containers.",
                                  default=False),
            "seccompProfile": ref("SeccompProfile", "Seccomp profile for all containers.",
                                  default=False),
            "supplementalGroups": integers("Extra group IDs given to the first process of every "
                                           "container."),
            "supplementalGroupsPolicy": string("How supplementary groups are computed: Merge or "
                                               "Strict."),
            "sysctls": array("Sysctl", "Namespaced kernel parameters to set.", list_type="atomic"),
            "windowsOptions": ref("WindowsSecurityContextOptions", "Windows-specific settings.",
                                  default=False),
        },
    ),
    "io.k8s.api.core.v1.Sysctl": obj(
        "One kernel parameter.", {"name": string("Parameter name."), "value": string("Value to set.")},
        required=["name", "value"],
    ),
    "io.k8s.api.core.v1.Toleration": obj(
        "Lets the pod be scheduled on (or stay on) nodes with a matching taint.",
        {
            "effect": string("Taint effect to match; empty matches all effects.",
                             enum=["NoExecute", "NoSchedule", "PreferNoSchedule"]),
            "key": string("Taint key to match; empty with operator Exists matches every taint."),
            "operator": string("Equal (default) or Exists.", enum=["Equal", "Exists"]),
            "tolerationSeconds": int64("For NoExecute: how long the pod stays after the taint "
                                       "appears; unset means forever."),
            "value": string("Taint value to match, for operator Equal."),
        },
    ),
    "io.k8s.api.core.v1.TopologySpreadConstraint": obj(
        "Limits how unevenly matching pods may be spread across a topology.",
        {
            "labelSelector": ref(META + "LabelSelector", "Pods counted in each domain.",
                                 default=False),
            "matchLabelKeys": strings("Label keys whose values are taken from this pod to narrow "
                                      "the selection.", list_type="atomic"),
            "maxSkew": int32("Largest allowed difference in matching pods between domains."),
            "minDomains": int32("Minimum number of eligible domains."),
            "nodeAffinityPolicy": string("Whether node affinity limits the domains: Honor or "
                                         "Ignore."),
            "nodeTaintsPolicy": string("Whether node taints limit the domains: Honor or Ignore."),
            "topologyKey": string("Node label whose values define the domains."),
            "whenUnsatisfiable": string("DoNotSchedule or ScheduleAnyway.",
                                        enum=["DoNotSchedule", "ScheduleAnyway"]),
        },
        required=["maxSkew", "topologyKey", "whenUnsatisfiable"],
    ),
    "io.k8s.api.core.v1.Affinity": obj(
        "Scheduling constraints relative to nodes and to other pods.",
        {
            "nodeAffinity": ref("NodeAffinity", "Which nodes the pod may or prefers to run on.",
                                default=False),
            "podAffinity": ref("PodAffinity", "Pods this pod should run near.", default=False),
            "podAntiAffinity": ref("PodAntiAffinity", "Pods this pod should run away from.",
                                   default=False),
        },
    ),
    "io.k8s.api.core.v1.NodeAffinity": obj(
        "Node affinity rules.",
        {
            "preferredDuringSchedulingIgnoredDuringExecution": array(
                "PreferredSchedulingTerm", "Soft terms; nodes matching more weight are favoured.",
                list_type="atomic"),
            "requiredDuringSchedulingIgnoredDuringExecution": ref(
                "NodeSelector", "Hard requirement at scheduling time.", default=False),
        },
    ),
    "io.k8s.api.core.v1.NodeSelector": obj(
        "A node query: the terms are ORed.",
        {"nodeSelectorTerms": array(_TERMS, "Terms of which at least one must match.",
                                    list_type="atomic")},
        required=["nodeSelectorTerms"],
    ),
    "io.k8s.api.core.v1.NodeSelectorTerm": obj(
        "Requirements that must all hold for a node; an empty term matches nothing.",
        {
            "matchExpressions": array("NodeSelectorRequirement", "Requirements on node labels.",
                                      list_type="atomic"),
            "matchFields": array("NodeSelectorRequirement", "Requirements on node fields.",
                                 list_type="atomic"),
        },
    ),
    "io.k8s.api.core.v1.NodeSelectorRequirement": obj(
        "A requirement on one node label or field.",
        {
            "key": string("Label key (or field name)."),
            "operator": string("In, NotIn, Exists, DoesNotExist, Gt or Lt.",
                               enum=["DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn"]),
            "values": strings("Values compared against; one integer for Gt and Lt.",
                              list_type="atomic"),
        },
        required=["key", "operator"],
    ),
    "io.k8s.api.core.v1.PreferredSchedulingTerm": obj(
        "A weighted node selector term.",
        {"preference": ref(_TERMS, "The term to match."),
         "weight": int32("Weight 1-100 added for nodes matching the term.")},
        required=["weight", "preference"],
    ),
    "io.k8s.api.core.v1.PodAffinity": _affinity("affinity", avoid=False),
    "io.k8s.api.core.v1.PodAntiAffinity": _affinity("anti-affinity", avoid=True),
    "io.k8s.api.core.v1.PodAffinityTerm": obj(
        "Pods matching the selector in these namespaces must (or must not) share the topology "
        "domain named by topologyKey.",
        {
            "labelSelector": ref(META + "LabelSelector", "Which pods the term is about.",
                                 default=False),
            "matchLabelKeys": strings("Label keys whose values from this pod are added to the "
                                      "selector.", list_type="atomic"),
            "mismatchLabelKeys": strings("Label keys whose values from this pod are excluded from "
                                         "the selector.", list_type="atomic"),
            "namespaceSelector": ref(META + "LabelSelector", "Namespaces searched, by label.",
                                     default=False),
            "namespaces": strings("Namespaces searched, by name; this pod's namespace if empty.",
                                  list_type="atomic"),
            "topologyKey": string("Node label defining the domain, e.g. kubernetes.io/hostname."),
        },
        required=["topologyKey"],
    ),
    "io.k8s.api.core.v1.WeightedPodAffinityTerm": obj(
        "A pod affinity term with a weight.",
        {"podAffinityTerm": ref("PodAffinityTerm", "The term."),
         "weight": int32("Weight 1-100 added for nodes satisfying the term.")},
        required=["weight", "podAffinityTerm"],
    ),
}

