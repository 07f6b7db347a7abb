"""URL map of the Django side (the dashboard, as it arrives). The Kubernetes API paths never
reach Django: `control.asgi` hands them to the hub's own ASGI app."""

from django.http import JsonResponse

from control import errors

urlpatterns: list = []


def not_found(request, exception=None):
    return JsonResponse(errors.NotFound("the server could not find the requested resource").status(), status=404)


handler404 = "control.urls.not_found"
