"""Field tables of certificates.k8s.io/v1 CertificateSigningRequest (what `kubectl certificate
approve|deny` PUT to `certificatesigningrequests/NAME/approval`).

Numbers from k8s.io/api/certificates/v1 generated.proto; `expirationSeconds` is a pointer in Go,
`request`, `signerName`, a condition's `type` and `status` have no `omitempty`. spec.extra (field 6)
has no table: the server records the requester itself and keeps the stored spec on every update.
Format: see `control.api.protobuf.schema`.
"""

CERTIFICATES = {
    "CertificateSigningRequest": ("1 metadata ObjectMeta, 2 spec CertificateSigningRequestSpec, "
                                  "3 status CertificateSigningRequestStatus"),
    "CertificateSigningRequestSpec": ("1 request bytes!, 7 signerName str!, 8 expirationSeconds int?, 5 usages []str, "
                                      "2 username str, 3 uid str, 4 groups []str"),
    "CertificateSigningRequestStatus": "1 conditions []CertificateSigningRequestCondition, 2 certificate bytes",
    "CertificateSigningRequestCondition": ("1 type str!, 6 status str!, 2 reason str, 3 message str, "
                                           "4 lastUpdateTime Time, 5 lastTransitionTime Time"),
}
