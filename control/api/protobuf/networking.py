"""Field tables of networking.k8s.io/v1 Ingress and IngressClass (what `kubectl create ingress` and
`kubectl create ingressclass`-style typed clients POST).

Numbers from k8s.io/api/networking/v1 generated.proto: a backend's `service` is field 4 and
`resource` field 3 (1 and 2 were v1beta1's serviceName/servicePort); an IngressRule inlines its
IngressRuleValue (`http`); `pathType`, `ingressClassName` and a parameters reference's `apiGroup`,
`scope` and `namespace` are Go pointers. Format: see `control.api.protobuf.schema`.
"""

NETWORKING = {
    "Ingress": "1 metadata ObjectMeta, 2 spec IngressSpec, 3 status IngressStatus",
    "IngressSpec": ("4 ingressClassName str?, 1 defaultBackend IngressBackend, 2 tls []IngressTLS, "
                    "3 rules []IngressRule"),
    "IngressBackend": "4 service IngressServiceBackend, 3 resource TypedLocalObjectReference",
    "IngressServiceBackend": "1 name str!, 2 port ServiceBackendPort",
    "ServiceBackendPort": "1 name str, 2 number int",
    "IngressTLS": "1 hosts []str, 2 secretName str",
    "IngressRule": "1 host str, 2 ...IngressRuleValue",
    "IngressRuleValue": "1 http HTTPIngressRuleValue",
    "HTTPIngressRuleValue": "1 paths []HTTPIngressPath",
    "HTTPIngressPath": "1 path str, 3 pathType str?, 2 backend IngressBackend",
    "IngressStatus": "1 loadBalancer IngressLoadBalancerStatus",
    "IngressLoadBalancerStatus": "1 ingress []IngressLoadBalancerIngress",
    "IngressLoadBalancerIngress": "1 ip str, 2 hostname str, 4 ports []IngressPortStatus",
    "IngressPortStatus": "1 port int!, 2 protocol str!, 3 error str?",
    "IngressClass": "1 metadata ObjectMeta, 2 spec IngressClassSpec",
    "IngressClassSpec": "1 controller str, 2 parameters IngressClassParametersReference",
    "IngressClassParametersReference": ("1 apiGroup str?, 2 kind str!, 3 name str!, 4 scope str?, "
                                        "5 namespace str?"),
}
