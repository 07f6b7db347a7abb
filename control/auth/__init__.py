"""Authentication and authorization of the hub's requests, as kube-apiserver does them.

Guarantees: one switch, `enabled()` (setting `KK_AUTHENTICATION=on|off`, default on, as kube-apiserver; the dashboard logs its users in): when off,
every request is made by `system:masters` and nothing is refused; the modules here never touch the
HTTP layer themselves (control.api calls `gate`), and RBAC rules are evaluated as upstream's
`plugin/pkg/auth/authorizer/rbac` does.
"""

from __future__ import annotations

from django.conf import settings

from control import config


def enabled() -> bool:
    value = getattr(settings, "KK_AUTHENTICATION", None) or config.text("KK_AUTHENTICATION")
    return str(value).lower() not in ("off", "0", "false", "no")
