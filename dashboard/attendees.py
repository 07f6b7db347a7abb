"""Who is on the instructor's board of attendees (the rows are drawn by static/dashboard/board.js
from the pods and traffic records the page already receives).

Guarantees: `board_names(client)` is the workshop's provisioned attendees (`control.roster`, in
the order they were provisioned) when the page's user may list pods in every namespace — asked of
the hub as a SelfSubjectAccessReview, so RBAC decides, as `kubectl auth can-i list pods -A` would —
else []: an attendee's page has no board. No workshop, a hub that refuses or cannot be reached:
[] (the page without a board, never an error page). Without a workshop the hub is not asked.
"""

from __future__ import annotations

from django.conf import settings

from control import errors, roster
from control.client.http import HubClient

REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
LIST_PODS_EVERYWHERE = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                        "spec": {"resourceAttributes": {"verb": "list", "resource": "pods", "namespace": ""}}}


async def may_list_pods_everywhere(client: HubClient) -> bool:
    try:
        review = await client.request("POST", REVIEWS, body=LIST_PODS_EVERYWHERE)
    except errors.ApiError:
        return False
    return bool(((review or {}).get("status") or {}).get("allowed"))


async def board_names(client: HubClient) -> list[str]:
    names = list(roster.attendee_codes(settings.DATA_DIR))
    if not names or not await may_list_pods_everywhere(client):
        return []
    return names
