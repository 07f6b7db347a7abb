"""URL map of the hub (the Kubernetes API paths) and, later, the dashboard."""

from django.urls import re_path

from control.api import views

handler404 = "control.api.views.not_found"

urlpatterns = [
    re_path(r"^api/?$", views.api_versions),
    re_path(r"^apis/?$", views.api_groups),
    re_path(r"^version/?$", views.version),
    re_path(r"^(?:healthz|readyz|livez)/?$", views.healthz),
    re_path(r"^openapi/v3/?$", views.openapi_root),
    re_path(r"^openapi/v3/(?P<path>.+)$", views.openapi_group_version),
    re_path(r"^api/v1/?$", views.resource_list),
    re_path(r"^api/v1/(?P<rest>.+)$", views.resource),
    re_path(r"^apis/(?P<group>[^/]+)/?$", views.api_group),
    re_path(r"^apis/(?P<group>[^/]+)/(?P<version>[^/]+)/?$", views.resource_list),
    re_path(r"^apis/(?P<group>[^/]+)/(?P<version>[^/]+)/(?P<rest>.+)$", views.resource),
]
