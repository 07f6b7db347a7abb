"""The join panel's address, for the dashboard's template (`{% join_address as url %}`): the join
page at the address attendees can reach (`dashboard.reach`), or "" when the hub listens on loopback
only and no attendee can reach it."""

from __future__ import annotations

from typing import Any

from django import template

from dashboard import reach

register = template.Library()


@register.simple_tag(takes_context=True)
def join_address(context: Any) -> str:
    return "" if reach.loopback_only() else reach.absolute(context["request"], "/join/")
