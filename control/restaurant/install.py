"""Puts the restaurant's kinds on a hub, over HTTP like any other client.

Guarantees: `install_crds(url)` creates each CustomResourceDefinition that is missing and leaves
one that exists as it is (a user's edits survive a restart), then waits until every one reports
the `Established` condition, so a caller may create Orders as soon as it returns. It raises
`InstallError` with the hub's message when the hub refuses a definition or does not establish it
in time. Synchronous on purpose: `runcluster` calls it from its plain main thread.
"""

from __future__ import annotations

import time
from typing import Any, Iterable

import httpx

from control import errors
from control.client.component import user_agent
from control.kinds.crd import established
from control.restaurant.manifests import CRDS

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


class InstallError(RuntimeError):
    """The hub refused or did not establish a definition."""


def install_crds(url: str, *, crds: Iterable[dict[str, Any]] = CRDS, timeout: float = 30.0,
                 transport: httpx.BaseTransport | None = None, token: str | None = None) -> list[str]:
    """Create-or-leave each definition, then wait until all are Established; returns their names.
    `token`: whose identity (default: the operator's, `control.auth.tokenfile.operator_token`)."""
    try:
        return _install(url, crds, timeout, transport, token)
    except httpx.HTTPError as exc:
        raise InstallError(f"cannot reach the hub at {url}: {exc or type(exc).__name__}") from None


def _install(url: str, crds: Iterable[dict[str, Any]], timeout: float,
             transport: httpx.BaseTransport | None, token: str | None = None) -> list[str]:
    names = []
    from django.conf import settings

    from control.auth.tokenfile import bearer, operator_token

    token = operator_token(settings.DATA_DIR) if token is None else token
    headers = {"User-Agent": user_agent("kitchen-installer"), **bearer(token)}
    with httpx.Client(base_url=url.rstrip("/"), headers=headers,
                      timeout=10.0, transport=transport) as http:
        for crd in crds:
            name = crd["metadata"]["name"]
            response = http.post(CRD_PATH, json=crd)
            if response.status_code not in (201, 200, 409):
                refusal = errors.from_status(response.content, response.status_code)
                raise InstallError(f"the hub refused {name}: {response.status_code} {refusal.message}")
            names.append(name)
        deadline = time.monotonic() + timeout
        waiting = list(names)
        while waiting:
            waiting = [n for n in waiting if not _is_established(http, n)]
            if waiting and time.monotonic() > deadline:
                raise InstallError(f"not Established after {timeout:.0f} s: {', '.join(waiting)}")
            if waiting:
                time.sleep(0.1)
    return names


def _is_established(http: httpx.Client, name: str) -> bool:
    response = http.get(f"{CRD_PATH}/{name}")
    return response.status_code == 200 and established(response.json())
