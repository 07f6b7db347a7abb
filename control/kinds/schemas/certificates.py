"""OpenAPI schema of certificates.k8s.io/v1 CertificateSigningRequest, as kube-apiserver publishes it.

Guarantees: `spec.request` and `status.certificate` are bytes (base64 in JSON); `usages` and
`groups` are atomic lists; `extra` maps a name to a list of strings; conditions are a list map
keyed by `type`.
"""

from __future__ import annotations

from control.kinds.schemas.build import Schema, array, int32, kind_obj, metadata, obj, ref, string, strings, time

CERTIFICATES = "io.k8s.api.certificates.v1."

DEFINITIONS: dict[str, Schema] = {
    CERTIFICATES + "CertificateSigningRequest": kind_obj(
        "CertificateSigningRequest objects provide a mechanism to obtain x509 certificates by submitting a "
        "certificate signing request, and having it asynchronously approved and issued.",
        ("certificates.k8s.io", "v1", "CertificateSigningRequest"),
        {
            "metadata": metadata(),
            "spec": ref(CERTIFICATES + "CertificateSigningRequestSpec", "spec contains the certificate request, "
                        "and is immutable after creation."),
            "status": ref(CERTIFICATES + "CertificateSigningRequestStatus", "status contains information about "
                          "whether the request is approved or denied, and the certificate issued by the signer."),
        },
        required=["spec"],
    ),
    CERTIFICATES + "CertificateSigningRequestSpec": obj(
        "CertificateSigningRequestSpec contains the certificate request.",
        {
            "request": {"type": "string", "format": "byte", "x-kubernetes-list-type": "atomic",
                        "description": "request contains an x509 certificate signing request encoded in a "
                        "\"CERTIFICATE REQUEST\" PEM block."},
            "signerName": string("signerName indicates the requested signer, and is a qualified name."),
            "expirationSeconds": int32("expirationSeconds is the requested duration of validity of the issued "
                                       "certificate (at least 600)."),
            "usages": strings("usages specifies a set of key usages requested in the issued certificate.",
                              list_type="atomic"),
            "username": string("username contains the name of the user that created the "
                               "CertificateSigningRequest. Populated by the API server on creation and immutable."),
            "uid": string("uid contains the uid of the user that created the CertificateSigningRequest."),
            "groups": strings("groups contains group membership of the user that created the "
                              "CertificateSigningRequest.", list_type="atomic"),
            "extra": {"type": "object", "description": "extra contains extra attributes of the user that created "
                      "the CertificateSigningRequest.",
                      "additionalProperties": strings("ExtraValue masks the value so protobuf can generate")},
        },
        required=["request", "signerName"],
    ),
    CERTIFICATES + "CertificateSigningRequestStatus": obj(
        "CertificateSigningRequestStatus contains conditions used to indicate approved/denied/failed status of "
        "the request, and the issued certificate.",
        {
            "conditions": array(CERTIFICATES + "CertificateSigningRequestCondition", "conditions applied to the "
                                "request. Known conditions are \"Approved\", \"Denied\", and \"Failed\".",
                                strategy="merge", key="type", list_type="map", map_keys=["type"]),
            "certificate": {"type": "string", "format": "byte", "x-kubernetes-list-type": "atomic",
                            "description": "certificate is populated with an issued certificate by the signer "
                            "after an Approved condition is present."},
        },
    ),
    CERTIFICATES + "CertificateSigningRequestCondition": obj(
        "CertificateSigningRequestCondition describes a condition of a CertificateSigningRequest object",
        {
            "type": string("type of the condition. Known conditions are \"Approved\", \"Denied\", and \"Failed\"."),
            "status": string("status of the condition, one of True, False, Unknown."),
            "reason": string("reason indicates a brief reason for the request state"),
            "message": string("message contains a human readable message with details about the request state"),
            "lastUpdateTime": time("lastUpdateTime is the time of the last update to this condition"),
            "lastTransitionTime": time("lastTransitionTime is the time the condition last transitioned from one "
                                       "status to another."),
        },
        required=["type", "status"],
    ),
}
