"""The Swagger 2.0 document the hub publishes at /openapi/v2, as JSON or as gnostic protobuf.

kubectl reads v2 where v3 has nothing for it: to validate the items of a `kind: List` and any kind
whose group-version the hub does not serve (it skips kinds v2 does not know, so `kubectl apply` of a
Job then fails with Kubernetes' own "no matches for kind" instead of "failed to download openapi").

Guarantees:
- The document is derived from the v3 group-version documents (`control.api.openapi`) and so from
  the same kinds and schemas: one path per v3 path, one definition per v3 component, with
  `#/definitions/` references, every operation's `consumes`/`produces`, query/path/body
  parameters and responses, and the `x-kubernetes-*` markers kept.
- Every schema is one kube-openapi's strict v2 reader (kubectl's `proto.NewOpenAPIData`) accepts:
  a `$ref` stands alone (with only description, default and `x-*` beside it), arrays have exactly
  one item schema, types are single primitives, and the v3-only `oneOf`/`anyOf`/`not`/`nullable`
  are folded away as kube-apiserver does for custom resources (a field that keeps unknown fields
  or may be null loses its inner schema, so kubectl never calls a field unknown that the hub takes).
- Built once per registry generation (custom kinds come and go) and served as bytes.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from control.api import openapi
from control.api.protobuf.gnostic import encode_document

Doc = dict[str, Any]

JSON = "application/json"
PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
# What kubectl sends; "@" is not a valid media type character, so answers name the dotted form.
PROTOBUF_ACCEPTED = ("application/com.github.proto-openapi.spec.v2@v1.0+protobuf", PROTOBUF)
_V3_REF = "#/components/schemas/"
_V2_REF = "#/definitions/"
_REF_SIBLINGS = ("description", "default")
_TYPES = ("object", "array", "string", "integer", "number", "boolean")
_SECURITY = {"BearerToken": {"description": "Bearer Token authentication", "type": "apiKey",
                             "name": "authorization", "in": "header"}}


# --- schemas ---------------------------------------------------------------------------------

def _alone(node: Any) -> str | None:
    """The single `$ref` a v3 schema stands for (`$ref`, or `allOf` with one `$ref`), if any."""
    if isinstance(node.get("$ref"), str):
        return node["$ref"]
    parts = node.get("allOf")
    if isinstance(parts, list) and len(parts) == 1 and isinstance(parts[0], dict) \
            and isinstance(parts[0].get("$ref"), str):
        return parts[0]["$ref"]
    return None


def schema(node: Any) -> Doc:
    """One v3 schema as a v2 schema kube-openapi can read."""
    if not isinstance(node, dict):
        return {}
    target = _alone(node)
    if target is not None:
        out: Doc = {"$ref": _V2_REF + target.removeprefix(_V3_REF)}
        out.update({k: node[k] for k in _REF_SIBLINGS if k in node})
        out.update({k: v for k, v in node.items() if k.startswith("x-")})
        return out
    out = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: schema(sub) for name, sub in value.items()}
        elif key == "items":
            if isinstance(value, dict):  # a tuple of item schemas has no v2 form: left out
                out[key] = schema(value)
        elif key == "additionalProperties":
            if isinstance(value, (dict, bool)):
                out[key] = schema(value) if isinstance(value, dict) else value
        elif key not in ("allOf", "oneOf", "anyOf", "not", "nullable", "$ref"):
            out[key] = value
    choices = [c.get("type") for c in node.get("oneOf") or node.get("anyOf") or () if isinstance(c, dict)]
    if "type" not in node and "string" in choices:
        out["type"] = "string"  # Quantity, IntOrString: upstream's v2 calls them strings
    untyped = node.get("nullable") is True or node.get("x-kubernetes-int-or-string") is True
    if untyped:
        out.pop("type", None)  # any type goes: an untyped schema
    if untyped or node.get("x-kubernetes-preserve-unknown-fields") is True:
        # kubectl would check the inner fields strictly: the hub keeps whatever comes here
        out.pop("properties", None)
        out.pop("items", None)
    if out.get("type") == "array" and "items" not in out:
        out.pop("type")  # kubectl cannot read an array without its item schema
    if "type" in out and out["type"] not in _TYPES:
        out.pop("type")  # nor several types, nor "null": kube-openapi would refuse the whole document
    return out


# --- operations ------------------------------------------------------------------------------

def _parameter(node: Doc) -> Doc:
    out: Doc = {k: node[k] for k in ("name", "in", "description", "required") if k in node}
    sub = node.get("schema") or {}
    out.update({k: sub[k] for k in ("type", "uniqueItems", "format") if k in sub})
    return out


def _response_schema(content: Any) -> Doc | None:
    if not isinstance(content, dict) or not content:
        return None
    media = content.get(JSON) or next(iter(content.values()))
    return schema(media.get("schema")) if isinstance(media, dict) and "schema" in media else None


def _operation(op: Doc) -> Doc:
    out: Doc = {k: op[k] for k in ("description", "operationId", "tags") if k in op}
    body = op.get("requestBody")
    params = [_parameter(p) for p in op.get("parameters") or ()]
    if isinstance(body, dict):
        content = body.get("content") or {}
        out["consumes"] = list(content)
        media = next(iter(content.values()), {})
        params.append({"name": "body", "in": "body", "required": bool(body.get("required")),
                       "schema": schema(media.get("schema"))})
    else:
        out["consumes"] = ["*/*"]
    produces: list[str] = []
    responses: Doc = {}
    for code, response in (op.get("responses") or {}).items():
        converted: Doc = {"description": response.get("description", "")}
        found = _response_schema(response.get("content"))
        if found is not None:
            converted["schema"] = found
        produces += [m for m in response.get("content") or {} if m not in produces]
        responses[code] = converted
    out["produces"] = produces or [JSON]
    out["schemes"] = ["https"]
    if params:
        out["parameters"] = params
    out["responses"] = responses
    out.update({k: v for k, v in op.items() if k.startswith("x-")})
    return out


def _path_item(item: Doc) -> Doc:
    out: Doc = {}
    for method, op in item.items():
        if method == "parameters":
            out[method] = [_parameter(p) for p in op]
        elif isinstance(op, dict):
            out[method] = _operation(op)
    return out


# --- the document ----------------------------------------------------------------------------

def build_document(kinds: Any = None) -> Doc:
    """The whole v2 document: every served group-version's paths and definitions."""
    paths: Doc = {}
    definitions: Doc = {}
    for path in openapi.root_document(kinds)["paths"]:
        v3 = openapi.group_version_document(path, kinds) or {}
        for url, item in (v3.get("paths") or {}).items():
            paths[url] = _path_item(item)
        for name, component in ((v3.get("components") or {}).get("schemas") or {}).items():
            definitions.setdefault(name, schema(component))
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": dict(sorted(paths.items())),
        "definitions": dict(sorted(definitions.items())),
        "securityDefinitions": _SECURITY,
        "security": [{"BearerToken": []}],
    }


_CACHE: dict[int, tuple[bytes, bytes, str]] = {}


def _cached() -> tuple[bytes, bytes, str]:
    from control import kinds as registry

    generation = registry.generation
    if generation not in _CACHE:
        _CACHE.clear()  # custom kinds changed: the old document is gone for good
        document = build_document()
        data = json.dumps(document, separators=(",", ":")).encode()
        etag = '"' + hashlib.sha512(data).hexdigest().upper() + '"'
        _CACHE[generation] = (data, encode_document(document), etag)
    return _CACHE[generation]


def wants_protobuf(accept: str) -> bool:
    """True when the Accept header names the gnostic protobuf before (or instead of) JSON."""
    for clause in accept.split(","):
        media = clause.split(";", 1)[0].strip().lower()
        if media in PROTOBUF_ACCEPTED:
            return True
        if media in (JSON, "application/*", "*/*"):
            return False
    return False


def document_reply(accept: str) -> tuple[bytes, str, str]:
    """(body, content type, ETag) of /openapi/v2 for this Accept header."""
    data, proto, etag = _cached()
    if wants_protobuf(accept):
        return proto, PROTOBUF, etag
    return data, JSON, etag
