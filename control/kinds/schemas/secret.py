"""OpenAPI schema of core/v1 Secret.

Guarantees: `data` holds base64 strings (format byte, as upstream); `stringData` is a write-only
map of plain strings; the kind carries `x-kubernetes-group-version-kind` so kubectl validates and
builds `kubectl create secret` bodies against it.
"""

from __future__ import annotations

from control.kinds.schemas.build import Schema, boolean, kind_obj, metadata, string, string_map

DEFINITIONS: dict[str, Schema] = {
    "io.k8s.api.core.v1.Secret": kind_obj(
        "Secret holds secret data of a certain type. The total bytes of the values in the Data field "
        "must be less than MaxSecretSize bytes.", ("", "v1", "Secret"),
        {
            "data": string_map("Secret values by key, base64 encoded. Keys must consist of alphanumeric "
                               "characters, '-', '_' or '.'.", fmt="byte"),
            "immutable": boolean("When true the data can no longer be changed, only the object deleted."),
            "metadata": metadata(),
            "stringData": string_map("Write-only convenience: plain-text values merged into `data` on "
                                     "write (winning on the same key); never read back."),
            "type": string("Used to ease programmatic handling of secret data: Opaque, "
                           "kubernetes.io/tls, kubernetes.io/dockerconfigjson, ..."),
        },
    ),
}
