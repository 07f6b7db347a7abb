"""apiregistration.k8s.io/v1 APIService, as kube-aggregator serves it: one object per API group
version the cluster serves, telling where it is served (`Local`: by kube-apiserver itself) and
whether it is available.

Guarantees:
- Validation is upstream's ValidateAPIService (pkg/apis/apiregistration/validation), with its
  messages: the name must be `spec.version + "." + spec.group` (`v1.` for the core group), only
  `v1` may have an empty group, the group is a DNS-1123 subdomain and the version a DNS-1035 label,
  groupPriorityMinimum in 1..20000 and versionPriority in 1..1000, a Local APIService (no
  `service`) has no caBundle and no insecureSkipTLSVerify, a service reference names its namespace
  and name and a valid port (defaulted to 443), and insecureSkipTLSVerify excludes a caBundle.
- `kubectl get apiservices` shows NAME, SERVICE (`Local` or `namespace/name`), AVAILABLE (`True`,
  or `False (Reason)`) and AGE, as the aggregator's table convertor does.
- `local_apiservice(group, version, ...)` is the object kube-apiserver's autoregister controller
  writes for a group version it serves, with the priorities upstream gives the built-in groups
  (`PRIORITIES`; another group, a custom resource's, gets 1000/100 as the crdRegistrationController
  gives it) and the status its
  availability controller writes for a local one (Available, reason Local). A client's status is
  dropped on create (the aggregator's PrepareForCreate); the status subresource writes it.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from control.errors import go_value
from control.kinds.base import (AGE_COLUMN, DNS1035_LABEL, NAME_COLUMN, Cause, Column, Kind, Obj, cause,
                                name_causes, required, reset_status)
from control.kinds.meta import age

GROUP, VERSION = "apiregistration.k8s.io", "v1"
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# kube-apiserver's DefaultGenericAPIServicePriorities and apiVersionPriorities: (group, version) ->
# (groupPriorityMinimum, versionPriority); discovery orders groups and versions by them.
PRIORITIES: dict[tuple[str, str], tuple[int, int]] = {
    ("", "v1"): (18000, 1),
    ("apiregistration.k8s.io", "v1"): (18000, 15),
    ("apps", "v1"): (17800, 15),
    ("events.k8s.io", "v1"): (17750, 15),
    ("authentication.k8s.io", "v1"): (17700, 15),
    ("authorization.k8s.io", "v1"): (17600, 15),
    ("autoscaling", "v1"): (17500, 15),
    ("autoscaling", "v2"): (17500, 30),
    ("batch", "v1"): (17400, 15),
    ("certificates.k8s.io", "v1"): (17300, 15),
    ("networking.k8s.io", "v1"): (17200, 15),
    ("policy", "v1"): (17100, 15),
    ("rbac.authorization.k8s.io", "v1"): (17000, 15),
    ("storage.k8s.io", "v1"): (16800, 15),
    ("apiextensions.k8s.io", "v1"): (16700, 15),
    ("admissionregistration.k8s.io", "v1"): (16700, 15),
    ("scheduling.k8s.io", "v1"): (16600, 15),
    ("coordination.k8s.io", "v1"): (16500, 15),
    ("node.k8s.io", "v1"): (16300, 15),
    ("discovery.k8s.io", "v1"): (16200, 15),
    ("flowcontrol.apiserver.k8s.io", "v1"): (16100, 21),
    # metrics-server's APIService asks for 100/100; here the hub serves the group itself
    ("metrics.k8s.io", "v1beta1"): (100, 100),
}
# The crdRegistrationController's priorities for a CustomResourceDefinition's group versions.
DEFAULT_PRIORITY = (1000, 100)
LOCAL_MESSAGE = "Local APIServices are always available"


def apiservice_name(group: str, version: str) -> str:
    return f"{version}.{group}"


def apiservice_defaults(service: Obj) -> None:
    spec = service.get("spec")
    reference = spec.get("service") if isinstance(spec, dict) else None
    if isinstance(reference, dict) and reference.get("port") is None:
        reference["port"] = 443


def path_segment_name(name: Any) -> list[Cause]:
    """path.IsValidPathSegmentName: any name without '/' or '%' that is not '.' or '..'."""
    if not isinstance(name, str) or not name:
        return name_causes(name)
    if name in (".", ".."):
        return [cause("metadata.name", f"Invalid value: {go_value(name)}: may not be '{name}'")]
    for bad in ("/", "%"):
        if bad in name:
            return [cause("metadata.name", f"Invalid value: {go_value(name)}: may not contain '{bad}'")]
    return []


def _byte_count(bundle: Any) -> int:
    """caBundle is []byte: JSON carries it as base64; Go's message counts the decoded bytes."""
    try:
        return len(base64.b64decode(str(bundle), validate=True))
    except (binascii.Error, ValueError):
        return len(str(bundle))


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def validate_apiservice(service: Obj) -> list[Cause]:
    spec = service.get("spec") if isinstance(service.get("spec"), dict) else {}
    group, version = str(spec.get("group") or ""), str(spec.get("version") or "")
    name = service["metadata"].get("name")
    out: list[Cause] = []
    wanted = apiservice_name(group, version)
    if isinstance(name, str) and name and not path_segment_name(name) and name != wanted:
        out.append(cause("metadata.name", f"Invalid value: {go_value(name)}: must be "
                         f'`spec.version+"."+spec.group`: {go_value(wanted)}'))
    if not group and version != "v1":
        out.append(cause("spec.group", "Required value: only v1 may have an empty group and it better be legacy kube",
                         "FieldValueRequired"))
    if group and (len(group) > 253 or not DNS1123_SUBDOMAIN.match(group)):
        out.append(cause("spec.group", f"Invalid value: {go_value(group)}: a lowercase RFC 1123 subdomain must "
                         "consist of lower case alphanumeric characters, '-' or '.', and must start and end with "
                         "an alphanumeric character (e.g. 'example.com', regex used for validation is "
                         "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"))
    if len(version) > 63 or not DNS1035_LABEL.match(version):
        out.append(cause("spec.version", f"Invalid value: {go_value(version)}: a DNS-1035 label must consist of "
                         "lower case alphanumeric characters or '-', start with an alphabetic character, and end "
                         "with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation "
                         "is '[a-z]([-a-z0-9]*[a-z0-9])?')"))
    group_priority, version_priority = _int(spec.get("groupPriorityMinimum")), _int(spec.get("versionPriority"))
    if not 0 < group_priority <= 20000:
        out.append(cause("spec.groupPriorityMinimum", f"Invalid value: {go_value(group_priority)}: "
                         "must be positive and less than 20000"))
    if not 0 < version_priority <= 1000:
        out.append(cause("spec.versionPriority", f"Invalid value: {go_value(version_priority)}: "
                         "must be positive and less than 1000"))
    bundle, insecure = spec.get("caBundle") or "", bool(spec.get("insecureSkipTLSVerify"))
    reference = spec.get("service")
    if not isinstance(reference, dict):
        if bundle:
            out.append(cause("spec.caBundle", f'Invalid value: "{_byte_count(bundle)} bytes": local '
                             "APIServices may not have a caBundle"))
        if insecure:
            out.append(cause("spec.insecureSkipTLSVerify", "Invalid value: true: local APIServices may not have "
                             "insecureSkipTLSVerify"))
        return out
    if not reference.get("namespace"):
        out.append(required("spec.service.namespace"))
    if not reference.get("name"):
        out.append(required("spec.service.name"))
    port = reference.get("port")
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
        out.append(cause("spec.service.port", f"Invalid value: {go_value(port)}: port is not valid: "
                         "must be between 1 and 65535, inclusive"))
    if insecure and bundle:
        out.append(cause("spec.insecureSkipTLSVerify", "Invalid value: true: may not be true if caBundle is present"))
    return out


def available(service: Obj) -> str:
    """The AVAILABLE column: the Available condition's status, with its reason when not True."""
    for condition in (service.get("status") or {}).get("conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == "Available":
            status = str(condition.get("status") or "Unknown")
            return status if status == "True" or not condition.get("reason") else f"{status} ({condition['reason']})"
    return "Unknown"


def apiservice_cells(service: Obj, now: float) -> list[Any]:
    reference = (service.get("spec") or {}).get("service")
    shown = f"{reference.get('namespace', '')}/{reference.get('name', '')}" if isinstance(reference, dict) else "Local"
    return [service["metadata"]["name"], shown, available(service), age(service, now)]


def local_apiservice(group: str, version: str, uid: str, created: str) -> Obj:
    """The APIService of a group version the hub serves itself, Available as a local one is."""
    group_priority, version_priority = PRIORITIES.get((group, version), DEFAULT_PRIORITY)
    return {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "APIService",
        "metadata": {"name": apiservice_name(group, version), "uid": uid, "creationTimestamp": created,
                     "labels": {"kube-aggregator.kubernetes.io/automanaged": "onstart"}},
        "spec": {"group": group, "version": version, "groupPriorityMinimum": group_priority,
                 "versionPriority": version_priority},
        "status": {"conditions": [{"type": "Available", "status": "True", "lastTransitionTime": created,
                                   "reason": "Local", "message": LOCAL_MESSAGE}]},
    }


APISERVICE = Kind(
    group=GROUP, version=VERSION, kind="APIService", plural="apiservices", namespaced=False,
    definition="io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService", subresources=("status",),
    defaults=apiservice_defaults, validate=validate_apiservice, name_rule=path_segment_name,
    prepare_for_create=reset_status, has_spec=True,
    columns=(NAME_COLUMN, Column("Service", description="The reference to the service that hosts this API endpoint."),
             Column("Available", description="Whether this service is available."), AGE_COLUMN),
    cells=apiservice_cells,
)
