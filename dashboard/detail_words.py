"""The words of the pod detail and of the ConfigMaps and Secrets panel (kept apart from
`dashboard.words`, which merges them in, so panels added side by side do not edit one list).

Guarantees: the same shapes as `dashboard.words` (a term as Kubernetes names it and as the
restaurant story tells it; a status word likewise; a UI string), translated lazily (Korean in
`locale/ko/LC_MESSAGES/django.po`).
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _

TERMS: dict[str, tuple[Any, Any]] = {
    "configs": (_("ConfigMaps and Secrets"), _("Recipe cards and the locked spice box")),
    "configmap": (_("ConfigMap"), _("Recipe card")),
    "secret": (_("Secret"), _("Locked spice box")),
}

# What kubectl prints in STATUS for a pod that is stuck or broken (the hub's own table converter
# computes it; `dashboard.presenters.pod_status`).
STATUS_WORDS: dict[str, tuple[Any, Any]] = {
    "ImagePullBackOff": (_("ImagePullBackOff"), _("Ingredient not delivered")),
    "ErrImagePull": (_("ErrImagePull"), _("Ingredient not delivered")),
    "CreateContainerConfigError": (_("CreateContainerConfigError"), _("Recipe card missing")),
    "OOMKilled": (_("OOMKilled"), _("Pot overflowed")),
    "NotReady": (_("NotReady"), _("Not garnished yet")),
}

UI_STRINGS: dict[str, Any] = {
    "no-configs": _("No ConfigMaps or Secrets yet."),
    "no-keys": _("no keys"),
    "values-hidden": _("(values never shown)"),
    "used-by": _("used by"),
    "no-users": _("no pod"),
    "pod-detail": _("Pod detail"),
}
