"""OpenAPI schemas of rbac.authorization.k8s.io/v1 Role, ClusterRole (with its aggregationRule),
RoleBinding and ClusterRoleBinding, as k8s.io/api publishes them.

Guarantees: every field `kubectl create role|clusterrole|rolebinding|clusterrolebinding` and
`kubectl explain` use is declared with upstream's types; rules and subjects are atomic lists as
upstream; each kind carries `x-kubernetes-group-version-kind`.
"""

from __future__ import annotations

from control.kinds.schemas.build import META, Schema, array, kind_obj, metadata, obj, ref, string, strings

RBAC = "io.k8s.api.rbac.v1."
GROUP = "rbac.authorization.k8s.io"


def _role(kind: str, description: str, aggregation: bool) -> Schema:
    props: dict[str, Schema] = {
        "metadata": metadata(),
        "rules": array(RBAC + "PolicyRule", "The permissions this role grants.", list_type="atomic"),
    }
    if aggregation:
        props["aggregationRule"] = ref(RBAC + "AggregationRule", "How this role's rules are built from other "
                                       "ClusterRoles'; the controller manager writes them.", default=False)
    return kind_obj(description, (GROUP, "v1", kind), props)


def _binding(kind: str, description: str) -> Schema:
    return kind_obj(description, (GROUP, "v1", kind), {
        "metadata": metadata(),
        "roleRef": ref(RBAC + "RoleRef", "The role granted; it cannot change once set."),
        "subjects": array(RBAC + "Subject", "Who the role is granted to.", list_type="atomic"),
    }, required=["roleRef"])


DEFINITIONS: dict[str, Schema] = {
    RBAC + "Role": _role("Role", "A namespaced set of permissions.", False),
    RBAC + "ClusterRole": _role("ClusterRole", "A cluster-wide set of permissions, usable in any namespace "
                                "through a RoleBinding.", True),
    RBAC + "RoleBinding": _binding("RoleBinding", "Grants a Role or ClusterRole within one namespace."),
    RBAC + "ClusterRoleBinding": _binding("ClusterRoleBinding", "Grants a ClusterRole in every namespace."),
    RBAC + "PolicyRule": obj("One permission: verbs on resources (or non-resource URLs).", {
        "apiGroups": strings("API groups of the resources; \"\" is the core group, \"*\" any.", list_type="atomic"),
        "nonResourceURLs": strings("Paths such as /healthz; a trailing * matches a prefix.", list_type="atomic"),
        "resourceNames": strings("Names the rule is limited to; empty: any.", list_type="atomic"),
        "resources": strings("Resources, e.g. pods, pods/log, */scale, *.", list_type="atomic"),
        "verbs": strings("Verbs: get, list, watch, create, update, patch, delete, deletecollection, or *.",
                         list_type="atomic"),
    }, required=["verbs"]),
    RBAC + "AggregationRule": obj("Selectors of the ClusterRoles whose rules are aggregated.", {
        "clusterRoleSelectors": array(META + "LabelSelector", "Roles matching any selector are aggregated.",
                                      list_type="atomic"),
    }),
    RBAC + "RoleRef": obj("The role a binding grants.", {
        "apiGroup": string("The group of the role: rbac.authorization.k8s.io."),
        "kind": string("Role or ClusterRole."),
        "name": string("The role's name."),
    }, required=["apiGroup", "kind", "name"]),
    RBAC + "Subject": obj("A user, group or service account.", {
        "apiGroup": string("rbac.authorization.k8s.io for User and Group, \"\" for ServiceAccount."),
        "kind": string("User, Group or ServiceAccount."),
        "name": string("The subject's name."),
        "namespace": string("The namespace of a ServiceAccount."),
    }, required=["kind", "name"]),
}
