"""The `Kind`s a CustomResourceDefinition makes the hub serve: custom kinds are a strategy too.

Guarantees (pure; nothing here touches the store or HTTP): `kinds_of(crd)` gives one `Kind` per
served version of an accepted definition, all stored under one resource key `<group>/<plural>`;
each validates, defaults and prunes by its version's schema, prints its additionalPrinterColumns
and shows stored objects in its own apiVersion; its write strategy is the custom resource
strategy's: status dropped on create when status is a subresource (written through it only), and
metadata.generation bumped by any change outside metadata (and outside status when it is a
subresource). `version_priority` is Kubernetes' version order.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from control.kinds import jsonpath, openapi_schema, structure
from control.kinds.base import AGE_COLUMN, NAME_COLUMN, Cause, Column, Kind, Obj, ScaleSpec
from control.kinds.meta import human_duration, parse_time
from control.kinds.crd import _names, _spec, _versions, established, validate_crd
from control.kinds.strategy import FieldReport

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def _cell(value: Any, kind: str, now: float) -> Any:
    if value is None:
        return None
    if kind == "date":
        stamp = parse_time(value) if isinstance(value, str) else None
        return "<invalid>" if stamp is None else human_duration(now - stamp)
    if kind == "integer":
        return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if kind == "number":
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if kind == "boolean":
        return value if isinstance(value, bool) else None
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _printing(version: dict[str, Any]) -> tuple[tuple[Column, ...], Callable[[Obj, float], list[Any]] | None]:
    specs = [c for c in version.get("additionalPrinterColumns") or [] if isinstance(c, dict)]
    if not specs:
        return (NAME_COLUMN, AGE_COLUMN), None
    columns = (NAME_COLUMN, *(Column(str(c.get("name")), type=str(c.get("type") or "string"),
                                     format=str(c.get("format") or ""),
                                     description=str(c.get("description") or c.get("name")),
                                     priority=int(c.get("priority") or 0)) for c in specs))

    def cells(obj: Obj, now: float) -> list[Any]:
        row: list[Any] = [obj["metadata"]["name"]]
        for spec in specs:
            row.append(_cell(jsonpath.first(obj, str(spec.get("jsonPath"))), str(spec.get("type")), now))
        return row

    return columns, cells


def _scale_spec(scale: dict[str, Any]) -> ScaleSpec:
    selector_path = scale.get("labelSelectorPath")

    def selector(obj: Obj) -> str:
        value = jsonpath.first(obj, selector_path) if selector_path else None
        return value if isinstance(value, str) else ""

    return ScaleSpec(selector=selector, spec_replicas_path=str(scale.get("specReplicasPath")),
                     status_replicas_path=str(scale.get("statusReplicasPath")))


def _reader(api_version: str, schema: dict[str, Any]) -> Callable[[Obj], Obj]:
    def on_read(obj: Obj) -> Obj:
        shown = dict(obj)
        shown["apiVersion"] = api_version
        openapi_schema.apply_defaults(shown, schema)
        return shown
    return on_read


def _defaulter(schema: dict[str, Any]) -> Callable[[Obj], None]:
    return lambda obj: openapi_schema.apply_defaults(obj, schema)


def _validator(schema: dict[str, Any]) -> Callable[[Obj], list[Cause]]:
    return lambda obj: openapi_schema.validate(obj, schema)


def _keep(obj: Obj) -> None:
    return None


def _drop_status(obj: Obj) -> None:
    obj.pop("status", None)  # written through the status subresource only


def _outside(skipped: tuple[str, ...]) -> Callable[[Obj, Obj], bool]:
    """A custom object's generation counts any change outside metadata (and outside status when
    status is a subresource), as the custom resource strategy does."""
    def changed(new: Obj, old: Obj) -> bool:
        return ({k: v for k, v in new.items() if k not in skipped} !=
                {k: v for k, v in old.items() if k not in skipped})
    return changed


def _decoder(kind: str, version: str, schema: dict[str, Any]) -> Callable[[Obj], FieldReport]:
    """Decoding a custom object: metadata as ObjectMeta, the rest by the version's schema (value
    errors are left to validation, 422, as Kubernetes does); nulls kept where `nullable`."""
    def report(obj: Obj) -> FieldReport:
        decoded = openapi_schema.drop_nulls(obj, schema)
        meta = decoded.get("metadata")
        problems = structure.check(meta, OBJECT_META) if isinstance(meta, dict) else []
        type_errors = [p for p in problems if p.kind == "type"]
        unknown = [f"metadata.{p.path}" for p in problems] + openapi_schema.unknown_fields(decoded, schema)

        def pruned() -> Obj:
            out = openapi_schema.prune(decoded, schema)
            if isinstance(meta, dict):
                out["metadata"] = structure.prune(meta, OBJECT_META)
            return out

        return FieldReport(decoded, structure.message(type_errors, kind, version) if type_errors else "",
                           unknown, pruned)
    return report


def component_name(group: str, version: str, kind: str) -> str:
    """The OpenAPI component of a custom kind, as Kubernetes names it: reversed group, version, kind."""
    return ".".join([*reversed(group.split(".")), version, kind])


def kinds_of(crd: Obj) -> list[Kind]:
    """The kinds an accepted definition serves, one per served version (none when not established)."""
    if not established(crd) or validate_crd(crd):
        return []
    spec, names = _spec(crd), _names(crd)
    group = spec["group"]
    out = []
    for version in _versions(crd):
        if version.get("served") is not True:
            continue
        schema = version["schema"]["openAPIV3Schema"]
        subresources = version.get("subresources") if isinstance(version.get("subresources"), dict) else {}
        subs = tuple(s for s in ("status", "scale") if isinstance(subresources.get(s), dict))
        columns, cells = _printing(version)
        name = str(version["name"])
        out.append(Kind(
            group=group, version=name, kind=names["kind"], plural=names["plural"],
            namespaced=spec["scope"] == "Namespaced", definition=component_name(group, name, names["kind"]),
            short_names=tuple(names.get("shortNames") or ()), categories=tuple(names.get("categories") or ()),
            subresources=subs, defaults=_defaulter(schema), validate=_validator(schema),
            columns=columns, cells=cells, has_spec=True,
            scale=_scale_spec(subresources["scale"]) if "scale" in subs else None,
            crd=crd["metadata"]["name"], schema=schema, singular_name=names.get("singular") or "",
            list_kind_name=names.get("listKind") or "", on_read=_reader(f"{group}/{name}", schema),
            prepare_for_create=_drop_status if "status" in subs else _keep,
            generation_changed=_outside(("metadata", "status") if "status" in subs else ("metadata",)),
            fields=_decoder(names["kind"], name, schema), merges_strategically=False,
        ))
    return out


def version_priority(version: str) -> tuple:
    """Kubernetes' version order: GA before beta before alpha, higher numbers first, then others by name."""
    match = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not match:
        return (3, 0, 0, version)
    stage = {None: 0, "beta": 1, "alpha": 2}[match.group(2)]
    return (stage, -int(match.group(1)), -int(match.group(3) or 0), version)


