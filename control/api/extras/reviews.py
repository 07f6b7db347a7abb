"""The review APIs: authorization.k8s.io/v1 SelfSubjectAccessReview, SubjectAccessReview,
LocalSubjectAccessReview and SelfSubjectRulesReview (`kubectl auth can-i [--list]`),
authentication.k8s.io/v1 SelfSubjectReview (`kubectl auth whoami`) and TokenReview.

Guarantees: each is create-only and stores nothing (as upstream); the answer is the request
echoed with its `status` filled in, 201; the SubjectAccessReview's spec must name a user or a
group and exactly one of resourceAttributes / nonResourceAttributes (422 otherwise, upstream's
messages); a rules review lists every rule that applies to the caller in the namespace (cluster
rules included), `incomplete: false`. Who may ask is the gate's (RBAC) decision, made before.
"""

from __future__ import annotations

from typing import Any

from control import errors
from control.api.request import Request, Route, decode
from control.api.responses import Reply, json_response
from control.auth import gate
from control.auth.authenticate import Authenticator, user_info
from control.auth.policystore import cache
from control.auth.rbac import Attributes, User
from control.storage.db import run_db

AUTHZ = "/apis/authorization.k8s.io/v1"
AUTHN = "/apis/authentication.k8s.io/v1"
POST = frozenset({"POST"})


def _body(request: Request, kind: str, api_version: str) -> dict[str, Any]:
    body = decode(request.body, request.content_type or "application/json", request.decoded)
    if not isinstance(body, dict):
        raise errors.BadRequest(f"the object provided is unrecognized (must be of type {kind})")
    if body.get("kind") not in (None, "", kind):
        raise errors.BadRequest(f"the kind in the data ({body.get('kind')}) does not match the expected kind ({kind})")
    body.update(apiVersion=api_version, kind=kind)
    body.setdefault("metadata", {})
    body["metadata"].setdefault("creationTimestamp", None)
    return body


def _invalid(kind: str, group: str, causes: list[dict[str, str]]) -> errors.ApiError:
    return errors.invalid(kind, group, "", causes)


def attributes_of(spec: dict[str, Any], kind: str) -> Attributes:
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if bool(resource) == bool(non_resource):
        reason = "cannot be specified in combination with resourceAttributes" if resource else \
            "exactly one of nonResourceAttributes or resourceAttributes must be specified"
        raise _invalid(kind, "authorization.k8s.io", [{
            "reason": "FieldValueRequired" if not resource else "FieldValueInvalid",
            "message": f"Required value: {reason}" if not resource else f"Invalid value: {reason}",
            "field": "spec.resourceAttributes" if not resource else "spec.nonResourceAttributes"}])
    if resource:
        return Attributes(verb=str(resource.get("verb", "")), resource_request=True,
                          api_group=str(resource.get("group", "")), resource=str(resource.get("resource", "")),
                          subresource=str(resource.get("subresource", "")),
                          namespace=str(resource.get("namespace", "")), name=str(resource.get("name", "")))
    return Attributes(verb=str(non_resource.get("verb", "")), resource_request=False,
                      path=str(non_resource.get("path", "")))


async def _decide(body: dict[str, Any], user: User, kind: str) -> Reply:
    attrs = attributes_of(body.get("spec") or {}, kind)
    allowed = await gate.allowed(user, attrs)
    body["status"] = {"allowed": allowed} if allowed else {"allowed": False}
    return json_response(body, 201)


async def self_subject_access_review(request: Request) -> Reply:
    request.tag = {"verb": "create", "resource": "selfsubjectaccessreviews"}
    body = _body(request, "SelfSubjectAccessReview", "authorization.k8s.io/v1")
    return await _decide(body, request.user, "SelfSubjectAccessReview")


def _subject(spec: dict[str, Any], kind: str) -> User:
    if not spec.get("user") and not spec.get("groups"):
        raise _invalid(kind, "authorization.k8s.io", [{"reason": "FieldValueInvalid", "field": "spec.user",
                                                       "message": 'Invalid value: "": at least one of user or '
                                                                  "group must be specified"}])
    groups = spec.get("groups") or []
    return User(str(spec.get("user") or ""), str(spec.get("uid") or ""),
                tuple(str(g) for g in groups if isinstance(g, str)))


async def subject_access_review(request: Request) -> Reply:
    request.tag = {"verb": "create", "resource": "subjectaccessreviews"}
    body = _body(request, "SubjectAccessReview", "authorization.k8s.io/v1")
    return await _decide(body, _subject(body.get("spec") or {}, "SubjectAccessReview"), "SubjectAccessReview")


async def local_subject_access_review(request: Request, namespace: str) -> Reply:
    request.tag = {"verb": "create", "resource": "localsubjectaccessreviews", "namespace": namespace}
    body = _body(request, "LocalSubjectAccessReview", "authorization.k8s.io/v1")
    spec = body.get("spec") or {}
    resource = spec.get("resourceAttributes") or {}
    if resource.get("namespace", namespace) != namespace or spec.get("nonResourceAttributes"):
        raise _invalid("LocalSubjectAccessReview", "authorization.k8s.io", [{
            "reason": "FieldValueInvalid", "field": "spec.resourceAttributes.namespace",
            "message": f"Invalid value: {resource.get('namespace')!r}: must match metadata.namespace"}])
    resource["namespace"] = namespace
    return await _decide(body, _subject(spec, "LocalSubjectAccessReview"), "LocalSubjectAccessReview")


def _rule_shape(rule: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if rule.get("nonResourceURLs"):
        return "non", {"verbs": list(rule.get("verbs") or []), "nonResourceURLs": list(rule["nonResourceURLs"])}
    out = {"verbs": list(rule.get("verbs") or [])}
    for key in ("apiGroups", "resources", "resourceNames"):
        if rule.get(key):
            out[key] = list(rule[key])
    return "resource", out


async def self_subject_rules_review(request: Request) -> Reply:
    request.tag = {"verb": "create", "resource": "selfsubjectrulesreviews"}
    body = _body(request, "SelfSubjectRulesReview", "authorization.k8s.io/v1")
    namespace = str((body.get("spec") or {}).get("namespace") or "")
    policy = await cache().current()
    resource_rules: list[dict[str, Any]] = []
    non_resource_rules: list[dict[str, Any]] = []
    for rule in policy.rules_of(request.user, namespace):  # memoized per snapshot, as authorization reads it
        which, shaped = _rule_shape(rule)
        target = non_resource_rules if which == "non" else resource_rules
        if shaped not in target:
            target.append(shaped)
    body["status"] = {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": False}
    return json_response(body, 201)


async def self_subject_review(request: Request) -> Reply:
    request.tag = {"verb": "create", "resource": "selfsubjectreviews"}
    body = _body(request, "SelfSubjectReview", "authentication.k8s.io/v1")
    body["status"] = {"userInfo": user_info(request.user)}
    return json_response(body, 201)


async def token_review(request: Request) -> Reply:
    request.tag = {"verb": "create", "resource": "tokenreviews"}
    body = _body(request, "TokenReview", "authentication.k8s.io/v1")
    spec = body.get("spec") or {}
    token = spec.get("token")
    if not isinstance(token, str) or not token:
        raise _invalid("TokenReview", "authentication.k8s.io", [{"reason": "FieldValueRequired",
                                                                "field": "spec.token", "message": "Required value"}])
    authenticator: Authenticator = gate.authenticator()
    try:
        user = await run_db(authenticator.user, f"Bearer {token}", gate._lookup)
    except errors.Unauthorized:
        body["status"] = {"user": {}}
    else:
        body["status"] = {"authenticated": True, "user": user_info(user),
                          "audiences": list(spec.get("audiences") or ["https://kubernetes.default.svc.cluster.local"])}
    return json_response(body, 201)


ROUTES: tuple[Route, ...] = (
    Route(AUTHZ + "/selfsubjectaccessreviews", self_subject_access_review, POST),
    Route(AUTHZ + "/subjectaccessreviews", subject_access_review, POST),
    Route(AUTHZ + "/namespaces/(?P<namespace>[^/]+)/localsubjectaccessreviews", local_subject_access_review, POST),
    Route(AUTHZ + "/selfsubjectrulesreviews", self_subject_rules_review, POST),
    Route(AUTHN + "/selfsubjectreviews", self_subject_review, POST),
    Route(AUTHN + "/tokenreviews", token_review, POST),
)
