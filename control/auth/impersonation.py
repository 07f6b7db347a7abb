"""Acting as another user, as kube-apiserver's impersonation filter
(`apiserver/pkg/endpoints/filters/impersonation.go`) decides it from the `Impersonate-*` headers.

Guarantees:
- `requests(headers)` reads, in upstream's order, the user (`Impersonate-User`; a name of the form
  `system:serviceaccount:NS:NAME` with a valid namespace and name is that ServiceAccount), each
  `Impersonate-Group`, each value of each `Impersonate-Extra-KEY` (the key lower-cased and
  %-unescaped) and `Impersonate-Uid`; groups, extras or a uid without a user is a 400 with
  upstream's message (`requested [{Group  devs    }] without impersonating a user`);
- `act_as(user, headers, allowed)` returns `user` unchanged when nothing is asked; otherwise every
  requested item needs verb `impersonate` on `users` / `serviceaccounts` (in the account's
  namespace) / `groups` (API group "") or `userextras/KEY` / `uids` (API group
  `authentication.k8s.io`), named by the value; the first refusal is a 403 with the apiserver's
  message (`users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API
  group "" at the cluster scope`), and nothing of the request runs;
- the user acted as has only what was asked: the name, uid and extras requested, the groups
  requested (a ServiceAccount's `system:serviceaccounts` and `system:serviceaccounts:NS` when no
  group is), plus `system:authenticated` unless `system:authenticated` or `system:unauthenticated`
  is among them (`system:unauthenticated` for `system:anonymous`); nothing of the original user
  is carried over.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable
from urllib.parse import unquote

from control import errors
from control.auth.rbac import Attributes, User, forbidden_message

AUTHENTICATED, UNAUTHENTICATED, ANONYMOUS = "system:authenticated", "system:unauthenticated", "system:anonymous"
AUTHENTICATION_GROUP = "authentication.k8s.io"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
EXTRA_PREFIX = b"impersonate-extra-"
_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

Headers = list[tuple[bytes, bytes]]


@dataclass(frozen=True)
class Wanted:
    """One thing to impersonate: upstream's ObjectReference (kind, namespace, name, apiVersion, fieldPath)."""

    kind: str  # ServiceAccount, User, Group, UserExtra or UID
    name: str
    namespace: str = ""
    key: str = ""  # a UserExtra's key

    def go_value(self) -> str:
        """How Go's %v prints the ObjectReference upstream builds (its seven string fields)."""
        version = f"{AUTHENTICATION_GROUP}/v1" if self.kind in ("UserExtra", "UID") else ""
        return "{" + " ".join((self.kind, self.namespace, self.name, "", version, "", self.key)) + "}"

    def attributes(self) -> Attributes:
        if self.kind == "ServiceAccount":
            return Attributes("impersonate", True, "", "serviceaccounts", namespace=self.namespace, name=self.name)
        if self.kind == "UserExtra":
            return Attributes("impersonate", True, AUTHENTICATION_GROUP, "userextras", subresource=self.key,
                              name=self.name)
        if self.kind == "UID":
            return Attributes("impersonate", True, AUTHENTICATION_GROUP, "uids", name=self.name)
        return Attributes("impersonate", True, "", "users" if self.kind == "User" else "groups", name=self.name)


def service_account(name: str) -> tuple[str, str] | None:
    """upstream `serviceaccount.SplitUsername`: (namespace, name), or None for any other user name."""
    if not name.startswith(SERVICE_ACCOUNT_PREFIX):
        return None
    parts = name[len(SERVICE_ACCOUNT_PREFIX):].split(":")
    if len(parts) != 2:
        return None
    namespace, account = parts
    if len(namespace) > 63 or not _LABEL.match(namespace) or len(account) > 253 or not _SUBDOMAIN.match(account):
        return None
    return namespace, account


_IMPERSONATE = b"impersonate-"


def _values(headers: Headers, name: bytes) -> list[str]:
    return [v.decode("latin-1").strip() for k, v in headers if k.lower() == name]


def requests(headers: Headers) -> list[Wanted]:
    if not any(key[:12].lower() == _IMPERSONATE for key, _ in headers):
        return []  # nearly every request: one look at the names instead of a pass per header kind
    wanted: list[Wanted] = []
    user = (_values(headers, b"impersonate-user") or [""])[0]
    if user:
        account = service_account(user)
        wanted.append(Wanted("ServiceAccount", account[1], account[0]) if account else Wanted("User", user))
    groups = [Wanted("Group", group) for group in _values(headers, b"impersonate-group")]
    extras = [Wanted("UserExtra", value.decode("latin-1").strip(),
                     key=unquote(key[len(EXTRA_PREFIX):].decode("latin-1").lower()))
              for key, value in headers if key.lower().startswith(EXTRA_PREFIX)]
    uid = (_values(headers, b"impersonate-uid") or [""])[0]
    uids = [Wanted("UID", uid)] if uid else []
    wanted += groups + extras + uids
    if (groups or extras or uids) and not user:
        raise errors.BadRequest(f"requested [{' '.join(w.go_value() for w in wanted)}] without impersonating a user")
    return wanted


def refusal(user: User, attrs: Attributes) -> errors.Forbidden:
    return errors.Forbidden(forbidden_message(user, attrs),
                            details={"name": attrs.name, "group": attrs.api_group, "kind": attrs.resource})


def act_as(user: User, headers: Headers, allowed: Callable[[User, Attributes], bool]) -> User:
    """The user the request runs as (see the module's guarantees)."""
    wanted = requests(headers)
    if not wanted:
        return user
    for item in wanted:
        attrs = item.attributes()
        if not allowed(user, attrs):
            raise refusal(user, attrs)
    groups_given = any(item.kind == "Group" for item in wanted)
    name, uid, groups, extra = "", "", [], {}  # type: tuple[str, str, list[str], dict[str, list[str]]]
    for item in wanted:
        if item.kind == "ServiceAccount":
            name = f"{SERVICE_ACCOUNT_PREFIX}{item.namespace}:{item.name}"
            if not groups_given:
                groups = ["system:serviceaccounts", f"system:serviceaccounts:{item.namespace}"]
        elif item.kind == "User":
            name = item.name
        elif item.kind == "Group":
            groups.append(item.name)
        elif item.kind == "UserExtra":
            extra.setdefault(item.key, []).append(item.name)
        else:
            uid = item.name
    if name != ANONYMOUS:
        if AUTHENTICATED not in groups and UNAUTHENTICATED not in groups:
            groups.append(AUTHENTICATED)
    elif UNAUTHENTICATED not in groups:
        groups.append(UNAUTHENTICATED)
    return User(name, uid, tuple(groups), extra)
