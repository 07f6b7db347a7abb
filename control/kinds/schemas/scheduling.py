"""OpenAPI schema of scheduling.k8s.io/v1 PriorityClass, as k8s.io/api publishes it.

Guarantees: `value` is a required int32; `globalDefault` a boolean; `preemptionPolicy` one of
upstream's two policies; the class has no spec or status (its fields sit at the top level).
"""

from __future__ import annotations

from control.kinds.schemas.build import Schema, boolean, int32, kind_obj, metadata, string

SCHEDULING = "io.k8s.api.scheduling.v1."

DEFINITIONS: dict[str, Schema] = {
    SCHEDULING + "PriorityClass": kind_obj(
        "PriorityClass defines mapping from a priority class name to the priority integer value. The value can "
        "be any valid integer.",
        ("scheduling.k8s.io", "v1", "PriorityClass"),
        {
            "description": string("description is an arbitrary string that usually provides guidelines on when "
                                  "this priority class should be used."),
            "globalDefault": boolean("globalDefault specifies whether this PriorityClass should be considered as "
                                     "the default priority for pods that do not have any priority class. Only one "
                                     "PriorityClass can be marked as `globalDefault`."),
            "metadata": metadata(),
            "preemptionPolicy": string("preemptionPolicy is the Policy for preempting pods with lower priority. "
                                       "One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if "
                                       "unset.", enum=["Never", "PreemptLowerPriority"]),
            "value": int32("value represents the integer value of this priority class. This is the actual "
                           "priority that pods receive when they have the name of this class in their pod spec."),
        },
        required=["value"],
    ),
}
