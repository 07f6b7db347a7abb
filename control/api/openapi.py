"""The OpenAPI v3 documents the hub publishes at /openapi/v3 (a root listing one document per
group-version) and /openapi/v3/<api/v1 | apis/<group>/<version>>.

Guarantees: documents are pure functions of the kinds and `control.kinds.schemas.DEFINITIONS`, so
they are byte-for-byte stable and the root's `?hash=` changes exactly when a document does. Every
PATCH operation carries `x-kubernetes-group-version-kind`, the four patch content types and a
`fieldValidation` query parameter: kubectl reads strategic-merge metadata from the component schemas
and leaves validation to the server. Components are exactly the schemas reachable from the
group-version's kinds, their lists and the bodies its operations use (Status, DeleteOptions, Patch,
Scale, Binding), plus the `v1 List` of any objects in the api/v1 document.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from typing import Any, Iterable, Sequence

from control.kinds.base import Kind
from control.kinds.schemas import DEFINITIONS

Doc = dict[str, Any]

_REF = "#/components/schemas/"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_STATUS = _META + "Status"
_DELETE_OPTIONS = _META + "DeleteOptions"
_PATCH = _META + "Patch"
V1_LIST = _META + "List"
_SCALE = "io.k8s.api.autoscaling.v1.Scale"
_BINDING = "io.k8s.api.core.v1.Binding"
PATCH_TYPES = ("application/apply-patch+yaml", "application/json-patch+json",
               "application/merge-patch+json", "application/strategic-merge-patch+json")


def _default_kinds(kinds: Sequence[Kind] | None) -> Sequence[Kind]:
    if kinds is not None:
        return kinds
    from control.api.discovery import views
    from control.kinds import served_kinds

    return [*served_kinds(), *(k for view in views() for k in view.kinds)]  # the extras' views too


def gv_path(group: str, version: str) -> str:
    """The root document's key for a group-version: "api/v1" or "apis/<group>/<version>"."""
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _group_versions(kinds: Sequence[Kind]) -> list[tuple[str, str]]:
    seen: list[tuple[str, str]] = []
    for k in kinds:
        if (k.group, k.version) not in seen:
            seen.append((k.group, k.version))
    return seen


# --- parameters ----------------------------------------------------------------------------------

def _param(name: str, where: str, description: str, kind: str = "string", required: bool = False) -> Doc:
    schema: Doc = {"type": kind, "uniqueItems": True}
    out: Doc = {"name": name, "in": where, "description": description, "schema": schema}
    if required:
        out["required"] = True
    return out


_PRETTY = _param("pretty", "query", "If 'true', the output is indented.")
_NAME = _param("name", "path", "Name of the object.", required=True)
_NAMESPACE = _param("namespace", "path", "Namespace of the object.", required=True)
_DRY_RUN = _param("dryRun", "query", "When 'All', run every stage except persisting the result.")
_FIELD_MANAGER = _param("fieldManager", "query", "Name of the actor making the change, for field "
                        "ownership. Required for apply patches.")
_FIELD_VALIDATION = _param("fieldValidation", "query", "What to do with unknown or duplicate fields "
                           "in the body: Ignore, Warn or Strict.")
_FORCE = _param("force", "query", "For apply patches: take over fields owned by other managers.",
                "boolean")
_WRITE = [_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION]
_LIST = [
    _param("allowWatchBookmarks", "query", "Ask for BOOKMARK events in a watch.", "boolean"),
    _param("continue", "query", "Token from a previous page to fetch the next one."),
    _param("fieldSelector", "query", "Select objects by fields, e.g. metadata.name=web."),
    _param("labelSelector", "query", "Select objects by labels, e.g. app=web,tier!=db."),
    _param("limit", "query", "Largest number of items to return; a continue token follows.", "integer"),
    _param("resourceVersion", "query", "Which version of the store to read or watch from."),
    _param("resourceVersionMatch", "query", "How resourceVersion applies: Exact or NotOlderThan."),
    _param("sendInitialEvents", "query", "Start a watch with events for every existing object.",
           "boolean"),
    _param("timeoutSeconds", "query", "End the list or watch after this many seconds.", "integer"),
    _param("watch", "query", "Stream changes instead of returning a list.", "boolean"),
]
_DELETE = [
    _DRY_RUN,
    _param("gracePeriodSeconds", "query", "Seconds before the object is removed; 0 means now.",
           "integer"),
    _param("ignoreStoreReadErrorWithClusterBreakingPotential", "query", "Delete even if the stored "
           "object cannot be read.", "boolean"),
    _param("orphanDependents", "query", "Deprecated; use propagationPolicy.", "boolean"),
    _param("propagationPolicy", "query", "Orphan, Background or Foreground."),
]
_LOG = [
    _param("container", "query", "Container to read; needed when the pod has several."),
    _param("follow", "query", "Keep streaming new lines.", "boolean"),
    _param("insecureSkipTLSVerifyBackend", "query", "Skip verifying the node's serving certificate.",
           "boolean"),
    _param("limitBytes", "query", "Stop after this many bytes.", "integer"),
    _param("previous", "query", "Read the previous run of the container.", "boolean"),
    _param("sinceSeconds", "query", "Only lines newer than this many seconds.", "integer"),
    _param("tailLines", "query", "Only this many lines from the end.", "integer"),
    _param("timestamps", "query", "Prefix every line with its RFC 3339 timestamp.", "boolean"),
]


# --- operations ----------------------------------------------------------------------------------

def _content(schema_name: str) -> Doc:
    return {"application/json": {"schema": {"$ref": _REF + schema_name}}}


def _responses(schema_name: str, *codes: str) -> Doc:
    text = {"200": "OK", "201": "Created", "202": "Accepted"}
    out: Doc = {code: {"description": text[code], "content": _content(schema_name)} for code in codes}
    out["401"] = {"description": "Unauthorized"}
    return out


def _op(action: str, gvk: Doc, operation_id: str, description: str, tag: str, *,
        params: Iterable[Doc] = (), body: Doc | None = None, responses: Doc) -> Doc:
    op: Doc = {"description": description, "operationId": operation_id, "tags": [tag]}
    params = list(params)
    if params:
        op["parameters"] = params
    if body is not None:
        op["requestBody"] = body
    op["responses"] = responses
    op["x-kubernetes-action"] = action
    op["x-kubernetes-group-version-kind"] = gvk
    return op


def _body(schema_name: str) -> Doc:
    return {"content": {"*/*": {"schema": {"$ref": _REF + schema_name}}}, "required": True}


def _patch_body(k: Kind) -> Doc:
    # A kind that takes no strategic merge patch (custom kinds, as upstream) does not list it, and
    # kubectl apply reads that to fall back to a JSON merge patch.
    types = [t for t in PATCH_TYPES if k.merges_strategically or "strategic" not in t]
    return {"content": {t: {"schema": {"$ref": _REF + _PATCH}} for t in types}, "required": True}


def _gvk(group: str, version: str, kind: str) -> Doc:
    return {"group": group, "kind": kind, "version": version}


def _id_prefix(k: Kind) -> str:
    group = k.group.split(".")[0] if k.group else "core"
    return group[:1].upper() + group[1:] + k.version[:1].upper() + k.version[1:]


def _tag(k: Kind) -> str:
    return f"{k.group.split('.')[0] if k.group else 'core'}_{k.version}"


def _item_ops(k: Kind, schema: str, gvk: Doc, ident: str, what: str, tag: str) -> Doc:
    """get / put / patch on one object (or one of its subresources)."""
    return {
        "get": _op("get", gvk, f"read{ident}", f"read {what}", tag, responses=_responses(schema, "200")),
        "put": _op("put", gvk, f"replace{ident}", f"replace {what}", tag, params=_WRITE,
                   body=_body(schema), responses=_responses(schema, "200", "201")),
        "patch": _op("patch", gvk, f"patch{ident}", f"partially update {what}", tag,
                     params=[*_WRITE, _FORCE], body=_patch_body(k), responses=_responses(schema, "200", "201")),
    }


def _deleted(k: Kind) -> str:
    """What DELETE answers, as the kind's strategy says: the object itself when the store returns
    the deleted object (upstream's deleteNamespacedPod answers 200/202 with a Pod), else a Status."""
    return k.definition if k.deletion.returns_object else _STATUS


def _kind_paths(k: Kind) -> dict[str, Doc]:
    prefix = f"/apis/{k.group}/{k.version}" if k.group else f"/api/{k.version}"
    scope = [_NAMESPACE] if k.namespaced else []
    base = f"{prefix}/namespaces/{{namespace}}/{k.plural}" if k.namespaced else f"{prefix}/{k.plural}"
    ns = "Namespaced" if k.namespaced else ""
    ident = f"{_id_prefix(k)}{ns}{k.kind}"
    tag, gvk = _tag(k), _gvk(k.group, k.version, k.kind)
    list_name = _list_name(k)
    paths: dict[str, Doc] = {}

    paths[base] = {
        "get": _op("list", gvk, f"list{ident}", f"list or watch objects of kind {k.kind}", tag,
                   params=_LIST, responses=_responses(list_name, "200")),
        "post": _op("post", gvk, f"create{ident}", f"create a {k.kind}", tag, params=_WRITE,
                    body=_body(k.definition), responses=_responses(k.definition, "200", "201", "202")),
        "delete": _op("deletecollection", gvk, f"delete{_id_prefix(k)}Collection{ns}{k.kind}",
                      f"delete a collection of {k.kind}", tag, params=[*_DELETE, *_LIST],
                      body=_body(_DELETE_OPTIONS), responses=_responses(_STATUS, "200")),
        "parameters": [*scope, _PRETTY],
    }
    item = _item_ops(k, k.definition, gvk, ident, f"the specified {k.kind}", tag)
    item["delete"] = _op("delete", gvk, f"delete{ident}", f"delete a {k.kind}", tag, params=_DELETE,
                         body=_body(_DELETE_OPTIONS), responses=_responses(_deleted(k), "200", "202"))
    paths[f"{base}/{{name}}"] = {**item, "parameters": [_NAME, *scope, _PRETTY]}
    if k.namespaced:
        paths[f"{prefix}/{k.plural}"] = {
            "get": _op("list", gvk, f"list{_id_prefix(k)}{k.kind}ForAllNamespaces",
                       f"list or watch objects of kind {k.kind} in every namespace", tag,
                       params=_LIST, responses=_responses(list_name, "200")),
            "parameters": [_PRETTY],
        }
    item_params = [_NAME, *scope, _PRETTY]
    if "status" in k.subresources:
        ops = _item_ops(k, k.definition, gvk, f"{ident}Status", f"status of the specified {k.kind}", tag)
        paths[f"{base}/{{name}}/status"] = {**ops, "parameters": item_params}
    if "scale" in k.subresources:
        ops = _item_ops(k, _SCALE, _gvk("autoscaling", "v1", "Scale"), f"{ident}Scale",
                        f"scale of the specified {k.kind}", tag)
        paths[f"{base}/{{name}}/scale"] = {**ops, "parameters": item_params}
    if "binding" in k.subresources:
        paths[f"{base}/{{name}}/binding"] = {
            "post": _op("post", _gvk("", "v1", "Binding"), f"create{ident}Binding",
                        f"bind the specified {k.kind} to a node", tag, params=_WRITE,
                        body=_body(_BINDING), responses=_responses(_BINDING, "200", "201", "202")),
            "parameters": item_params,
        }
    if "log" in k.subresources:
        text = {"text/plain": {"schema": {"type": "string"}}}
        paths[f"{base}/{{name}}/log"] = {
            "get": _op("get", gvk, f"read{ident}Log", f"read the log of the specified {k.kind}", tag,
                       params=_LOG, responses={"200": {"description": "OK", "content": text},
                                               "401": {"description": "Unauthorized"}}),
            "parameters": item_params,
        }
    return paths


# --- components ----------------------------------------------------------------------------------

def _list_name(k: Kind) -> str:
    return k.definition.rsplit(".", 1)[0] + "." + k.list_kind


def _list_schema(k: Kind) -> Doc:
    return {
        "type": "object",
        "description": f"A list of {k.kind} objects.",
        "properties": {
            "apiVersion": {"type": "string", "description": "Versioned schema of this representation."},
            "items": {"type": "array", "items": {"$ref": _REF + k.definition},
                      "description": f"The {k.kind} objects."},
            "kind": {"type": "string", "description": "The REST resource type, here "
                     f"{k.list_kind}."},
            "metadata": {"allOf": [{"$ref": _REF + _META + "ListMeta"}], "default": {},
                         "description": "Standard list metadata."},
        },
        "required": ["items"],
        "x-kubernetes-group-version-kind": [_gvk(k.group, k.version, k.list_kind)],
    }


_REF_PATTERN = re.compile(r'"\$ref": ?"#/components/schemas/([^"]+)"')


def reachable(names: Iterable[str], extra: dict[str, Doc] | None = None) -> dict[str, Doc]:
    """`names` and every schema they reference, transitively (from DEFINITIONS, then `extra`)."""
    from control.api.discovery import views

    pool = {**DEFINITIONS, **{n: d for view in views() for n, d in view.schemas.items()}, **(extra or {})}
    out: dict[str, Doc] = {}
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in out or name not in pool:
            continue
        out[name] = pool[name]
        todo.extend(_REF_PATTERN.findall(json.dumps(pool[name])))
    return dict(sorted(out.items()))


def _custom_component(k: Kind) -> Doc:
    """A custom kind's schema as a component: the CRD version's openAPIV3Schema with apiVersion, kind
    and the standard ObjectMeta, marked with its group-version-kind."""
    schema = copy.deepcopy(k.schema or {"type": "object"})
    props = schema.setdefault("properties", {})
    props["apiVersion"] = {"type": "string", "description": "Versioned schema of this representation."}
    props["kind"] = {"type": "string", "description": "The REST resource type this object represents."}
    props["metadata"] = {"allOf": [{"$ref": _REF + _META + "ObjectMeta"}],
                         "description": "Standard object's metadata."}
    schema["x-kubernetes-group-version-kind"] = [_gvk(k.group, k.version, k.kind)]
    return schema


# --- documents -----------------------------------------------------------------------------------

def _build(group: str, version: str, kinds: Sequence[Kind]) -> Doc:
    mine = [k for k in kinds if k.group == group and k.version == version]
    paths: dict[str, Doc] = {}
    roots = [_STATUS, _DELETE_OPTIONS, _PATCH]
    if (group, version) == ("", "v1"):
        roots.append(V1_LIST)  # `kind: List` manifests, as upstream publishes the schema
    lists: dict[str, Doc] = {}
    for k in mine:
        paths.update(_kind_paths(k))
        roots.append(k.definition)
        lists[_list_name(k)] = _list_schema(k)
        if k.custom:
            lists[k.definition] = _custom_component(k)
        if "scale" in k.subresources:
            roots.append(_SCALE)
        if "binding" in k.subresources:
            roots.append(_BINDING)
    roots.extend(lists)
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": dict(sorted(paths.items())),
        "components": {"schemas": reachable(roots, lists)},
    }


_CACHE: dict[str, tuple[Doc, bytes, str]] = {}
_CACHED_GENERATION = -1  # the registry generation _CACHE was built for


def _entry(path: str, kinds: Sequence[Kind] | None) -> tuple[Doc, bytes, str] | None:
    from control import kinds as registry

    global _CACHED_GENERATION
    if kinds is None and _CACHED_GENERATION != registry.generation:
        _CACHE.clear()  # custom kinds changed: every document is built again on demand
        _CACHED_GENERATION = registry.generation
    if kinds is None and path in _CACHE:
        return _CACHE[path]
    actual = _default_kinds(kinds)
    for group, version in _group_versions(actual):
        if gv_path(group, version) == path.strip("/"):
            doc = _build(group, version, actual)
            data = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
            entry = (doc, data, hashlib.sha512(data).hexdigest().upper())
            if kinds is None:
                _CACHE[path] = entry
            return entry
    return None


def group_version_document(path: str, kinds: Sequence[Kind] | None = None) -> Doc | None:
    """The document for "api/v1" or "apis/<group>/<version>", or None if nothing is served there.

    Treat the result as read-only: it is cached and shared.
    """
    entry = _entry(path, kinds)
    return entry[0] if entry else None


def document_bytes(path: str, kinds: Sequence[Kind] | None = None) -> bytes | None:
    """The document serialised as compact JSON: the exact bytes its hash in the root is taken of."""
    entry = _entry(path, kinds)
    return entry[1] if entry else None


def document_hash(path: str, kinds: Sequence[Kind] | None = None) -> str | None:
    """Upper-case hex SHA-512 of `document_bytes(path)`."""
    entry = _entry(path, kinds)
    return entry[2] if entry else None


def root_document(kinds: Sequence[Kind] | None = None) -> Doc:
    """The /openapi/v3 discovery document: one entry per served group-version, with a content hash."""
    out: dict[str, Doc] = {}
    for group, version in _group_versions(_default_kinds(kinds)):
        path = gv_path(group, version)
        out[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={document_hash(path, kinds)}"}
    return {"paths": dict(sorted(out.items()))}
