"""OpenAPI schema of apps/v1 ControllerRevision, as k8s.io/api/apps/v1 publishes it.

Guarantees: `data` is a RawExtension, kept as given (any JSON object: a DaemonSet's or
StatefulSet's template patch); `revision` is an int64 and required.
"""

from __future__ import annotations

from control.kinds.schemas.build import APPS, Schema, free, int64, kind_obj, metadata

DEFINITIONS: dict[str, Schema] = {
    APPS + "ControllerRevision": kind_obj(
        "ControllerRevision implements an immutable snapshot of state data. Clients are responsible for "
        "serializing and deserializing the objects that contain their internal state.",
        ("apps", "v1", "ControllerRevision"),
        {
            "data": free("Data is the serialized representation of the state."),
            "metadata": metadata(),
            "revision": int64("Revision indicates the revision of the state represented by Data."),
        },
        required=["revision"],
    ),
}
