"""OpenAPI schemas of core/v1 ServiceAccount and authentication.k8s.io/v1 TokenRequest.

Guarantees: a ServiceAccount's `secrets` merge by name (as upstream's patchStrategy) and its
`imagePullSecrets` are LocalObjectReferences; TokenRequest is the body of the `serviceaccounts/token`
subresource, with `spec.boundObjectRef` and the server-written `status`; both carry
`x-kubernetes-group-version-kind`.
"""

from __future__ import annotations

from control.kinds.schemas.build import (
    Schema, array, boolean, int64, kind_obj, metadata, obj, ref, string, strings, time,
)

AUTH = "io.k8s.api.authentication.v1."

DEFINITIONS: dict[str, Schema] = {
    "io.k8s.api.core.v1.ServiceAccount": kind_obj(
        "An identity for processes that run in a pod, with the secrets they may use.",
        ("", "v1", "ServiceAccount"),
        {
            "automountServiceAccountToken": boolean("Whether pods running as this account get an API "
                                                    "token mounted automatically; a pod may override it."),
            "imagePullSecrets": array("LocalObjectReference", "Secrets pods of this account use to pull "
                                      "images, copied onto pods that name none.", list_type="atomic"),
            "metadata": metadata(),
            "secrets": array("ObjectReference", "Secrets pods of this account may use (legacy).",
                             strategy="merge", key="name"),
        },
    ),
    AUTH + "TokenRequest": kind_obj(
        "Asks the hub for a token of a service account.", ("authentication.k8s.io", "v1", "TokenRequest"),
        {
            "metadata": metadata(),
            "spec": ref(AUTH + "TokenRequestSpec", "What token to issue."),
            "status": ref(AUTH + "TokenRequestStatus", "The token issued; written by the server.", default=False),
        },
        required=["spec"],
    ),
    AUTH + "TokenRequestSpec": obj(
        "The audiences, lifetime and binding of a requested token.",
        {
            "audiences": strings("Who the token is for; the hub's own audience when empty.", list_type="atomic"),
            "boundObjectRef": ref(AUTH + "BoundObjectReference", "An object (a Pod or Secret) whose "
                                  "deletion makes the token invalid.", default=False),
            "expirationSeconds": int64("Requested lifetime; at least 600, default 3600."),
        },
        required=["audiences"],
    ),
    AUTH + "BoundObjectReference": obj(
        "The object a token is bound to.",
        {
            "apiVersion": string("API version of the referent."),
            "kind": string("Kind of the referent: Pod, Secret or Node."),
            "name": string("Name of the referent."),
            "uid": string("UID of the referent."),
        },
    ),
    AUTH + "TokenRequestStatus": obj(
        "The issued token and when it expires.",
        {
            "expirationTimestamp": time("When the token stops being valid."),
            "token": string("The opaque bearer token (a signed JWT)."),
        },
        required=["token", "expirationTimestamp"],
    ),
}
