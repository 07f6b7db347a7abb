"""OpenAPI schemas of core/v1 ResourceQuota and LimitRange (and their parts).

Guarantees: shapes and names as upstream's openapi (io.k8s.api.core.v1.*); quantities reference
the Quantity component; both kinds carry `x-kubernetes-group-version-kind` so kubectl validates
against them and builds `kubectl create quota` bodies.
"""

from __future__ import annotations

from control.kinds.schemas.build import (
    Schema, array, kind_obj, metadata, obj, quantity_map, ref, string, strings,
)

DEFINITIONS: dict[str, Schema] = {
    "io.k8s.api.core.v1.ResourceQuota": kind_obj(
        "ResourceQuota sets aggregate quota restrictions enforced per namespace.", ("", "v1", "ResourceQuota"),
        {
            "metadata": metadata(),
            "spec": ref("ResourceQuotaSpec", "The desired quota."),
            "status": ref("ResourceQuotaStatus", "The actual enforced quota and its current usage."),
        },
    ),
    "io.k8s.api.core.v1.ResourceQuotaSpec": obj(
        "ResourceQuotaSpec defines the desired hard limits to enforce for Quota.",
        {
            "hard": quantity_map("The set of desired hard limits for each named resource."),
            "scopeSelector": ref("ScopeSelector", "A selector over the scopes objects are tracked in.",
                                 default=False),
            "scopes": strings("Filters that must match each object tracked by the quota.", list_type="atomic"),
        },
    ),
    "io.k8s.api.core.v1.ScopeSelector": obj(
        "A selector of scopes by their names and values.",
        {"matchExpressions": array("ScopedResourceSelectorRequirement", "Requirements by scope names.",
                                   list_type="atomic")},
    ),
    "io.k8s.api.core.v1.ScopedResourceSelectorRequirement": obj(
        "A selector that contains values, a scope name, and an operator.",
        {
            "operator": string("Relationship of the scope to the values: In, NotIn, Exists, DoesNotExist.",
                               enum=("DoesNotExist", "Exists", "In", "NotIn")),
            "scopeName": string("The name of the scope the selector applies to."),
            "values": strings("String values for In and NotIn.", list_type="atomic"),
        },
        required=("scopeName", "operator"),
    ),
    "io.k8s.api.core.v1.ResourceQuotaStatus": obj(
        "ResourceQuotaStatus defines the enforced hard limits and observed use.",
        {
            "hard": quantity_map("The set of enforced hard limits for each named resource."),
            "used": quantity_map("The current observed total usage of the resource in the namespace."),
        },
    ),
    "io.k8s.api.core.v1.LimitRange": kind_obj(
        "LimitRange sets resource usage limits for each kind of resource in a Namespace.",
        ("", "v1", "LimitRange"),
        {
            "metadata": metadata(),
            "spec": ref("LimitRangeSpec", "The limits enforced."),
        },
    ),
    "io.k8s.api.core.v1.LimitRangeSpec": obj(
        "LimitRangeSpec defines a min/max usage limit for resources that match on kind.",
        {"limits": array("LimitRangeItem", "The list of LimitRangeItem objects that are enforced.",
                         list_type="atomic")},
        required=("limits",),
    ),
    "io.k8s.api.core.v1.LimitRangeItem": obj(
        "LimitRangeItem defines a min/max usage limit for any resource that matches on kind.",
        {
            "default": quantity_map("Default resource limit value by resource name if resource limit is omitted."),
            "defaultRequest": quantity_map("Default resource request value by resource name if resource "
                                           "request is omitted."),
            "max": quantity_map("Max usage constraints on this kind by resource name."),
            "maxLimitRequestRatio": quantity_map("The max burst: a resource's limit divided by its request "
                                                 "may not pass this."),
            "min": quantity_map("Min usage constraints on this kind by resource name."),
            "type": string("Type of resource that this limit applies to: Pod, Container, PersistentVolumeClaim."),
        },
        required=("type",),
    ),
}
