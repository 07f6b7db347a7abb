"""The bootstrap RBAC policy: upstream's default ClusterRoles and bindings
(`plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go`), the ones this cluster's spokes use,
and the few `kubekitchen:` roles for what our spokes do beyond their real counterparts.

Guarantees: `cluster_roles()`, `cluster_role_bindings()` and the namespaced `namespace_roles()` /
`namespace_role_bindings()` (upstream's `namespace_policy.go`) are plain objects, each labelled
`kubernetes.io/bootstrapping=rbac-defaults` and annotated `rbac.authorization.kubernetes.io/autoupdate`
as upstream; `admin`, `edit` and `view` carry the aggregation labels and `aggregationRule`s, their
rules already aggregated (`aggregate`) so a hub without its controller-manager still authorizes;
the user-facing roles hold no `escalate`, `bind` or `impersonate` except where upstream grants it.
"""

from __future__ import annotations

from typing import Any

from control.kinds import spokes
from control.kinds.rbac import AGGREGATE, aggregate, aggregated_rules, selects  # noqa: F401 (re-exported)

Obj = dict[str, Any]
READ = ["get", "list", "watch"]
WRITE = ["create", "delete", "deletecollection", "patch", "update"]
EVENTS = ["create", "patch", "update"]
BOOTSTRAP_LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
AUTOUPDATE = {"rbac.authorization.kubernetes.io/autoupdate": "true"}
RBAC_VERSION = "rbac.authorization.k8s.io/v1"


def rule(verbs: list[str], groups: list[str] | None = None, resources: list[str] | None = None,
         urls: list[str] | None = None, names: list[str] | None = None) -> Obj:
    out: Obj = {"verbs": list(verbs)}
    if groups is not None:
        out["apiGroups"] = list(groups)
    if resources is not None:
        out["resources"] = list(resources)
    if names:
        out["resourceNames"] = list(names)
    if urls is not None:
        out["nonResourceURLs"] = list(urls)
    return out


def _role(name: str, rules: list[Obj], labels: dict[str, str] | None = None,
          aggregate_from: str | None = None) -> Obj:
    role: Obj = {"apiVersion": RBAC_VERSION, "kind": "ClusterRole",
                 "metadata": {"name": name, "labels": {**BOOTSTRAP_LABELS, **(labels or {})},
                              "annotations": dict(AUTOUPDATE)},
                 "rules": rules}
    if aggregate_from:
        role["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {AGGREGATE + aggregate_from: "true"}}]}
    return role


def _view_rules() -> list[Obj]:
    return [
        rule(READ, [""], ["pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
                          "services", "services/status", "endpoints", "persistentvolumeclaims",
                          "persistentvolumeclaims/status", "configmaps"]),
        rule(READ, [""], ["limitranges", "resourcequotas", "bindings", "events", "replicationcontrollers/status",
                          "pods/log", "pods/status", "resourcequotas/status", "namespaces/status", "namespaces"]),
        rule(READ, ["discovery.k8s.io"], ["endpointslices"]),
        rule(READ, ["apps"], ["controllerrevisions", "statefulsets", "statefulsets/scale", "statefulsets/status",
                              "daemonsets", "daemonsets/status", "deployments", "deployments/scale",
                              "deployments/status", "replicasets", "replicasets/scale", "replicasets/status"]),
        rule(READ, ["autoscaling"], ["horizontalpodautoscalers", "horizontalpodautoscalers/status"]),
        rule(READ, ["batch"], ["cronjobs", "cronjobs/status", "jobs", "jobs/status"]),
        rule(READ, ["policy"], ["poddisruptionbudgets", "poddisruptionbudgets/status"]),
        rule(READ, ["networking.k8s.io"], ["ingresses", "ingresses/status", "networkpolicies"]),
    ]


def _edit_rules() -> list[Obj]:
    return [
        rule(["impersonate"], [""], ["serviceaccounts"]),
        rule(WRITE, [""], ["pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward"]),
        rule(["create"], [""], ["pods/eviction"]),
        rule(WRITE, [""], ["configmaps", "events", "persistentvolumeclaims", "replicationcontrollers",
                           "replicationcontrollers/scale", "secrets", "serviceaccounts", "services",
                           "services/proxy"]),
        rule(["create"], [""], ["serviceaccounts/token"]),
        rule(WRITE, ["apps"], ["daemonsets", "deployments", "deployments/rollback", "deployments/scale",
                               "replicasets", "replicasets/scale", "statefulsets", "statefulsets/scale"]),
        rule(WRITE, ["autoscaling"], ["horizontalpodautoscalers"]),
        rule(WRITE, ["batch"], ["cronjobs", "jobs"]),
        rule(WRITE, ["policy"], ["poddisruptionbudgets"]),
        rule(WRITE, ["networking.k8s.io"], ["ingresses", "networkpolicies"]),
        rule(READ, [""], ["pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets", "services/proxy"]),
    ]


def _admin_rules() -> list[Obj]:
    return [rule(["create"], ["authorization.k8s.io"], ["localsubjectaccessreviews"]),
            rule([*WRITE, *READ], ["rbac.authorization.k8s.io"], ["rolebindings", "roles"])]


def _controller_manager_rules() -> list[Obj]:
    # Ours runs every controller under one identity (upstream's without
    # --use-service-account-credentials): the union of the controllers' roles, which upstream
    # spells out per controller (the namespace controller and the garbage collector alone need
    # get/list/delete/patch on */*), and the aggregation controller's `escalate` on clusterroles.
    return [rule([*READ, *WRITE], ["*"], ["*"]),
            rule(["escalate", "bind"], ["rbac.authorization.k8s.io"], ["clusterroles"]),
            # the csrsigning controller (upstream's system:controller:certificate-controller)
            rule(["sign"], ["certificates.k8s.io"], ["signers"], names=list(SIGNERS)),
            rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
            rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews"])]


def _scheduler_rules() -> list[Obj]:
    return [
        rule(EVENTS, ["", "events.k8s.io"], ["events"]),
        rule(["create"], ["coordination.k8s.io"], ["leases"]),
        rule(["get", "update"], ["coordination.k8s.io"], ["leases"], names=["kube-scheduler"]),
        rule(["delete", *READ], [""], ["pods"]),
        rule(["create"], [""], ["bindings", "pods/binding"]),
        rule(["patch", "update"], [""], ["pods/status"]),
        rule(READ, [""], ["nodes", "namespaces", "persistentvolumeclaims", "persistentvolumes", "services",
                          "replicationcontrollers", "configmaps"]),
        rule(READ, ["apps"], ["replicasets", "statefulsets"]),
        rule(READ, ["policy"], ["poddisruptionbudgets"]),
        rule(READ, ["storage.k8s.io"], ["storageclasses", "csinodes", "csidrivers", "csistoragecapacities"]),
        rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
        rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews"]),
    ]


def _node_rules() -> list[Obj]:
    return [
        rule(["create", *READ], [""], ["nodes"]),
        rule(["patch", "update"], [""], ["nodes/status"]),
        rule(["delete", "patch", "update"], [""], ["nodes"]),
        rule(EVENTS, ["", "events.k8s.io"], ["events"]),
        rule(READ, [""], ["pods"]),
        rule(["create", "delete"], [""], ["pods"]),
        rule(["patch", "update"], [""], ["pods/status"]),
        rule(["create"], [""], ["pods/eviction"]),
        rule(READ, [""], ["services"]),
        rule(["get", "list", "watch"], [""], ["endpoints"]),
        rule(["get", "list", "watch"], [""], ["secrets", "configmaps"]),
        rule(["get"], [""], ["persistentvolumeclaims", "persistentvolumes"]),
        rule(["update", "patch"], [""], ["persistentvolumeclaims/status"]),
        rule(["create"], [""], ["serviceaccounts/token"]),
        rule(["get", "create", "update", "patch", "delete"], ["coordination.k8s.io"], ["leases"]),
        rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
        rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews", "localsubjectaccessreviews"]),
        rule(READ, ["storage.k8s.io"], ["csidrivers", "csinodes", "storageclasses"]),
    ]


def _node_proxier_rules() -> list[Obj]:
    return [rule(["list", "watch"], [""], ["services", "endpoints"]),
            rule(["get", "list", "watch"], [""], ["nodes"]),
            rule(EVENTS, ["", "events.k8s.io"], ["events"]),
            rule(["list", "watch"], ["discovery.k8s.io"], ["endpointslices"])]


def _ingress_controller_rules() -> list[Obj]:
    """ingress-nginx's ClusterRole, narrowed to what the front door reads: its classes, the
    Ingresses (and their status), the Services and EndpointSlices behind them, the TLS Secrets they
    name, the Nodes (where kubelets and node-1 are), and events."""
    return [rule(READ, ["networking.k8s.io"], ["ingressclasses", "ingresses"]),
            rule(["update"], ["networking.k8s.io"], ["ingresses/status"]),
            rule(READ, [""], ["services", "secrets", "nodes"]),
            rule(READ, ["discovery.k8s.io"], ["endpointslices"]),
            rule(EVENTS, ["", "events.k8s.io"], ["events"])]


CERTIFICATES = "certificates.k8s.io"
# upstream's signers: (name, who approves them) -> the approver ClusterRole's suffix
SIGNERS = {"kubernetes.io/kube-apiserver-client": "kube-apiserver-client-approver",
           "kubernetes.io/kube-apiserver-client-kubelet": "kube-apiserver-client-kubelet-approver",
           "kubernetes.io/kubelet-serving": "kubelet-serving-approver",
           "kubernetes.io/legacy-unknown": "legacy-unknown-approver"}


def _certificate_roles() -> list[Obj]:
    """upstream's CSR ClusterRoles: one approver role per signer, the node client CSR roles and the
    node bootstrapper (which creates and reads CSRs)."""
    roles = [_role(f"system:certificates.k8s.io:{suffix}", [rule(["approve"], [CERTIFICATES], ["signers"],
                                                                 names=[signer])])
             for signer, suffix in SIGNERS.items()]
    roles += [
        _role("system:certificates.k8s.io:certificatesigningrequests:nodeclient",
              [rule(["create"], [CERTIFICATES], ["certificatesigningrequests/nodeclient"])]),
        _role("system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
              [rule(["create"], [CERTIFICATES], ["certificatesigningrequests/selfnodeclient"])]),
        _role("system:node-bootstrapper", [rule(["create", "get", "list", "watch"], [CERTIFICATES],
                                                ["certificatesigningrequests"])]),
    ]
    return roles


DISCOVERY_URLS = ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz",
                  "/version", "/version/"]
FEED_URLS = ["/kubekitchen/snapshot", "/kubekitchen/changes"]
PUBLIC_URLS = ["/healthz", "/livez", "/readyz", "/version", "/version/"]


def cluster_roles() -> list[Obj]:
    roles = [
        _role("cluster-admin", [rule(["*"], ["*"], ["*"]), rule(["*"], urls=["*"])]),
        _role("admin", [], aggregate_from="admin"),
        _role("edit", [], {AGGREGATE + "admin": "true"}, aggregate_from="edit"),
        _role("view", [], {AGGREGATE + "edit": "true"}, aggregate_from="view"),
        _role("system:aggregate-to-admin", _admin_rules(), {AGGREGATE + "admin": "true"}),
        _role("system:aggregate-to-edit", _edit_rules(), {AGGREGATE + "edit": "true"}),
        _role("system:aggregate-to-view", _view_rules(), {AGGREGATE + "view": "true"}),
        _role("system:discovery", [rule(["get"], urls=DISCOVERY_URLS)]),
        _role("system:basic-user", [
            rule(["create"], ["authorization.k8s.io"], ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]),
            rule(["create"], ["authentication.k8s.io"], ["selfsubjectreviews"])]),
        _role("system:public-info-viewer", [rule(["get"], urls=PUBLIC_URLS)]),
        _role("system:kube-controller-manager", _controller_manager_rules()),
        _role("system:kube-scheduler", _scheduler_rules()),
        # upstream's role for the scheduler's VolumeBinding plugin (it names a claim's node)
        _role("system:volume-scheduler", [
            rule(["get", "list", "watch", "patch", "update"], [""], ["persistentvolumes", "persistentvolumeclaims"]),
            rule(["get", "list", "watch"], ["storage.k8s.io"], ["storageclasses"])]),
        _role("system:node", _node_rules()),
        _role("system:node-proxier", _node_proxier_rules()),
        _role("system:ingress-controller", _ingress_controller_rules()),
        *_certificate_roles(),
        # What our spokes do beyond their real counterparts: the scheduler records PodScheduled
        # with a patch of the pod, kube-proxy annotates its Node with its address (and enforces
        # NetworkPolicies), the cooks
        # work the restaurant's Orders and Dishes, the supervisor reads its ConfigMap, and the
        # kitchen's own paths (traffic, proxy rules, resolve) are read by the dashboard.
        _role("kubekitchen:kube-scheduler", [rule(["patch"], [""], ["pods"])]),
        # kube-proxy is also its node's network-policy agent (a CNI's, as Calico's or kube-router's):
        # it reads the policies and the pods and namespaces they select
        _role("kubekitchen:kube-proxy", [rule(["patch"], [""], ["nodes"]),
                                         rule(["list", "watch"], [""], ["pods", "namespaces"]),
                                         rule(["list", "watch"], ["networking.k8s.io"], ["networkpolicies"])]),
        # the front door records its ports on node-1 as kube-proxy records its own
        _role("kubekitchen:ingress-controller", [rule(["patch"], [""], ["nodes"])]),
        _role("kubekitchen:cook", [rule([*READ, *WRITE], ["kitchen.kubekitchen.dev"], ["*"]),
                                    rule(EVENTS, ["", "events.k8s.io"], ["events"])]),
        # the Gateway API's controller (control.gateway): reads the routes and their backends, writes statuses
        _role("kubekitchen:gateway-controller", [
            rule(READ, ["gateway.networking.k8s.io"], ["gatewayclasses", "gateways", "httproutes", "referencegrants"]),
            rule(["update", "patch"], ["gateway.networking.k8s.io"],
                 ["gatewayclasses/status", "gateways/status", "httproutes/status"]),
            rule(["patch"], ["gateway.networking.k8s.io"], ["gateways"]),
            rule(READ, [""], ["services", "nodes", "namespaces"]),
            rule(["patch"], [""], ["nodes"]),  # node-1's gateway-listeners annotation, as the front door's
            rule(READ, ["discovery.k8s.io"], ["endpointslices"]),
            rule(EVENTS, ["", "events.k8s.io"], ["events"])]),
        _role("kubekitchen:supervisor", [rule([*READ, "create", "update", "patch"], [""], ["configmaps"])]),
        # The dashboard's feed for a logged-in user: the hub filters it by what they may list/watch.
        _role("kubekitchen:feed", [rule(["get"], urls=FEED_URLS)]),
        # A shell in a pod (`nslookup`, `wget`) reaches the cluster DNS and its node's kube-proxy
        # through the hub, as the kubelet running it.
        _role("kubekitchen:node-network", [rule(["get"], urls=["/kubekitchen/resolve"]),
                                           rule(["post"], urls=["/kubekitchen/traffic"])]),
    ]
    return aggregate(roles)


def _binding(name: str, role: str, subjects: list[Obj]) -> Obj:
    return {"apiVersion": RBAC_VERSION, "kind": "ClusterRoleBinding",
            "metadata": {"name": name, "labels": dict(BOOTSTRAP_LABELS), "annotations": dict(AUTOUPDATE)},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": subjects}


def _user(name: str) -> Obj:
    return {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name}


def _group(name: str) -> Obj:
    return {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": name}


def _account(namespace: str, name: str) -> Obj:
    return {"kind": "ServiceAccount", "name": name, "namespace": namespace}


def cluster_role_bindings() -> list[Obj]:
    return [
        _binding("cluster-admin", "cluster-admin", [_group("system:masters")]),
        _binding("system:discovery", "system:discovery", [_group("system:authenticated")]),
        _binding("system:basic-user", "system:basic-user", [_group("system:authenticated")]),
        _binding("system:public-info-viewer", "system:public-info-viewer",
                 [_group("system:authenticated"), _group("system:unauthenticated")]),
        _binding("system:kube-controller-manager", "system:kube-controller-manager",
                 [_user("system:kube-controller-manager")]),
        _binding("system:kube-scheduler", "system:kube-scheduler", [_user("system:kube-scheduler")]),
        _binding("system:volume-scheduler", "system:volume-scheduler", [_user("system:kube-scheduler")]),
        # upstream binds system:node to no one (the Node authorizer decides); without that
        # authorizer, the group is bound and the node restriction (control.auth.restriction) narrows it.
        _binding("system:node", "system:node", [_group("system:nodes")]),
        _binding("system:node-proxier", "system:node-proxier", [_user("system:kube-proxy")]),
        _binding("system:ingress-controller", "system:ingress-controller", [_user("system:ingress-controller")]),
        _binding("kubekitchen:ingress-controller", "kubekitchen:ingress-controller",
                 [_user("system:ingress-controller")]),
        _binding("kubekitchen:kube-scheduler", "kubekitchen:kube-scheduler", [_user("system:kube-scheduler")]),
        _binding("kubekitchen:kube-proxy", "kubekitchen:kube-proxy", [_user("system:kube-proxy")]),
        _binding("kubekitchen:cook", "kubekitchen:cook",
                 [_account("kube-system", "line-cook"), _account("kube-system", "garnish-cook")]),
        _binding("kubekitchen:gateway-controller", "kubekitchen:gateway-controller",
                 [_account("kube-system", "gateway-controller")]),
        _binding("kubekitchen:supervisor", "kubekitchen:supervisor", [_user("kubekitchen:supervisor")]),
        _binding("kubekitchen:feed", "kubekitchen:feed", [_group("system:authenticated")]),
        _binding("kubekitchen:node-network", "kubekitchen:node-network", [_group("system:nodes")]),
        # The dashboard's own identity, used only with authentication off (logged-in browsers act as their users).
        _binding("kubekitchen:dashboard", "cluster-admin", [_user("kubekitchen:dashboard")]),
    ]


def _namespaced(obj: Obj, namespace: str) -> Obj:
    obj["metadata"]["namespace"] = namespace
    return obj


def namespace_roles() -> list[Obj]:
    """Roles in one namespace, as upstream keeps a few in kube-system and kube-public."""
    # Which spokes run is part of the picture every logged-in page draws (as kube-public's
    # cluster-info is readable by all): get, list and watch of that one ConfigMap only (a list or
    # watch names it with `fieldSelector=metadata.name=...`, as RBAC's resourceNames require).
    viewer = {**_role("kubekitchen:spokes-viewer", [rule(READ, [""], ["configmaps"], names=[spokes.NAME])]),
              "kind": "Role"}
    return [_namespaced(viewer, spokes.NAMESPACE)]


def namespace_role_bindings() -> list[Obj]:
    binding = {**_binding("kubekitchen:spokes-viewer", "kubekitchen:spokes-viewer", [_group("system:authenticated")]),
               "kind": "RoleBinding"}
    binding["roleRef"] = {**binding["roleRef"], "kind": "Role"}
    return [_namespaced(binding, "kube-system")]
