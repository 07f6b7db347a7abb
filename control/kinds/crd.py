"""apiextensions.k8s.io/v1 CustomResourceDefinition: the kind, its validation and its status (the
`Kind`s a definition makes the hub serve are built by `control.kinds.custom`).

Guarantees (pure; nothing here touches the store or HTTP):
- `validate_crd` refuses what Kubernetes refuses (name `<plural>.<group>`, scope, exactly one
  storage version, names, a structural schema with `type: object` at the root, scale paths,
  printer columns), with Kubernetes' cause wording; `crd_defaults` fills listKind, singular,
  conversion and the status (acceptedNames, storedVersions, NamesAccepted/Established), asking the
  registry whether another kind already uses the names (then NamesAccepted is False).
- deleting a definition removes the objects it serves (its Deletion strategy).
"""

from __future__ import annotations

from typing import Any

from control.clock import REAL as clock  # the hub's time for condition transitions; a test may replace it
from control.errors import go_value
from control.kinds import jsonpath, structural
from control.kinds.base import DNS1035_LABEL, DNS1123_SUBDOMAIN, NAME_COLUMN, Cause, Column, Kind, Obj, cause, required
from control.kinds.meta import find_condition, is_condition_true, new_condition
from control.kinds.strategy import Deletion

GROUP = "apiextensions.k8s.io"
RESOURCE = f"{GROUP}/customresourcedefinitions"
DEFINITION = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"
SCOPES = ("Cluster", "Namespaced")
COLUMN_TYPES = ("boolean", "date", "integer", "number", "string")
APPROVAL = "api-approved.kubernetes.io"
PROTECTED_GROUPS = ("k8s.io", "kubernetes.io")


def _spec(crd: Obj) -> dict[str, Any]:
    spec = crd.get("spec")
    return spec if isinstance(spec, dict) else {}


def _names(crd: Obj) -> dict[str, Any]:
    names = _spec(crd).get("names")
    return names if isinstance(names, dict) else {}


def _versions(crd: Obj) -> list[dict[str, Any]]:
    versions = _spec(crd).get("versions")
    return [v for v in versions if isinstance(v, dict)] if isinstance(versions, list) else []


def storage_version(crd: Obj) -> str:
    return next((str(v.get("name")) for v in _versions(crd) if v.get("storage") is True), "")


# --- defaults and status -------------------------------------------------------------------------

def crd_defaults(crd: Obj) -> None:
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return
    names = spec.get("names")
    if isinstance(names, dict) and isinstance(names.get("kind"), str) and names["kind"]:
        names.setdefault("listKind", names["kind"] + "List")
        names.setdefault("singular", names["kind"].lower())
    spec.setdefault("conversion", {"strategy": "None"})
    crd_status(crd)


def _condition(kind: str, ok: bool, reason: str, message: str, previous: list[dict[str, Any]]) -> dict[str, Any]:
    status = "True" if ok else "False"
    return new_condition(kind, status, clock.now(), find_condition(previous, kind), reason=reason, message=message)


def name_conflict(crd: Obj) -> str:
    """What another served kind already uses among this definition's names ("" when nothing)."""
    from control import kinds as registry  # the registry imports this module

    return registry.names_in_use(crd)


def crd_status(crd: Obj) -> None:
    """The status the hub sets when it starts serving (or refuses to serve) a definition."""
    status = crd.get("status") if isinstance(crd.get("status"), dict) else {}
    previous = status.get("conditions") if isinstance(status.get("conditions"), list) else []
    names = _names(crd)
    conflict = name_conflict(crd) if names.get("plural") and names.get("kind") else "names are not valid"
    stored = [v for v in status.get("storedVersions") or [] if isinstance(v, str)]
    storage = storage_version(crd)
    if storage and storage not in stored:
        stored.append(storage)
    accepted_before = status.get("acceptedNames") if isinstance(status.get("acceptedNames"), dict) else {"plural": "", "kind": ""}
    if conflict:
        accepted = accepted_before
        conditions = [_condition("NamesAccepted", False, "NameConflict", conflict, previous),
                      _condition("Established", False, "NotAccepted", "not all names are accepted", previous)]
    else:
        accepted = {k: names[k] for k in ("plural", "singular", "shortNames", "kind", "listKind", "categories")
                    if names.get(k)}
        conditions = [_condition("NamesAccepted", True, "NoConflicts", "no conflicts found", previous),
                      _condition("Established", True, "InitialNamesAccepted",
                                 "the initial names have been accepted", previous)]
    crd["status"] = {"conditions": conditions, "acceptedNames": accepted, "storedVersions": stored}


def established(crd: Obj) -> bool:
    return is_condition_true(crd, "Established")


# --- validation ----------------------------------------------------------------------------------

def _unsupported(path: str, value: Any, allowed: tuple[str, ...]) -> Cause:
    return cause(path, f"Unsupported value: {go_value(value)}: supported values: " + ", ".join(f'"{a}"' for a in allowed),
                 "FieldValueNotSupported")


def _names_causes(crd: Obj) -> list[Cause]:
    names, out = _names(crd), []
    if not isinstance(_spec(crd).get("names"), dict):
        return [required("spec.names")]
    plural, kind = names.get("plural"), names.get("kind")
    if not plural:
        out.append(required("spec.names.plural"))
    elif not isinstance(plural, str) or not DNS1035_LABEL.match(plural):
        out.append(cause("spec.names.plural", f'Invalid value: {go_value(plural)}: a lowercase RFC 1123 label must consist of '
                         "lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"))
    if not kind:
        out.append(required("spec.names.kind"))
    elif not isinstance(kind, str) or not DNS1035_LABEL.match(kind.lower()):
        out.append(cause("spec.names.kind", f'Invalid value: {go_value(kind)}: may have mixed case, but should otherwise '
                         "match: [a-z]([-a-z0-9]*[a-z0-9])?"))
    for key in ("singular",):
        value = names.get(key)
        if value and (not isinstance(value, str) or not DNS1035_LABEL.match(value)):
            out.append(cause(f"spec.names.{key}", f'Invalid value: {go_value(value)}: a lowercase RFC 1123 label must consist '
                             "of lower case alphanumeric characters or '-'"))
    list_kind = names.get("listKind")
    if list_kind and list_kind == kind:
        out.append(cause("spec.names.listKind", f'Invalid value: {go_value(list_kind)}: kind and listKind may not be the same'))
    for key in ("shortNames", "categories"):
        values = names.get(key)
        if values is None:
            continue
        if not isinstance(values, list):
            out.append(cause(f"spec.names.{key}", "Invalid value: must be a list of strings"))
            continue
        for index, value in enumerate(values):
            if not isinstance(value, str) or not DNS1035_LABEL.match(value):
                out.append(cause(f"spec.names.{key}[{index}]", f'Invalid value: {go_value(value)}: a lowercase RFC 1123 label '
                                 "must consist of lower case alphanumeric characters or '-'"))
    return out


def _scale_causes(scale: Any, path: str) -> list[Cause]:
    if scale is None:
        return []
    if not isinstance(scale, dict):
        return [cause(path, "Invalid value: must be an object")]
    out = []
    for key, under in (("specReplicasPath", ".spec"), ("statusReplicasPath", ".status"), ("labelSelectorPath", "")):
        value = scale.get(key)
        if value is None:
            if key != "labelSelectorPath":
                out.append(required(f"{path}.{key}"))
            continue
        fields = jsonpath.plain_fields(value) if isinstance(value, str) else None
        if fields is None or (under and (len(fields) < 2 or fields[0] != under[1:])) or (
                not under and fields[0] not in ("spec", "status")):
            where = f"under {under}" if under else "under .spec or .status"
            out.append(cause(f"{path}.{key}", f'Invalid value: {go_value(value)}: should be a json path {where}'))
    return out


def _version_causes(version: dict[str, Any], path: str) -> list[Cause]:
    out = []
    name = version.get("name")
    if not name:
        out.append(required(f"{path}.name"))
    elif not isinstance(name, str) or not DNS1035_LABEL.match(name):
        out.append(cause(f"{path}.name", f'Invalid value: {go_value(name)}: a DNS-1035 label must consist of lower case '
                         "alphanumeric characters or '-', start with an alphabetic character, and end with an "
                         "alphanumeric character"))
    for key in ("served", "storage"):
        if not isinstance(version.get(key), bool):
            out.append(required(f"{path}.{key}"))
    schema = (version.get("schema") or {}).get("openAPIV3Schema") if isinstance(version.get("schema"), dict) else None
    if schema is None:
        out.append(cause(f"{path}.schema.openAPIV3Schema", "Required value: schemas are required", "FieldValueRequired"))
    else:
        out += structural.structural_causes(schema, f"{path}.schema.openAPIV3Schema")
    subresources = version.get("subresources")
    if isinstance(subresources, dict):
        out += _scale_causes(subresources.get("scale"), f"{path}.subresources.scale")
    columns = version.get("additionalPrinterColumns") or []
    for index, column in enumerate(columns if isinstance(columns, list) else []):
        where = f"{path}.additionalPrinterColumns[{index}]"
        if not isinstance(column, dict):
            out.append(cause(where, "Invalid value: must be an object"))
            continue
        if not column.get("name"):
            out.append(required(f"{where}.name"))
        if column.get("type") not in COLUMN_TYPES:
            out.append(_unsupported(f"{where}.type", column.get("type"), COLUMN_TYPES))
        if not column.get("jsonPath"):
            out.append(required(f"{where}.jsonPath"))
        elif not jsonpath.valid(column["jsonPath"]):
            out.append(cause(f"{where}.jsonPath", f'Invalid value: {go_value(column["jsonPath"])}: must be a simple json path'))
    return out


def validate_crd(crd: Obj) -> list[Cause]:
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return [required("spec")]
    out: list[Cause] = []
    group, plural = spec.get("group"), _names(crd).get("plural")
    if not group:
        out.append(required("spec.group"))
    elif not isinstance(group, str) or not DNS1123_SUBDOMAIN.match(group) or "." not in group:
        out.append(cause("spec.group", f'Invalid value: {go_value(group)}: should be a domain with at least one dot'))
    elif any(group == g or group.endswith("." + g) for g in PROTECTED_GROUPS) and \
            not (crd["metadata"].get("annotations") or {}).get(APPROVAL):
        out.append(cause(f"metadata.annotations[{APPROVAL}]", "Required value: protected groups must have approval "
                         "annotation \"api-approved.kubernetes.io\", see https://github.com/kubernetes/enhancements/pull/1111",
                         "FieldValueRequired"))
    name = crd["metadata"].get("name")
    if group and plural and name != f"{plural}.{group}":
        out.append(cause("metadata.name", f'Invalid value: {go_value(name)}: must be spec.names.plural+"."+spec.group'))
    if spec.get("scope") not in SCOPES:
        out.append(_unsupported("spec.scope", spec.get("scope"), SCOPES) if spec.get("scope") else required("spec.scope"))
    out += _names_causes(crd)
    versions = spec.get("versions")
    if not isinstance(versions, list) or not versions:
        out.append(cause("spec.versions", "Invalid value: must have exactly one version marked as storage version"
                         if versions else "Required value: must have at least one version", "FieldValueRequired"))
    else:
        seen: set[str] = set()
        for index, version in enumerate(versions):
            if not isinstance(version, dict):
                out.append(cause(f"spec.versions[{index}]", "Invalid value: must be an object"))
                continue
            out += _version_causes(version, f"spec.versions[{index}]")
            if version.get("name") in seen:
                out.append(cause(f"spec.versions[{index}].name", f"Duplicate value: {go_value(version.get('name'))}",
                                 "FieldValueDuplicate"))
            seen.add(str(version.get("name")))
        storages = sum(1 for v in versions if isinstance(v, dict) and v.get("storage") is True)
        if storages != 1:
            out.append(cause("spec.versions", f"Invalid value: {_version_list(versions)}: must have exactly one "
                             "version marked as storage version"))
    if spec.get("preserveUnknownFields") is True:
        out.append(cause("spec.preserveUnknownFields", "Invalid value: true: must be false in order to use defaults "
                         "in the schema"))
    strategy = (spec.get("conversion") or {}).get("strategy") if isinstance(spec.get("conversion"), dict) else None
    if strategy not in (None, "None"):
        out.append(_unsupported("spec.conversion.strategy", strategy, ("None",)))
    return out


def _version_list(versions: list[Any]) -> str:
    return "[]apiextensions.CustomResourceDefinitionVersion{" + ", ".join(
        str(v.get("name")) for v in versions if isinstance(v, dict)) + "}"


def validate_crd_update(new: Obj, old: Obj) -> list[Cause]:
    out = []
    for key in ("group", "scope"):
        if _spec(new).get(key) != _spec(old).get(key):
            out.append(cause(f"spec.{key}", f'Invalid value: {go_value(_spec(new).get(key))}: field is immutable'))
    names = {str(v.get("name")) for v in _versions(new)}
    for index, stored in enumerate((new.get("status") or {}).get("storedVersions") or []):
        if stored not in names:
            out.append(cause(f"status.storedVersions[{index}]", f'Invalid value: {go_value(stored)}: must appear in '
                             "spec.versions"))
    return out


def crd_cells(crd: Obj, now: float) -> list[Any]:
    return [crd["metadata"]["name"], crd["metadata"].get("creationTimestamp", "")]


CUSTOMRESOURCEDEFINITION = Kind(
    group=GROUP, version="v1", kind="CustomResourceDefinition", plural="customresourcedefinitions",
    namespaced=False, definition=DEFINITION, short_names=("crd", "crds"), subresources=("status",),
    defaults=crd_defaults, validate=validate_crd, validate_update=validate_crd_update,
    columns=(NAME_COLUMN, Column("Created At", type="date", description="The time the definition was created.")),
    cells=crd_cells, has_spec=True, deletion=Deletion(removes_served_objects=True),
)
