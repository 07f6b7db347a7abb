"""URL map of the Django side: the dashboard. The Kubernetes API paths never reach Django:
`control.asgi` hands them to the hub's own ASGI app."""

from django.http import JsonResponse
from django.urls import include, path

from control import errors

urlpatterns: list = [
    path("", include("dashboard.urls")),
]


def not_found(request, exception=None):
    return JsonResponse(errors.NotFound("the server could not find the requested resource").status(), status=404)


handler404 = "control.urls.not_found"
