"""View models of custom resources: the CustomResourceDefinitions that declare custom kinds, and
the objects of those kinds (for example the restaurant's Orders and Dishes).

Guarantees:
- Pure functions of one object, like every presenter.
- A CRD's view model names the store key of its kind ("<group>/<plural>", as the snapshot and the
  change stream key custom objects) and its printer columns whose JSONPath is a plain field path
  (".spec.menu"); a column with filters or indexes is left out, never evaluated wrongly.
- A CRD's view model also lists the allowed values of each enum field of its spec (`choices`),
  for forms that create objects of that kind.
- A custom object's view model carries its labels and, when they are small (≤ `MAX_PART_CHARS`
  of JSON each), its spec and status, which the page reads printer columns from.
- A group is custom when it is qualified (has a dot) and is not one of Kubernetes' own
  (`*.k8s.io`): built-in groups are unqualified ("apps", "autoscaling") or end in ".k8s.io".
"""

from __future__ import annotations

import json
import re
from typing import Any

Obj = dict[str, Any]
MAX_PART_CHARS = 2000
PLAIN_PATH = re.compile(r"^(\.[A-Za-z_][A-Za-z0-9_-]*)+$")


def is_custom_group(group: str) -> bool:
    return "." in group and not group.endswith(".k8s.io") and group != "k8s.io"


def _version(spec: Obj) -> Obj:
    versions = [v for v in spec.get("versions") or [] if isinstance(v, dict)]
    stored = [v for v in versions if v.get("storage")] or [v for v in versions if v.get("served")] or versions
    return stored[0] if stored else {}


def crd_vm(crd: Obj) -> Obj:
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group, plural = spec.get("group", ""), names.get("plural", "")
    version = _version(spec)
    columns = [{"name": str(c.get("name", "")), "path": str(c.get("jsonPath", "")), "type": str(c.get("type", "string"))}
               for c in version.get("additionalPrinterColumns") or []
               if isinstance(c, dict) and PLAIN_PATH.match(str(c.get("jsonPath", "")))
               and not str(c.get("jsonPath", "")).startswith(".metadata.")]
    return {"key": (crd.get("metadata") or {}).get("name", ""), "group": group, "kind": names.get("kind", ""),
            "plural": plural, "version": version.get("name", ""), "resource": f"{group}/{plural}",
            "namespaced": spec.get("scope", "Namespaced") == "Namespaced", "columns": columns,
            "choices": _spec_choices(version)}


def _spec_choices(version: Obj) -> dict[str, list[str]]:
    schema = (version.get("schema") or {}).get("openAPIV3Schema") or {}
    fields = (((schema.get("properties") or {}).get("spec") or {}).get("properties")) or {}
    return {name: [str(v) for v in field["enum"]] for name, field in fields.items()
            if isinstance(field, dict) and isinstance(field.get("enum"), list)}


def _small(part: Any) -> Any:
    if not isinstance(part, dict):
        return {}
    return part if len(json.dumps(part)) <= MAX_PART_CHARS else {}


def object_vm(resource: str, obj: Obj) -> Obj:
    meta = obj.get("metadata") or {}
    namespace, name = meta.get("namespace", ""), meta.get("name", "")
    return {"key": f"{namespace}/{name}" if namespace else name, "ns": namespace, "name": name,
            "resource": resource, "kind": obj.get("kind", ""), "apiVersion": obj.get("apiVersion", ""),
            "labels": dict(meta.get("labels") or {}), "terminating": bool(meta.get("deletionTimestamp")),
            "spec": _small(obj.get("spec")), "status": _small(obj.get("status"))}
