"""Field tables of rbac.authorization.k8s.io/v1 (what `kubectl create role|clusterrole|rolebinding|
clusterrolebinding` POST), authorization.k8s.io/v1 access reviews (`kubectl auth can-i`) and
authentication.k8s.io/v1 SelfSubjectReview / TokenReview (`kubectl auth whoami`).

Numbers from k8s.io/api/{rbac,authorization,authentication}/v1 generated.proto; aggregationRule,
resourceAttributes and nonResourceAttributes are pointers in Go. Format: see
`control.api.protobuf.schema`.
"""

RBAC = {
    "AggregationRule": "1 clusterRoleSelectors []LabelSelector",
    "ClusterRole": "1 metadata ObjectMeta, 2 rules []PolicyRule, 3 aggregationRule AggregationRule?",
    "ClusterRoleBinding": "1 metadata ObjectMeta, 2 subjects []Subject, 3 roleRef RoleRef",
    "PolicyRule": "1 verbs []str, 2 apiGroups []str, 3 resources []str, 4 resourceNames []str, 5 nonResourceURLs []str",
    "Role": "1 metadata ObjectMeta, 2 rules []PolicyRule",
    "RoleBinding": "1 metadata ObjectMeta, 2 subjects []Subject, 3 roleRef RoleRef",
    "RoleRef": "1 apiGroup str!, 2 kind str!, 3 name str!",
    "Subject": "1 kind str!, 2 apiGroup str, 3 name str!, 4 namespace str",
}
REVIEWS = {
    "ResourceAttributes": ("1 namespace str, 2 verb str, 3 group str, 4 version str, 5 resource str, "
                           "6 subresource str, 7 name str"),
    "NonResourceAttributes": "1 path str, 2 verb str",
    "SelfSubjectAccessReview": ("1 metadata ObjectMeta, 2 spec SelfSubjectAccessReviewSpec, "
                                "3 status SubjectAccessReviewStatus"),
    "SelfSubjectAccessReviewSpec": ("1 resourceAttributes ResourceAttributes?, "
                                    "2 nonResourceAttributes NonResourceAttributes?"),
    "SubjectAccessReviewStatus": "1 allowed bool!, 4 denied bool, 2 reason str, 3 evaluationError str",
    "SubjectAccessReview": "1 metadata ObjectMeta, 2 spec SubjectAccessReviewSpec, 3 status SubjectAccessReviewStatus",
    "SubjectAccessReviewSpec": ("1 resourceAttributes ResourceAttributes?, 2 nonResourceAttributes "
                                "NonResourceAttributes?, 3 user str, 4 groups []str, 6 uid str"),
    "SelfSubjectRulesReview": "1 metadata ObjectMeta, 2 spec SelfSubjectRulesReviewSpec",
    "SelfSubjectRulesReviewSpec": "1 namespace str",
}
AUTHENTICATION_REVIEWS = {
    "SelfSubjectReview": "1 metadata ObjectMeta",
    "TokenReview": "1 metadata ObjectMeta, 2 spec TokenReviewSpec",
    "TokenReviewSpec": "1 token str, 2 audiences []str",
}
