"""Field tables of authentication.k8s.io/v1 TokenRequest (what `kubectl create token` POSTs to
`serviceaccounts/NAME/token`).

Numbers from k8s.io/api/authentication/v1 generated.proto (TokenRequestSpec keeps 1, 3 and 4);
`expirationSeconds` and `boundObjectRef` are pointers in Go. Format: see
`control.api.protobuf.schema`.
"""

AUTHENTICATION = {
    "BoundObjectReference": "1 kind str, 2 apiVersion str, 3 name str, 4 uid str",
    "TokenRequest": "1 metadata ObjectMeta, 2 spec TokenRequestSpec, 3 status TokenRequestStatus",
    "TokenRequestSpec": "1 audiences []str, 4 expirationSeconds int?, 3 boundObjectRef BoundObjectReference",
    "TokenRequestStatus": "1 token str!, 2 expirationTimestamp Time",
}
